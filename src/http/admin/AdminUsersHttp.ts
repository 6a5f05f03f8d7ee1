/** Handlers of user administration (docs/rules.md#user-administration). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { AdminUsers } from "../../services/admin/AdminUsers"
import { Api } from "../Api"
import { makeAdminStepUp } from "./AdminStepUp"
import { AdminAuthentication, CurrentUser } from "../identity/Authentication"
import { AppConfig } from "../../layers/AppConfig"
import { TwoFactor } from "../../services/identity/TwoFactor"
import { buildOnly } from "../platform/RequestContext"

export const AdminUsersLive = HttpApiBuilder.group(Api, "adminUsers", Effect.fnUntraced(function*(handlers) {
  const adminUsers = yield* AdminUsers
  const stepUp = yield* makeAdminStepUp

  return handlers
    .handle("list", ({ urlParams }) => adminUsers.list(urlParams))
    .handle("ban", ({ headers, path, payload }) =>
      Effect.gen(function*() {
        yield* stepUp(headers)
        const { user: admin } = yield* CurrentUser
        const sessionsRevoked = yield* adminUsers.ban(admin.id, path.id, payload.reason)
        return { message: "User banned", sessionsRevoked }
      }))
    .handle("unban", ({ headers, path }) =>
      Effect.gen(function*() {
        yield* stepUp(headers)
        const { user: admin } = yield* CurrentUser
        yield* adminUsers.unban(admin.id, path.id)
        return { message: "User unbanned" }
      }))
    .handle("adjustBalance", ({ headers, path, payload }) =>
      Effect.gen(function*() {
        yield* stepUp(headers)
        const { user: admin } = yield* CurrentUser
        const posted = yield* adminUsers.adjustBalance(admin.id, path.id, payload)
        return { userId: path.id, balanceCents: posted.balanceAfterCents, transactionId: posted.transactionId }
      }))
})).pipe(buildOnly([AppConfig, AdminAuthentication, TwoFactor, AdminUsers]))
