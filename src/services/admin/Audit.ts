/**
 * The audit trail (every action of `AuditAction`): append-only rows in `audit_logs`. A record joins the caller's
 * database transaction when there is one, so it commits or rolls back with what it describes.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import type { AuditAction } from "../../schema/platform/Notification"
import { execute } from "../platform/SqlRows"

export interface AuditEntry {
  readonly userId: bigint | null
  readonly action: AuditAction
  readonly entityType?: string
  readonly entityId?: string | bigint
  readonly metadata?: Record<string, unknown>
}

export class Audit extends Effect.Service<Audit>()("app/Audit", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Several entries in one statement, e.g. one per item a battle settlement moves: the columns as
     * arrays, so the statement's text is one whatever their number (docs/decisions.md#prepared-statements).
     */
    const recordMany = Effect.fn("Audit.recordMany")(function*(entries: ReadonlyArray<AuditEntry>) {
      if (entries.length === 0) return
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* execute(sql`
        INSERT INTO audit_logs (user_id, action, entity_type, entity_id, metadata, created_at)
        SELECT e.user_id, e.action, e.entity_type, e.entity_id, e.metadata, ${now}::timestamptz
        FROM unnest(
          ${entries.map((entry) => entry.userId)}::bigint[],
          ${entries.map((entry) => entry.action)}::text[],
          ${entries.map((entry) => entry.entityType ?? null)}::text[],
          ${entries.map((entry) => (entry.entityId === undefined ? null : String(entry.entityId)))}::text[],
          ${entries.map((entry) => JSON.stringify(entry.metadata ?? {}))}::jsonb[]
        ) WITH ORDINALITY AS e(user_id, action, entity_type, entity_id, metadata, n)
        ORDER BY e.n`)
    })

    const record = (entry: AuditEntry) => recordMany([entry])

    return { record, recordMany } as const
  })
}) {}
