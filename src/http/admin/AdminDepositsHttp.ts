/** Handlers of deposit administration (docs/rules.md#admin-deposit-confirmation). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Deposits } from "../../services/money/Deposits"
import { Api } from "../Api"
import { makeAdminStepUp } from "./AdminStepUp"
import { AdminAuthentication, CurrentUser } from "../identity/Authentication"
import { AppConfig } from "../../layers/AppConfig"
import { TwoFactor } from "../../services/identity/TwoFactor"
import { buildOnly } from "../platform/RequestContext"

export const AdminDepositsLive = HttpApiBuilder.group(Api, "adminDeposits", Effect.fnUntraced(function*(handlers) {
  const deposits = yield* Deposits
  const stepUp = yield* makeAdminStepUp
  return handlers
    .handle("list", ({ urlParams }) => deposits.adminList(urlParams))
    .handle("confirm", ({ headers, path }) =>
      Effect.zipRight(stepUp(headers), Effect.flatMap(CurrentUser, ({ user }) => deposits.confirmByAdmin(user.id, path.id))))
})).pipe(buildOnly([AppConfig, AdminAuthentication, TwoFactor, Deposits]))
