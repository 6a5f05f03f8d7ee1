/**
 * The outbox of outbound webhooks (docs/rules.md#webhook-delivery): `enqueue` writes one delivery per
 * registered receiver of the event, inside the caller's database transaction, so an event is delivered exactly
 * when what it announces has committed. The delivery worker sends them.
 *
 * Payload (docs/rules.md#webhook-payload): `{event, timestamp, data, signature}`; `signature` = `sha256=` + HMAC-SHA256
 * hex, keyed with the registration secret, of the compact JSON of `{event, timestamp, data}`. The same
 * value goes in the `x-webhook-signature` header.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import { createHmac } from "node:crypto"
import type { WebhookEvent } from "../../schema/platform/Webhook"
import { execute, singleOf } from "./SqlRows"

export const signPayload = (secret: string, body: { readonly event: string; readonly timestamp: string; readonly data: unknown }) =>
  `sha256=${createHmac("sha256", secret).update(JSON.stringify({ event: body.event, timestamp: body.timestamp, data: body.data })).digest("hex")}`

const ReceiverRow = Schema.Struct({ id: Schema.String, secret: Schema.String })
/** The receivers of an event, as `receiversOf` gives them in a statement's row. */
export const ReceiversJson = Schema.Array(ReceiverRow)
export type Receivers = typeof ReceiversJson.Type
const ReceiversRow = Schema.Struct({ receivers: ReceiversJson })

export class WebhookOutbox extends Effect.Service<WebhookOutbox>()("app/WebhookOutbox", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * The receivers of each event as this instance last read them, for a write that checks they are still so
     * (`unchanged`): a hint, which spares a read.
     */
    const known = new Map<WebhookEvent, Receivers>()
    const remembered = (event: WebhookEvent): Receivers | undefined => known.get(event)
    const remember = (event: WebhookEvent, receivers: Receivers) => Effect.sync(() => void known.set(event, receivers))

    /**
     * A statement's condition: the receivers registered for `event` are still `receivers`. Webhooks are added and
     * removed, never changed, and an id is never used twice, so their ids tell.
     */
    const unchanged = (event: WebhookEvent, receivers: Receivers) => sql`
      (SELECT COALESCE(array_agg(id ORDER BY id), '{}') FROM webhooks WHERE ${event} = ANY(events))
        = ${receivers.map((receiver) => receiver.id)}::bigint[]`

    /** A column of a read: the receivers registered for `event` (ReceiversJson), for a later `deliveriesStep`. */
    const receiversOf = (event: WebhookEvent) => sql`
      (SELECT COALESCE(json_agg(json_build_object('id', id::text, 'secret', secret) ORDER BY id), '[]')
       FROM webhooks WHERE ${event} = ANY(events))`

    /**
     * A step of a statement (`deliveries`): one delivery of `event` per receiver, signed with its secret, when
     * `onlyIf` holds. The receivers are locked against their removal (FOR KEY SHARE) while the statement inserts;
     * one removed since it was read gets none.
     */
    const deliveriesStep = (event: WebhookEvent, data: Record<string, unknown>, receivers: Receivers, at: Date, onlyIf: Statement.Fragment) => {
      const body = { event, timestamp: at.toISOString(), data }
      const payloads = receivers.map((receiver) => JSON.stringify({ ...body, signature: signPayload(receiver.secret, body) }))
      return sql`
        deliveries AS (
          INSERT INTO webhook_deliveries (webhook_id, event, payload, next_attempt_at, created_at)
          SELECT r.webhook_id, ${event}, r.payload, ${at}, ${at}
          FROM unnest(${receivers.map((receiver) => receiver.id)}::bigint[], ${payloads}::text[]) AS r(webhook_id, payload)
          JOIN (SELECT id FROM webhooks WHERE id = ANY(${receivers.map((receiver) => receiver.id)}::bigint[]) FOR KEY SHARE) w
            ON w.id = r.webhook_id
          WHERE ${onlyIf}
        )`
    }

    /** The number of deliveries queued (one per receiver registered for `event`). */
    const enqueue = Effect.fn("WebhookOutbox.enqueue")(function*(event: WebhookEvent, data: Record<string, unknown>) {
      const at = new Date(yield* Clock.currentTimeMillis)
      const { receivers } = yield* singleOf(ReceiversRow, sql`SELECT ${receiversOf(event)} AS receivers`)
      if (receivers.length > 0) {
        yield* execute(sql`WITH ${deliveriesStep(event, data, receivers, at, sql`true`)} SELECT 1`)
      }
      return receivers.length
    })

    return { enqueue, receiversOf, deliveriesStep, remembered, remember, unchanged } as const
  })
}) {}
