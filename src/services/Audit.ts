/**
 * The audit trail (SPEC audit actions): append-only rows in `audit_logs`. A record joins the caller's
 * database transaction when there is one, so it commits or rolls back with what it describes.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import type { AuditAction } from "../schema/Notification"

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

    const record = Effect.fn("Audit.record")(function*(entry: AuditEntry) {
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* sql`INSERT INTO audit_logs (user_id, action, entity_type, entity_id, metadata, created_at)
                 VALUES (${entry.userId}, ${entry.action}, ${entry.entityType ?? null},
                         ${entry.entityId === undefined ? null : String(entry.entityId)},
                         ${JSON.stringify(entry.metadata ?? {})}::jsonb, ${now})`.pipe(Effect.orDie)
    })

    return { record } as const
  })
}) {}
