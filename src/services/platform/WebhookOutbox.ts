/**
 * The outbox of outbound webhooks (docs/rules.md#webhook-delivery): `enqueue` writes one delivery per
 * registered receiver of the event, inside the caller's database transaction, so an event is delivered exactly
 * when what it announces has committed. The delivery worker sends them.
 *
 * Payload (docs/rules.md#webhook-payload): `{event, timestamp, data, signature}`; `signature` = `sha256=` + HMAC-SHA256
 * hex, keyed with the registration secret, of the compact JSON of `{event, timestamp, data}`. The same
 * value goes in the `x-webhook-signature` header.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import { createHmac } from "node:crypto"
import type { WebhookEvent } from "../../schema/platform/Webhook"
import { execute, rowsOf } from "./SqlRows"

export const signPayload = (secret: string, body: { readonly event: string; readonly timestamp: string; readonly data: unknown }) =>
  `sha256=${createHmac("sha256", secret).update(JSON.stringify({ event: body.event, timestamp: body.timestamp, data: body.data })).digest("hex")}`

const ReceiverRow = Schema.Struct({ id: Schema.String, secret: Schema.String })

export class WebhookOutbox extends Effect.Service<WebhookOutbox>()("app/WebhookOutbox", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The number of deliveries queued (one per receiver registered for `event`). */
    const enqueue = Effect.fn("WebhookOutbox.enqueue")(function*(event: WebhookEvent, data: Record<string, unknown>) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const receivers = yield* rowsOf(ReceiverRow, sql`SELECT id, secret FROM webhooks WHERE ${event} = ANY(events)`)
      for (const receiver of receivers) {
        const body = { event, timestamp: now.toISOString(), data }
        const payload = { ...body, signature: signPayload(receiver.secret, body) }
        yield* execute(sql`INSERT INTO webhook_deliveries (webhook_id, event, payload, next_attempt_at, created_at)
                           VALUES (${receiver.id}, ${event}, ${JSON.stringify(payload)}, ${now}, ${now})`)
      }
      return receivers.length
    })

    return { enqueue } as const
  })
}) {}
