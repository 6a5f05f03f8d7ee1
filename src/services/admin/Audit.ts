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

    /** Several entries in one statement, e.g. one per item a battle settlement moves. */
    const recordMany = Effect.fn("Audit.recordMany")(function*(entries: ReadonlyArray<AuditEntry>) {
      if (entries.length === 0) return
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* execute(sql`INSERT INTO audit_logs ${
        sql.insert(entries.map((entry) => ({
          userId: entry.userId,
          action: entry.action,
          entityType: entry.entityType ?? null,
          entityId: entry.entityId === undefined ? null : String(entry.entityId),
          metadata: JSON.stringify(entry.metadata ?? {}),
          createdAt: now
        })))
      }`)
    })

    const record = (entry: AuditEntry) => recordMany([entry])

    return { record, recordMany } as const
  })
}) {}
