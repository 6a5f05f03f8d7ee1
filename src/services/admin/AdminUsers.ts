/**
 * What administrators do to users (docs/rules.md#user-administration): the list with each user's active
 * sessions, bans (never of oneself; every session of the banned user revoked), unbans and balance
 * adjustments, each audited.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { CannotBanSelf } from "../../schema/identity/User"
import type { UserId } from "../../schema/platform/Ids"
import { Sessions } from "../identity/Sessions"
import { Users } from "../identity/Users"
import { Ledger } from "../money/Ledger"
import { Realtime } from "../platform/Realtime"
import { inTransaction } from "../platform/SqlRows"
import { Audit } from "./Audit"

export class AdminUsers extends Effect.Service<AdminUsers>()("app/AdminUsers", {
  effect: Effect.gen(function*() {
    const users = yield* Users
    const sessions = yield* Sessions
    const audit = yield* Audit
    const ledger = yield* Ledger
    const realtime = yield* Realtime
    const transaction = inTransaction(yield* SqlClient.SqlClient)

    const list = Effect.fn("AdminUsers.list")(function*(query: Parameters<typeof users.list>[0]) {
      const page = yield* users.list(query)
      const listed = yield* Effect.forEach(page.users, (user) =>
        Effect.map(sessions.list(user.id), (active) => ({ ...user, activeSessions: active.length })))
      return { ...page, users: listed }
    })

    /** The number of sessions revoked. */
    const ban = Effect.fn("AdminUsers.ban")(function*(adminId: UserId, userId: UserId, reason: string) {
      if (adminId === userId) return yield* new CannotBanSelf()
      yield* users.ban(userId, reason)
      yield* audit.record({
        userId,
        action: "USER_BANNED",
        entityType: "User",
        entityId: userId,
        metadata: { reason, adminId: String(adminId) }
      })
      return yield* sessions.revokeAll(userId)
    })

    const unban = Effect.fn("AdminUsers.unban")(function*(adminId: UserId, userId: UserId) {
      yield* users.unban(userId)
      yield* audit.record({
        userId,
        action: "USER_UNBANNED",
        entityType: "User",
        entityId: userId,
        metadata: { adminId: String(adminId) }
      })
    })

    /** A signed ADMIN_ADJUSTMENT with its audit row in one transaction; the new balance is pushed after. */
    const adjustBalance = Effect.fn("AdminUsers.adjustBalance")(function*(
      adminId: UserId,
      userId: UserId,
      adjustment: { readonly amountCents: bigint; readonly reason: string }
    ) {
      yield* users.findById(userId)
      const posted = yield* adjustBalanceInTransaction(adminId, userId, adjustment).pipe(transaction)
      yield* realtime.balanceChanged(userId, posted.balanceAfterCents)
      return posted
    })

    /** What `adjustBalance` runs in its transaction: the adjustment, and its audit row. */
    const adjustBalanceInTransaction = Effect.fnUntraced(function*(
      adminId: UserId,
      userId: UserId,
      adjustment: { readonly amountCents: bigint; readonly reason: string }
    ) {
      const posting = yield* ledger.adjust({ userId, ...adjustment })
      yield* audit.record({
        userId,
        action: "ADMIN_ADJUST_BALANCE",
        entityType: "Transaction",
        entityId: posting.transactionId,
        metadata: { amountCents: String(adjustment.amountCents), reason: adjustment.reason, adminId: String(adminId) }
      })
      return posting
    })

    return { list, ban, unban, adjustBalance } as const
  }),
  dependencies: [Users.Default, Sessions.Default, Audit.Default, Ledger.Default, Realtime.Default]
}) {}
