/** Handlers of a user's deposits (docs/rules.md#deposits). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { type DepositId, DepositInitiated, PAYMENT_METHODS } from "../../schema/money/Deposit"
import { Deposits } from "../../services/money/Deposits"
import { Api } from "../Api"
import { Authentication, CurrentUser } from "../identity/Authentication"
import { idempotent } from "../platform/Idempotent"
import type { PageRequest } from "../../schema/platform/Pagination"
import { Idempotency } from "../../services/platform/Idempotency"
import { Identities } from "../../services/identity/Identities"
import { buildOnly } from "../platform/RequestContext"

export const DepositsLive = HttpApiBuilder.group(Api, "deposits", Effect.fnUntraced(function*(handlers) {
  const deposits = yield* Deposits
  // Both paths are one operation: a retry may use either.
  const initiate = ({ headers, payload }: {
    readonly headers: { readonly "idempotency-key"?: string | undefined }
    readonly payload: Parameters<typeof deposits.initiate>[1]
  }) =>
    Effect.flatMap(CurrentUser, ({ user }) =>
      idempotent(
        { userId: user.id, headers, operation: "deposits.initiate", input: { payload }, response: DepositInitiated },
        deposits.initiate(user.id, payload)
      ))
  const list = ({ urlParams }: { readonly urlParams: PageRequest }) =>
    Effect.flatMap(CurrentUser, ({ user }) => deposits.list(user.id, urlParams))
  const cancel = ({ path }: { readonly path: { readonly id: DepositId } }) =>
    Effect.flatMap(CurrentUser, ({ user }) => deposits.cancel(user.id, path.id))
  return handlers
    .handle("initiate", initiate)
    .handle("initiateAlias", initiate)
    .handle("list", list)
    .handle("listAlias", list)
    .handle("cancel", cancel)
    .handle("cancelAlias", cancel)
    .handle("methods", () => Effect.succeed({ methods: PAYMENT_METHODS }))
})).pipe(buildOnly([Authentication, Identities, Idempotency, Deposits]))
