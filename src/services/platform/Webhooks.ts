/** Outbound webhook registrations (docs/rules.md#webhook-registration). Delivery comes with the outbox. */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import { AppConfig } from "../../layers/AppConfig"
import { FieldError, NotFound, ValidationError } from "../../schema/platform/Errors"
import { Webhook, WebhookId, type WebhookRegistration } from "../../schema/platform/Webhook"
import { isInternalTarget } from "./WebhookTargets"
import { rowCountOf, rowsOf, singleOf } from "./SqlRows"

const Row = Schema.Struct({ id: WebhookId, url: Schema.String, events: Webhook.fields.events, createdAt: Schema.DateFromSelf })

export class Webhooks extends Effect.Service<Webhooks>()("app/Webhooks", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig

    const register = Effect.fn("Webhooks.register")(function*(registration: WebhookRegistration) {
      if (config.webhookBlockPrivateTargets && (yield* isInternalTarget(registration.url))) {
        return yield* new ValidationError({
          errors: [new FieldError({ field: "url", message: "must not point to a loopback or private address" })]
        })
      }
      const now = new Date(yield* Clock.currentTimeMillis)
      const row = yield* singleOf(Row, sql`
        INSERT INTO webhooks (url, events, secret, created_at)
        VALUES (${registration.url}, ${registration.events}::text[], ${registration.secret}, ${now})
        RETURNING id, url, events, created_at`)
      return new Webhook(row)
    })

    const list = Effect.fn("Webhooks.list")(function*() {
      const rows = yield* rowsOf(Row, sql`SELECT id, url, events, created_at FROM webhooks ORDER BY id`)
      return rows.map((row) => new Webhook(row))
    })

    const remove = Effect.fn("Webhooks.remove")(function*(id: WebhookId) {
      const deleted = yield* rowCountOf(sql`DELETE FROM webhooks WHERE id = ${id} RETURNING id`)
      if (deleted === 0) return yield* NotFound.of("Webhook")
    })

    return { register, list, remove } as const
  })
}) {}
