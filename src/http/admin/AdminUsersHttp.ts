/** Handlers of user administration (docs/rules.md#user-administration). */
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { BadRequest } from "../../schema/platform/Errors"
import { Audit } from "../../services/admin/Audit"
import { Ledger } from "../../services/money/Ledger"
import { Realtime } from "../../services/platform/Realtime"
import { Sessions } from "../../services/identity/Sessions"
import { inTransaction } from "../../services/platform/SqlRows"
import { Users } from "../../services/identity/Users"
import { Api } from "../Api"
import { makeAdminStepUp } from "./AdminStepUp"
import { CurrentUser } from "../identity/Authentication"

export const AdminUsersLive = HttpApiBuilder.group(Api, "adminUsers", (handlers) =>
  Effect.gen(function*() {
    const users = yield* Users
    const sessions = yield* Sessions
    const audit = yield* Audit
    const ledger = yield* Ledger
    const sql = yield* SqlClient.SqlClient
    const realtime = yield* Realtime
    const stepUp = yield* makeAdminStepUp

    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(users.list(urlParams), (page) =>
          Effect.map(
            Effect.forEach(page.users, (user) =>
              Effect.map(sessions.list(user.id), (active) => ({ ...user, activeSessions: active.length }))),
            (listed) => ({ ...page, users: listed })
          )))
      .handle("ban", ({ path, payload }) =>
        Effect.gen(function*() {
          const { user: admin } = yield* CurrentUser
          if (admin.id === path.id) return yield* new BadRequest({ message: "You cannot ban yourself" })
          yield* users.ban(path.id, payload.reason)
          yield* audit.record({
            userId: path.id,
            action: "USER_BANNED",
            entityType: "User",
            entityId: path.id,
            metadata: { reason: payload.reason, adminId: String(admin.id) }
          })
          const sessionsRevoked = yield* sessions.revokeAll(path.id)
          return { message: "User banned", sessionsRevoked }
        }))
      .handle("unban", ({ path }) =>
        Effect.gen(function*() {
          const { user: admin } = yield* CurrentUser
          yield* users.unban(path.id)
          yield* audit.record({
            userId: path.id,
            action: "USER_UNBANNED",
            entityType: "User",
            entityId: path.id,
            metadata: { adminId: String(admin.id) }
          })
          return { message: "User unbanned" }
        }))
      .handle("adjustBalance", ({ headers, path, payload }) =>
        Effect.gen(function*() {
          yield* stepUp(headers)
          const { user: admin } = yield* CurrentUser
          yield* users.findById(path.id)
          const posted = yield* Effect.gen(function*() {
            const posting = yield* ledger.adjust({ userId: path.id, amountCents: payload.amountCents, reason: payload.reason })
            yield* audit.record({
              userId: path.id,
              action: "ADMIN_ADJUST_BALANCE",
              entityType: "Transaction",
              entityId: posting.transactionId,
              metadata: { amountCents: String(payload.amountCents), reason: payload.reason, adminId: String(admin.id) }
            })
            return posting
          }).pipe(inTransaction(sql))
          yield* realtime.balanceChanged(path.id, posted.balanceAfterCents)
          return { userId: path.id, balanceCents: posted.balanceAfterCents, transactionId: posted.transactionId }
        }))
  }))
