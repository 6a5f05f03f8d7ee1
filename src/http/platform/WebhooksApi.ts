/**
 * Outbound webhook registration (docs/rules.md#webhook-registration), with the admin bearer
 * token, and each receiver's delivery log (deliveries newest first, each with its attempts).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ListPage, PageQuery } from "../../schema/platform/Pagination"
import { Webhook, WebhookDeliveryLog, WebhookId, WebhookRegistration } from "../../schema/platform/Webhook"
import { AdminToken } from "./AdminToken"
import { documented } from "./OpenApiDocs"

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .annotate(
    OpenApi.Description,
    "Outbound webhooks: receivers of deposit, withdrawal and battle events. Needs the admin token " +
      "(`Authorization: Bearer <ADMIN_TOKEN>`)."
  )
  .add(
    HttpApiEndpoint.post("register", "/webhooks").setPayload(WebhookRegistration).addSuccess(Webhook, { status: 201 })
      .pipe(documented("Register a receiver of deposit.confirmed, withdrawal.completed, battle.finished", "Needs the " +
        "admin token (`Authorization: Bearer <ADMIN_TOKEN>`)."))
  )
  .add(
    HttpApiEndpoint.get("list", "/webhooks").addSuccess(Schema.Struct({ webhooks: Schema.Array(Webhook) }))
      .pipe(documented("List webhook receivers", "Needs the admin token: every registered receiver."))
  )
  .add(
    HttpApiEndpoint.del("remove", "/webhooks/:id").setPath(Schema.Struct({ id: WebhookId }))
      .addSuccess(Schema.Struct({ message: Schema.String }))
      .pipe(documented("Remove a webhook receiver", "Needs the admin token: stops deliveries to the receiver."))
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhooks/:id/deliveries").setPath(Schema.Struct({ id: WebhookId }))
      .setUrlParams(PageQuery).addSuccess(ListPage("deliveries", WebhookDeliveryLog))
      .pipe(documented("A receiver's deliveries, newest first, with every attempt's status code or error", "Needs " +
        "the admin token (`Authorization: Bearer <ADMIN_TOKEN>`)."))
  )
  .middleware(AdminToken)
{}
