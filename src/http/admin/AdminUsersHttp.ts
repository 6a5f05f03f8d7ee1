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
      stepUp(headers).pipe(
        Effect.zipRight(CurrentUser),
        Effect.flatMap(({ user: admin }) => adminUsers.ban(admin.id, path.id, payload.reason)),
        Effect.map((sessionsRevoked) => ({ message: "User banned", sessionsRevoked }))
      ))
    .handle("unban", ({ headers, path }) =>
      stepUp(headers).pipe(
        Effect.zipRight(CurrentUser),
        Effect.flatMap(({ user: admin }) => adminUsers.unban(admin.id, path.id)),
        Effect.as({ message: "User unbanned" })
      ))
    .handle("adjustBalance", ({ headers, path, payload }) =>
      stepUp(headers).pipe(
        Effect.zipRight(CurrentUser),
        Effect.flatMap(({ user: admin }) => adminUsers.adjustBalance(admin.id, path.id, payload)),
        Effect.map((posted) => ({
          userId: path.id,
          balanceCents: posted.balanceAfterCents,
          transactionId: posted.transactionId
        }))
      ))
})).pipe(buildOnly([AppConfig, AdminAuthentication, TwoFactor, AdminUsers]))
