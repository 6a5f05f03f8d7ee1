/** Handlers of withdrawal administration (docs/rules.md#withdrawal-payout). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Withdrawals } from "../../services/money/Withdrawals"
import { Api } from "../Api"
import { makeAdminStepUp } from "./AdminStepUp"
import { AdminAuthentication, CurrentUser } from "../identity/Authentication"
import { AppConfig } from "../../layers/AppConfig"
import { TwoFactor } from "../../services/identity/TwoFactor"
import { buildOnly } from "../platform/RequestContext"

export const AdminWithdrawalsLive = HttpApiBuilder.group(Api, "adminWithdrawals", Effect.fnUntraced(function*(handlers) {
  const withdrawals = yield* Withdrawals
  const stepUp = yield* makeAdminStepUp
  return handlers
    .handle("list", ({ urlParams }) => withdrawals.adminList(urlParams))
    .handle("approve", ({ headers, path }) =>
      Effect.zipRight(stepUp(headers), Effect.flatMap(CurrentUser, ({ user }) => withdrawals.approve(user.id, path.id))))
    .handle("reject", ({ headers, path, payload }) =>
      Effect.zipRight(
        stepUp(headers),
        Effect.flatMap(CurrentUser, ({ user }) => withdrawals.reject(user.id, path.id, payload.reason))
      ))
    .handle("reconcile", ({ path }) => Effect.flatMap(CurrentUser, ({ user }) => withdrawals.reconcile(user.id, path.id)))
})).pipe(buildOnly([AppConfig, AdminAuthentication, TwoFactor, Withdrawals]))
