/**
 * What the operator's console reads of the audit trail and of one player (docs/rules.md#audit-log,
 * docs/rules.md#player-page): the audit log's query and entries, a player's profile, their ledger rows,
 * their sessions as an administrator sees them (by reference, never by the session id itself).
 */
import { Schema } from "effect"
import { createHash } from "node:crypto"
import { ExclusionStatus, LimitsView } from "../identity/ResponsibleGaming"
import { IdentityStatus } from "../identity/Compliance"
import { Role } from "../identity/User"
import { TransactionType } from "../money/Ledger"
import { IdString, TransactionId, UserId } from "../platform/Ids"
import { AuditAction } from "../platform/Notification"
import { PageParams } from "../platform/Pagination"

/** An ISO 8601 date (`2026-11-26`, UTC midnight) or date-time with `Z` or an offset (`2026-11-26T10:00:00Z`). */
const IsoInstant = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/, {
    message: () => "must be an ISO 8601 date (YYYY-MM-DD) or date-time with a time zone (Z or ±hh:mm)"
  })
).annotations({
  description: "An ISO 8601 date (UTC midnight) or date-time with a time zone",
  examples: ["2026-11-01", "2026-11-26T12:00:00Z"]
}).pipe(Schema.compose(Schema.Date))

/** The audit filters of a time window: `from` and `to`, both inclusive; `from` after `to` is 400 on `from`. */
const window = <A extends { readonly from?: Date | undefined; readonly to?: Date | undefined }>(query: A) =>
  query.from !== undefined && query.to !== undefined && query.from.getTime() > query.to.getTime()
    ? { path: ["from"], message: "must not be after to" }
    : true

const AuditFilters = {
  action: Schema.optional(AuditAction),
  from: Schema.optional(IsoInstant),
  to: Schema.optional(IsoInstant)
}

/** `GET /admin/users/:id/audit`: a page of one user's audit entries, narrowed by action and time. */
export const UserAuditQuery = Schema.Struct({ ...PageParams, ...AuditFilters }).pipe(
  Schema.filter(window)
).annotations({ parseOptions: { errors: "all" } })

/** `GET /admin/audit`: a page of the audit log, narrowed by action, actor, user and time. */
export const AuditQuery = Schema.Struct({
  ...PageParams,
  ...AuditFilters,
  actorId: Schema.optional(UserId),
  userId: Schema.optional(UserId)
}).pipe(Schema.filter(window)).annotations({ parseOptions: { errors: "all" } })
export type AuditQuery = typeof AuditQuery.Type

/** Who did what an entry records: an administrator (id and username), `"system"`, or null when not recorded. */
export const AuditActor = Schema.NullOr(Schema.Union(
  Schema.Literal("system"),
  Schema.Struct({ id: UserId, username: Schema.String })
)).annotations({
  description: "The administrator who acted, \"system\" for the service's own jobs, null when the entry names " +
    "no actor (the user's own action, or one the service took for them)"
})

/** One row of the audit trail. */
export const AuditEntryView = Schema.Struct({
  id: IdString,
  createdAt: Schema.Date,
  action: AuditAction,
  userId: Schema.NullOr(UserId),
  actor: AuditActor,
  entityType: Schema.NullOr(Schema.String),
  entityId: Schema.NullOr(Schema.String),
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
export type AuditEntryView = typeof AuditEntryView.Type

/** What an administrator sees of a session: a reference instead of its id (the id is the credential). */
export const SessionReference = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{24}$/, { message: () => "must be a session reference" }),
  Schema.brand("SessionReference")
).annotations({ description: "24 hexadecimal characters naming a session (not its id, which signs in)" })
export type SessionReference = typeof SessionReference.Type

/** The first 24 hexadecimal characters of the session id's SHA-256. */
export const sessionReference = (sessionId: string): SessionReference =>
  createHash("sha256").update(sessionId).digest("hex").slice(0, 24) as SessionReference

/** A player's ledger row, as an administrator reads it. */
export const TransactionView = Schema.Struct({
  id: TransactionId,
  type: TransactionType,
  amountCents: Schema.BigIntFromNumber,
  balanceAfterCents: Schema.BigIntFromNumber,
  reference: Schema.NullOr(Schema.Struct({ type: Schema.String, id: Schema.String })),
  reason: Schema.NullOr(Schema.String),
  createdAt: Schema.Date
})

export const TransactionQuery = Schema.Struct({ ...PageParams, type: Schema.optional(TransactionType) })
  .annotations({ parseOptions: { errors: "all" } })

/** How much a player has of each list of the player page. */
export const PlayerCounts = Schema.Struct({
  transactions: Schema.Int,
  deposits: Schema.Int,
  withdrawals: Schema.Int,
  openings: Schema.Int,
  auditEntries: Schema.Int
})

/** `GET /admin/users/:id`: the player page's head. */
export const PlayerProfile = Schema.Struct({
  id: UserId,
  username: Schema.String,
  idpId: Schema.String,
  role: Role,
  balanceCents: Schema.BigIntFromNumber,
  twoFactorEnabled: Schema.Boolean,
  banned: Schema.NullOr(Schema.Struct({ at: Schema.Date, reason: Schema.NullOr(Schema.String) })),
  createdAt: Schema.Date,
  lastActiveAt: Schema.NullOr(Schema.Date),
  /** As GET /users/me/compliance shows it: the CPF masked. */
  identity: IdentityStatus,
  responsibleGaming: Schema.Struct({ exclusion: ExclusionStatus, limits: LimitsView }),
  counts: PlayerCounts
})
