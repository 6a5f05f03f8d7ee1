/** Handlers of raffles (docs/rules.md#raffles). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Raffles } from "../../services/raffles/Raffles"
import { Api } from "../Api"
import { Authentication, CurrentUser } from "../identity/Authentication"
import { idempotent } from "../platform/Idempotent"
import { TicketPurchase } from "./RafflesApi"
import { Idempotency } from "../../services/platform/Idempotency"
import { Identities } from "../../services/identity/Identities"
import { buildOnly } from "../platform/RequestContext"

export const RafflesLive = HttpApiBuilder.group(Api, "raffles", Effect.fnUntraced(function*(handlers) {
  const raffles = yield* Raffles
  return handlers
    .handle("list", ({ urlParams }) => Effect.flatMap(CurrentUser, ({ user }) => raffles.list(urlParams, user.id)))
    .handle("get", ({ path }) => Effect.flatMap(CurrentUser, ({ user }) => raffles.get(path.id, user.id)))
    .handle("buy", ({ headers, path, payload }) =>
      Effect.flatMap(CurrentUser, ({ user }) =>
        idempotent(
          { userId: user.id, headers, operation: "raffles.buy", input: { path, payload }, response: TicketPurchase },
          raffles.buy(user.id, path.id, payload.count)
        )))
})).pipe(buildOnly([Authentication, Identities, Idempotency, Raffles]))
