/** Handlers of a user's withdrawals (D9). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Withdrawals } from "../services/Withdrawals"
import { Api } from "./Api"
import { CurrentUser } from "./Authentication"

export const WithdrawalsLive = HttpApiBuilder.group(Api, "withdrawals", (handlers) =>
  Effect.gen(function*() {
    const withdrawals = yield* Withdrawals
    return handlers
      .handle("request", ({ payload }) =>
        Effect.gen(function*() {
          const { user } = yield* CurrentUser
          const created = yield* withdrawals.request(user.id, payload)
          return { id: created.id, amountCents: created.amountCents, status: created.status, requestedAt: created.requestedAt }
        }))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentUser, ({ user }) => withdrawals.list(user.id, urlParams)))
      .handle("cancel", ({ path }) => Effect.flatMap(CurrentUser, ({ user }) => withdrawals.cancel(user.id, path.id)))
  }))
