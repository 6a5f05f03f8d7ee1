/** Outbound webhook registrations (docs/rules.md#webhook-registration). */
import { Schema } from "effect"
import { idFromString } from "./Ids"
import { PlainString } from "./Text"

export const WebhookId = idFromString("WebhookId")
export type WebhookId = typeof WebhookId.Type

export const WebhookEvent = Schema.Literal("deposit.confirmed", "withdrawal.completed", "battle.finished")
export type WebhookEvent = typeof WebhookEvent.Type

const WebhookUrl = PlainString.pipe(
  Schema.maxLength(2048, { message: () => "must be at most 2048 characters" }),
  Schema.filter((url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol), {
    message: () => "must be an absolute http(s) URL"
  })
)

export const WebhookRegistration = Schema.Struct({
  url: WebhookUrl,
  events: Schema.Array(WebhookEvent).pipe(
    Schema.minItems(1, { message: () => "must name at least one event" }),
    Schema.filter((events) => new Set(events).size === events.length, { message: () => "must not repeat an event" })
  ),
  secret: PlainString.pipe(
    Schema.minLength(16, { message: () => "must be at least 16 characters" }),
    Schema.maxLength(256, { message: () => "must be at most 256 characters" })
  )
}).annotations({ identifier: "WebhookRegistration", parseOptions: { errors: "all" } })
export type WebhookRegistration = typeof WebhookRegistration.Type

/** A registration as the API shows it: never with its secret. */
export class Webhook extends Schema.Class<Webhook>("Webhook")({
  id: WebhookId,
  url: Schema.String,
  events: Schema.Array(WebhookEvent),
  createdAt: Schema.Date
}) {}

export const WebhookDeliveryId = idFromString("WebhookDeliveryId")
export type WebhookDeliveryId = typeof WebhookDeliveryId.Type

export const WebhookDeliveryStatus = Schema.Literal("PENDING", "DELIVERED", "FAILED")
export type WebhookDeliveryStatus = typeof WebhookDeliveryStatus.Type

/** One POST to a receiver: its HTTP status, or why there was none (timeout, refused connection). */
export class WebhookAttempt extends Schema.Class<WebhookAttempt>("WebhookAttempt")({
  attemptedAt: Schema.Date,
  statusCode: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  durationMs: Schema.Int
}) {}

/** One event for one receiver, as the administrator's delivery log shows it (the payload is not shown). */
export class WebhookDeliveryLog extends Schema.Class<WebhookDeliveryLog>("WebhookDeliveryLog")({
  id: WebhookDeliveryId,
  event: WebhookEvent,
  status: WebhookDeliveryStatus,
  /** When the next attempt is due; null once DELIVERED or FAILED. */
  nextAttemptAt: Schema.NullOr(Schema.Date),
  deliveredAt: Schema.NullOr(Schema.Date),
  createdAt: Schema.Date,
  attempts: Schema.Array(WebhookAttempt)
}) {}
