/**
 * The gateway callback's handler. Allowed addresses and the shapes of the signature and timestamp headers
 * are checked before the body is read (docs/rules.md#gateway-callback); the body is read raw (at most 64 KiB,
 * src/http/platform/RequestBody.ts), because the signature covers the bytes sent, and parsed only once the
 * signature matches and its timestamp is fresh (docs/rules.md#gateway-callback-timestamp). The event is then
 * taken once (docs/rules.md#gateway-event-ids).
 */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Clock, Effect, ParseResult, Redacted, Schema } from "effect"
import { AppConfig } from "../../layers/AppConfig"
import {
  AddressNotAllowed,
  GatewayEvent,
  InvalidWebhookSignature,
  InvalidWebhookTimestamp
} from "../../schema/money/Deposit"
import { PayoutEvent } from "../../schema/money/Withdrawal"
import { PleaseRetry, ServiceUnavailable } from "../../schema/platform/Errors"
import { GatewayEvents, type ReceivedGatewayEvent } from "../../services/money/GatewayEvents"
import {
  gatewayEventId,
  isTimestampFresh,
  timestampAge,
  TIMESTAMP_TOLERANCE_SECONDS,
  timestampOf,
  verifyGatewaySignature
} from "../../layers/gateway/GatewaySignature"
import { Api } from "../Api"
import { clientIpOf, matcherOf } from "../platform/ClientInfo"
import { validationErrorOf } from "../platform/ErrorEnvelope"
import { bodyProblem } from "../platform/RequestBody"
import { buildOnly } from "../platform/RequestContext"

/** Lowercase (or uppercase) hex HMAC-SHA256: anything else cannot match, and its body is not read. */
const SIGNATURE_SHAPE = /^\s*[0-9a-fA-F]{64}\s*$/

const decode = <A, I>(schema: Schema.Schema<A, I>, body: unknown) =>
  Schema.decodeUnknown(schema)(body).pipe(
    Effect.mapError((error) => validationErrorOf(ParseResult.ArrayFormatter.formatErrorSync(error)))
  )

/**
 * `payout.*` events settle withdrawals (docs/rules.md#payout-events); every other event is about a deposit's
 * charge.
 */
const isPayoutEvent = (body: unknown) =>
  typeof body === "object" && body !== null && "event" in body && typeof body.event === "string" &&
  body.event.startsWith("payout.")

const decodeEvent = (body: unknown): Effect.Effect<ReceivedGatewayEvent, ReturnType<typeof validationErrorOf>> =>
  isPayoutEvent(body)
    ? Effect.map(decode(PayoutEvent, body), (event) => ({ _tag: "Payout", event }))
    : Effect.map(decode(GatewayEvent, body), (event) => ({ _tag: "Charge", event }))

/** One callback (see the top of this file): checked, its signature verified, then its event taken once. */
const receive = Effect.fnUntraced(function*(
  events: GatewayEvents,
  config: AppConfig["Type"],
  secret: string,
  allowed: (address: string) => boolean
) {
  const request = yield* HttpServerRequest.HttpServerRequest
  if (config.gateway.allowedIps.length > 0 && !allowed(clientIpOf(request, config))) {
    return yield* new AddressNotAllowed()
  }
  const signature = request.headers["x-webhook-signature"]
  if (signature === undefined || !SIGNATURE_SHAPE.test(signature)) return yield* new InvalidWebhookSignature()
  const timestampHeader = request.headers["x-webhook-timestamp"]
  const timestamp = timestampHeader === undefined ? undefined : timestampOf(timestampHeader)
  if (timestampHeader === undefined ? config.gateway.requireTimestamp : timestamp === undefined) {
    return yield* new InvalidWebhookTimestamp()
  }
  const raw = yield* Effect.mapError(request.text, bodyProblem)
  if (!verifyGatewaySignature(secret, raw, signature, timestamp)) return yield* new InvalidWebhookSignature()
  const now = yield* Clock.currentTimeMillis
  if (timestamp !== undefined && !isTimestampFresh(timestamp, now)) {
    // Signed by the gateway, so either a replay or a clock to fix (docs/operations.md#callback-timestamps).
    const age = timestampAge(timestamp, now)
    yield* Effect.logWarning(`Gateway callback refused: its timestamp is ${Math.abs(age)} s ` +
      `${age >= 0 ? "behind" : "ahead of"} our clock (at most ${TIMESTAMP_TOLERANCE_SECONDS} s either way)`)
    return yield* new InvalidWebhookTimestamp()
  }
  const body = yield* Effect.mapError(request.json, bodyProblem)
  const event = yield* decodeEvent(body)
  const { duplicate } = yield* events.receive({
    eventId: gatewayEventId(raw, timestamp),
    signedAt: timestamp === undefined ? undefined : new Date(Number(timestamp) * 1000)
  }, event).pipe(
    // Changed state is a 503 here, not a 409: gateways redeliver on 5xx, and a dropped charge.paid is a
    // deposit never credited (docs/rules.md#gateway-callback).
    Effect.catchIf(
      (error) => error instanceof PleaseRetry || (error instanceof ServiceUnavailable && error.conflict),
      () => Effect.fail(new ServiceUnavailable())
    )
  )
  return duplicate ? { received: true, duplicate: true } as const : { received: true } as const
})

export const PaymentCallbackLive = HttpApiBuilder.group(Api, "paymentCallback", Effect.fnUntraced(function*(handlers) {
  const events = yield* GatewayEvents
  const config = yield* AppConfig
  const secret = Redacted.value(config.secrets.webhookSecret)
  const allowed = matcherOf(config.gateway.allowedIps)

  return handlers.handle("payment", () => receive(events, config, secret, allowed))
})).pipe(buildOnly([AppConfig, GatewayEvents]))
