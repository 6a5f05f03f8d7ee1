import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { WebhookDelivery } from "../../services/platform/WebhookDelivery"
import { Webhooks } from "../../services/platform/Webhooks"
import { Api } from "../Api"
import { AdminToken } from "./AdminToken"
import { buildOnly } from "./RequestContext"

export const WebhooksLive = HttpApiBuilder.group(Api, "webhooks", Effect.fnUntraced(function*(handlers) {
  const webhooks = yield* Webhooks
  const delivery = yield* WebhookDelivery
  return handlers
    .handle("register", ({ payload }) => webhooks.register(payload))
    .handle("list", () => Effect.map(webhooks.list(), (list) => ({ webhooks: list })))
    .handle("remove", ({ path }) => Effect.as(webhooks.remove(path.id), { message: "Webhook deleted" }))
    .handle("deliveries", ({ path, urlParams }) =>
      delivery.deliveries(path.id, urlParams))
})).pipe(buildOnly([AdminToken, WebhookDelivery, Webhooks]))
