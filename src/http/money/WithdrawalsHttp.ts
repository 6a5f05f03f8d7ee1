/** Handlers of a user's withdrawals (docs/rules.md#withdrawals). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { type WithdrawalRequest, WithdrawalRequested } from "../../schema/money/Withdrawal"
import { PixKeyOwners } from "../../services/money/PixKeyOwners"
import { Withdrawals } from "../../services/money/Withdrawals"
import { Api } from "../Api"
import { Authentication, CurrentUser } from "../identity/Authentication"
import { idempotent } from "../platform/Idempotent"
import { Idempotency } from "../../services/platform/Idempotency"
import { Identities } from "../../services/identity/Identities"
import { buildOnly } from "../platform/RequestContext"

/** `POST /withdrawals`: the signed-in user's withdrawal, once per Idempotency-Key, then maybe paid out at once. */
const request = Effect.fnUntraced(function*(
  withdrawals: Withdrawals,
  pixKeyOwners: PixKeyOwners,
  headers: { readonly "idempotency-key"?: string | undefined },
  payload: WithdrawalRequest
) {
  const { user } = yield* CurrentUser
  // Under BR, whose PIX key it is (docs/rules.md#pix-key-owner): asked before any transaction opens.
  const keyOwner = yield* pixKeyOwners.check(user.id, payload.paymentDetails)
  // The automatic payout (docs/rules.md#automatic-payout) runs once the request has committed, with its
  // key if it has one, and its lock is released: the answer shows the withdrawal after it.
  const answer = yield* idempotent(
    {
      userId: user.id,
      headers,
      operation: "withdrawals.request",
      // A retry brings a fresh 2FA code: the code is not part of what makes it the same request.
      input: { payload: { ...payload, twoFactorCode: undefined } },
      response: WithdrawalRequested
    },
    withdrawals.request(user.id, payload, keyOwner)
  )
  return yield* withdrawals.payAutomatically(user.id, answer)
})

export const WithdrawalsLive = HttpApiBuilder.group(Api, "withdrawals", Effect.fnUntraced(function*(handlers) {
  const withdrawals = yield* Withdrawals
  const pixKeyOwners = yield* PixKeyOwners
  return handlers
    .handle("request", ({ headers, payload }) => request(withdrawals, pixKeyOwners, headers, payload))
    .handle("list", ({ urlParams }) => Effect.flatMap(CurrentUser, ({ user }) => withdrawals.list(user.id, urlParams)))
    .handle("cancel", ({ path }) => Effect.flatMap(CurrentUser, ({ user }) => withdrawals.cancel(user.id, path.id)))
})).pipe(buildOnly([Authentication, Identities, Idempotency, PixKeyOwners, Withdrawals]))
