/**
 * One player as an operator sees them (docs/rules.md#player-page): the profile with identity, responsible
 * gaming and counts, the active sessions (by reference), the player's ledger, deposits, withdrawals,
 * openings and audit entries, each paged; and an administrator ending one of the player's sessions.
 * Every read answers 404 `User not found` for an unknown id.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { PlayerCounts, type SessionReference, sessionReference } from "../../schema/admin/AdminPlayer"
import type { DepositStatus } from "../../schema/money/Deposit"
import type { TransactionType } from "../../schema/money/Ledger"
import type { WithdrawalStatus } from "../../schema/money/Withdrawal"
import { NotFound } from "../../schema/platform/Errors"
import { TransactionId, type UserId } from "../../schema/platform/Ids"
import type { PageRequest, StatusPageRequest } from "../../schema/platform/Pagination"
import { CaseOpenings } from "../games/CaseOpenings"
import { Identities } from "../identity/Identities"
import { ResponsibleGaming } from "../identity/ResponsibleGaming"
import { Sessions } from "../identity/Sessions"
import { Users } from "../identity/Users"
import { Deposits } from "../money/Deposits"
import { Withdrawals } from "../money/Withdrawals"
import { pageOf, singleOf } from "../platform/SqlRows"
import { Audit } from "./Audit"
import { type AuditFilter, AuditLog } from "./AuditLog"

const ProfileRow = Schema.Struct({
  lastActiveAt: Schema.NullOr(Schema.DateFromSelf),
  twoFactorEnabled: Schema.Boolean,
  ...PlayerCounts.fields
})

const TransactionRow = Schema.Struct({
  id: TransactionId,
  type: Schema.String,
  amountCents: Schema.BigInt,
  balanceAfterCents: Schema.BigInt,
  referenceType: Schema.NullOr(Schema.String),
  referenceId: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf
})

export class AdminPlayers extends Effect.Service<AdminPlayers>()("app/AdminPlayers", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const users = yield* Users
    const sessions = yield* Sessions
    const identities = yield* Identities
    const responsibleGaming = yield* ResponsibleGaming
    const deposits = yield* Deposits
    const withdrawals = yield* Withdrawals
    const openings = yield* CaseOpenings
    const auditLog = yield* AuditLog
    const audit = yield* Audit

    /** The player's sessions as an administrator sees them: by reference, most recently active first. */
    const sessionsOf = (userId: UserId) =>
      Effect.map(sessions.list(userId), (live) =>
        live.map((s) => ({
          id: sessionReference(s.id),
          ip: s.ip,
          userAgent: s.userAgent,
          createdAt: s.createdAt,
          lastActivity: s.lastActivity
        })))

    /** `GET /admin/users/:id`. */
    const profile = Effect.fn("AdminPlayers.profile")(function*(userId: UserId) {
      const user = yield* users.findById(userId)
      const row = yield* singleOf(ProfileRow, sql`
        SELECT u.last_active_at, (u.two_factor_enabled AND u.two_factor_secret IS NOT NULL) AS two_factor_enabled,
               (SELECT count(*) FROM transactions WHERE user_id = u.id)::int AS transactions,
               (SELECT count(*) FROM deposits WHERE user_id = u.id)::int AS deposits,
               (SELECT count(*) FROM withdrawals WHERE user_id = u.id)::int AS withdrawals,
               (SELECT count(*) FROM case_openings WHERE user_id = u.id)::int AS openings,
               (SELECT count(*) FROM audit_logs WHERE user_id = u.id)::int AS audit_entries
        FROM users u WHERE u.id = ${userId}`)
      const { exclusion, identity, limits, live } = yield* Effect.all({
        identity: identities.identityOf(userId),
        exclusion: responsibleGaming.exclusionOf(userId),
        limits: responsibleGaming.limitsOf(userId),
        live: sessionsOf(userId)
      })
      return {
        id: user.id,
        username: user.username,
        idpId: user.idpId,
        role: user.role,
        balanceCents: user.balanceCents,
        twoFactorEnabled: row.twoFactorEnabled,
        banned: user.bannedAt === null ? null : { at: user.bannedAt, reason: user.banReason },
        createdAt: user.createdAt,
        lastActiveAt: row.lastActiveAt,
        identity: identity ?? { status: "UNVERIFIED" as const },
        responsibleGaming: { exclusion, limits },
        counts: {
          transactions: row.transactions,
          deposits: row.deposits,
          withdrawals: row.withdrawals,
          openings: row.openings,
          auditEntries: row.auditEntries
        },
        sessions: live
      }
    })

    /** `GET /admin/users/:id/transactions`: the player's ledger, newest first, optionally of one type. */
    const transactions = Effect.fn("AdminPlayers.transactions")(function*(
      userId: UserId,
      query: PageRequest & { readonly type?: TransactionType | undefined }
    ) {
      yield* users.findById(userId)
      const type = query.type === undefined ? sql`true` : sql`type = ${query.type}`
      const { items, page, total } = yield* pageOf(
        TransactionRow,
        query,
        ({ limit, offset }) =>
          sql`SELECT id, type, amount_cents, balance_after_cents, reference_type, reference_id::text AS reference_id,
                     reason, created_at
              FROM transactions WHERE user_id = ${userId} AND ${type}
              ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
        sql`SELECT count(*) AS n FROM transactions WHERE user_id = ${userId} AND ${type}`
      )
      return {
        transactions: items.map((row) => ({
          id: row.id,
          type: row.type as TransactionType,
          amountCents: row.amountCents,
          balanceAfterCents: row.balanceAfterCents,
          reference: row.referenceType === null || row.referenceId === null
            ? null
            : { type: row.referenceType, id: row.referenceId },
          reason: row.reason,
          createdAt: row.createdAt
        })),
        total,
        page
      }
    })

    const depositsOf = Effect.fn("AdminPlayers.deposits")(function*(userId: UserId, query: StatusPageRequest<DepositStatus>) {
      yield* users.findById(userId)
      return yield* deposits.adminList({ ...query, userId })
    })

    const withdrawalsOf = Effect.fn("AdminPlayers.withdrawals")(function*(
      userId: UserId,
      query: StatusPageRequest<WithdrawalStatus>
    ) {
      yield* users.findById(userId)
      return yield* withdrawals.adminList({ ...query, userId })
    })

    const openingsOf = Effect.fn("AdminPlayers.openings")(function*(userId: UserId, query: PageRequest) {
      yield* users.findById(userId)
      return yield* openings.history(userId, query)
    })

    const auditOf = Effect.fn("AdminPlayers.audit")(function*(userId: UserId, query: Omit<AuditFilter, "userId" | "actorId">) {
      yield* users.findById(userId)
      return yield* auditLog.list({ ...query, userId })
    })

    /**
     * `POST /admin/users/:id/sessions/:sessionId/revoke`: ends the player's session of that reference (404
     * `Session not found` when the player has none), audited SESSION_REVOKED with the administrator; the
     * player's remaining sessions.
     */
    const revokeSession = Effect.fn("AdminPlayers.revokeSession")(function*(
      adminId: UserId,
      userId: UserId,
      reference: SessionReference
    ) {
      yield* users.findById(userId)
      const live = yield* sessions.list(userId)
      const session = live.find((s) => sessionReference(s.id) === reference)
      if (session === undefined) return yield* NotFound.of("Session")
      yield* sessions.revoke(userId, session.id).pipe(
        // Ended meanwhile (expired, or revoked by its owner): gone all the same.
        Effect.catchTags({ NotFound: () => Effect.void, NotYourSession: () => Effect.void })
      )
      yield* audit.record({
        userId,
        action: "SESSION_REVOKED",
        entityType: "Session",
        entityId: reference,
        metadata: { adminId: String(adminId), ip: session.ip, userAgent: session.userAgent }
      })
      return yield* sessionsOf(userId)
    })

    return {
      profile,
      transactions,
      deposits: depositsOf,
      withdrawals: withdrawalsOf,
      openings: openingsOf,
      audit: auditOf,
      revokeSession
    } as const
  }),
  dependencies: [
    Users.Default,
    Sessions.Default,
    Identities.Default,
    ResponsibleGaming.Default,
    Deposits.Default,
    Withdrawals.Default,
    CaseOpenings.Default,
    AuditLog.Default,
    Audit.Default
  ]
}) {}
