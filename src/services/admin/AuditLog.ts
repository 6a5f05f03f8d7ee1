/**
 * Reading the audit trail (docs/rules.md#audit-log): pages of `audit_logs`, newest first, narrowed by action,
 * actor, user and time, each entry with who acted as the row records it. Writing is Audit's.
 *
 * The actor of an entry: the administrator its metadata names (`adminId`); `"system"` when its metadata says
 * `actor: "system"` (automatic payouts); the row's user for the actions only administrators take and record
 * under their own id (ADMIN_CONFIRM_DEPOSIT, RAFFLE_CREATED, the catalog's); null otherwise. A session id in an
 * entry's metadata (SUSPICIOUS_IP_CHANGE), or as the entity of an entry about a session (SUSPICIOUS_IP_CHANGE,
 * DEVICE_MISMATCH), is shown as the session's reference: the id itself signs in. Sessions records references;
 * entries recorded before it did hold ids.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { type AuditEntryView, type AuditQuery, sessionReference } from "../../schema/admin/AdminPlayer"
import { UserId } from "../../schema/platform/Ids"
import { AuditAction } from "../../schema/platform/Notification"
import { pageOf } from "../platform/SqlRows"

/** The actions an administrator records under their own id (the row's user is the actor). */
export const ACTIONS_BY_THEIR_USER: ReadonlyArray<AuditAction> = [
  "ADMIN_CONFIRM_DEPOSIT",
  "RAFFLE_CREATED",
  "CASE_PROMOTIONAL",
  "CASE_OVER_HOUSE_EDGE",
  "ITEM_CREATED",
  "ITEM_UPDATED"
]

const Row = Schema.Struct({
  id: Schema.String,
  createdAt: Schema.DateFromSelf,
  action: AuditAction,
  userId: Schema.NullOr(UserId),
  entityType: Schema.NullOr(Schema.String),
  entityId: Schema.NullOr(Schema.String),
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  actorId: Schema.NullOr(UserId),
  actorUsername: Schema.NullOr(Schema.String)
})
type Row = typeof Row.Type

/** A session reference as `sessionReference` makes it (a session id is 32 hexadecimal characters). */
const REFERENCE = /^[0-9a-f]{24}$/
/** A session named by its id (in entries recorded before Sessions recorded references) or by its reference: the reference. */
const asReference = (session: string) => REFERENCE.test(session) ? session : sessionReference(session)

const view = (row: Row): AuditEntryView => {
  const { actorId, actorUsername, metadata, ...entry } = row
  const actor = actorId !== null && actorUsername !== null
    ? { id: actorId, username: actorUsername }
    : metadata["actor"] === "system"
    ? "system" as const
    : null
  const shown = typeof metadata["sessionId"] === "string"
    ? { ...metadata, sessionId: asReference(metadata["sessionId"]) }
    : metadata
  // A session the entry is about: entries recorded before Sessions recorded references hold its id.
  const entityId = entry.entityType === "Session" && entry.entityId !== null ? asReference(entry.entityId) : entry.entityId
  return { ...entry, entityId, actor, metadata: shown }
}

/** The filters of a page of the audit log; a user's page sets `userId`. */
export interface AuditFilter extends Omit<AuditQuery, "userId" | "actorId"> {
  readonly userId?: UserId | undefined
  readonly actorId?: UserId | undefined
}

export class AuditLog extends Effect.Service<AuditLog>()("app/AuditLog", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The administrator's id in an entry's metadata, when it is one. */
    const adminIdOf = sql`(CASE WHEN a.metadata->>'adminId' ~ '^[1-9][0-9]{0,18}$' THEN (a.metadata->>'adminId')::bigint END)`
    const byTheirUser = sql`a.action IN ${sql.in(ACTIONS_BY_THEIR_USER)}`

    const conditions = (filter: AuditFilter) =>
      sql.and([
        ...(filter.action === undefined ? [] : [sql`a.action = ${filter.action}`]),
        ...(filter.userId === undefined ? [] : [sql`a.user_id = ${filter.userId}`]),
        ...(filter.from === undefined ? [] : [sql`a.created_at >= ${filter.from}`]),
        ...(filter.to === undefined ? [] : [sql`a.created_at <= ${filter.to}`]),
        // Each side answers from its index: the metadata's adminId (sql/0028), the row's user.
        ...(filter.actorId === undefined ? [] : [
          sql`(a.metadata->>'adminId' = ${String(filter.actorId)} OR (${byTheirUser} AND a.user_id = ${filter.actorId}))`
        ])
      ])

    /** A page of the audit log, newest first (docs/rules.md#audit-log). */
    const list = Effect.fn("AuditLog.list")(function*(filter: AuditFilter) {
      const where = conditions(filter)
      const { items, page, total } = yield* pageOf(
        Row,
        filter,
        ({ limit, offset }) =>
          sql`SELECT a.id::text AS id, a.created_at, a.action, a.user_id, a.entity_type, a.entity_id, a.metadata,
                     actor.id AS actor_id, actor.username AS actor_username
              FROM audit_logs a
              LEFT JOIN users actor ON actor.id = COALESCE(${adminIdOf}, CASE WHEN ${byTheirUser} THEN a.user_id END)
              WHERE ${where}
              ORDER BY a.created_at DESC, a.id DESC LIMIT ${limit} OFFSET ${offset}`,
        sql`SELECT count(*) AS n FROM audit_logs a WHERE ${where}`
      )
      return { entries: items.map(view), total, page }
    })

    return { list } as const
  })
}) {}
