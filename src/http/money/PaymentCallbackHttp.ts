/**
 * The gateway callback's handler. Allowed addresses and the signature header's shape are checked
 * before the body is read (docs/rules.md#gateway-callback); the body is read raw (at most 64 KiB,
 * src/http/platform/RequestBody.ts), because the signature covers the bytes sent, and parsed only once the signature matches.
 */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, ParseResult, Redacted, Schema } from "effect"
import { AppConfig } from "../../layers/AppConfig"
import { AddressNotAllowed, GatewayEvent, InvalidWebhookSignature } from "../../schema/money/Deposit"
import { PayoutEvent } from "../../schema/money/Withdrawal"
import { Deposits } from "../../services/money/Deposits"
import { Withdrawals } from "../../services/money/Withdrawals"
import { verifyGatewaySignature } from "../../layers/gateway/GatewaySignature"
import { Api } from "../Api"
import { clientIpOf } from "../platform/ClientInfo"
import { validationErrorOf } from "../platform/ErrorEnvelope"
import { bodyProblem } from "../platform/RequestBody"

/** `::ffff:10.0.0.1` (an IPv4 client of a dual-stack socket) is `10.0.0.1`. */
const plainAddress = (ip: string) => ip.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1")

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

export const PaymentCallbackLive = HttpApiBuilder.group(Api, "paymentCallback", (handlers) =>
  Effect.gen(function*() {
    const deposits = yield* Deposits
    const withdrawals = yield* Withdrawals
    const config = yield* AppConfig
    const secret = Redacted.value(config.secrets.webhookSecret)
    const allowed = new Set(config.gateway.allowedIps.map(plainAddress))

    return handlers.handle("payment", () =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (allowed.size > 0 && !allowed.has(plainAddress(clientIpOf(request, config.trustProxy)))) {
          return yield* new AddressNotAllowed()
        }
        const signature = request.headers["x-webhook-signature"]
        if (signature === undefined || !SIGNATURE_SHAPE.test(signature)) return yield* new InvalidWebhookSignature()
        const raw = yield* Effect.mapError(request.text, bodyProblem)
        if (!verifyGatewaySignature(secret, raw, signature)) return yield* new InvalidWebhookSignature()
        const body = yield* Effect.mapError(request.json, bodyProblem)
        if (isPayoutEvent(body)) yield* withdrawals.handlePayoutEvent(yield* decode(PayoutEvent, body))
        else yield* deposits.handleGatewayEvent(yield* decode(GatewayEvent, body))
        return { received: true } as const
      }))
  }))
