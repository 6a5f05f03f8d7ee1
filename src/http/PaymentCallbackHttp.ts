/**
 * The gateway callback's handler. Allowed addresses and the signature header's shape are checked
 * before the body is read (D9, D19); the body is read raw (at most 64 KiB, src/http/RequestBody.ts),
 * because the signature covers the bytes sent, and parsed only once the signature matches.
 */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, ParseResult, Redacted, Schema } from "effect"
import { AppConfig } from "../layers/AppConfig"
import { GatewayEvent } from "../schema/Deposit"
import { Forbidden, InvalidWebhookSignature } from "../schema/Errors"
import { Deposits } from "../services/Deposits"
import { verifyGatewaySignature } from "../services/GatewaySignature"
import { Api } from "./Api"
import { clientIpOf } from "./ClientInfo"
import { validationErrorOf } from "./ErrorEnvelope"
import { bodyProblem } from "./RequestBody"

/** `::ffff:10.0.0.1` (an IPv4 client of a dual-stack socket) is `10.0.0.1`. */
const plainAddress = (ip: string) => ip.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1")

/** Lowercase (or uppercase) hex HMAC-SHA256: anything else cannot match, and its body is not read. */
const SIGNATURE_SHAPE = /^\s*[0-9a-fA-F]{64}\s*$/

const decodeEvent = (body: unknown) =>
  Schema.decodeUnknown(GatewayEvent)(body).pipe(
    Effect.mapError((error) => validationErrorOf(ParseResult.ArrayFormatter.formatErrorSync(error)))
  )

export const PaymentCallbackLive = HttpApiBuilder.group(Api, "paymentCallback", (handlers) =>
  Effect.gen(function*() {
    const deposits = yield* Deposits
    const config = yield* AppConfig
    const secret = Redacted.value(config.secrets.webhookSecret)
    const allowed = new Set(config.gateway.allowedIps.map(plainAddress))

    return handlers.handle("payment", () =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (allowed.size > 0 && !allowed.has(plainAddress(clientIpOf(request, config.trustProxy)))) {
          return yield* new Forbidden({ message: "Address not allowed" })
        }
        const signature = request.headers["x-webhook-signature"]
        if (signature === undefined || !SIGNATURE_SHAPE.test(signature)) return yield* new InvalidWebhookSignature()
        const raw = yield* Effect.mapError(request.text, bodyProblem)
        if (!verifyGatewaySignature(secret, raw, signature)) return yield* new InvalidWebhookSignature()
        const event = yield* Effect.flatMap(Effect.mapError(request.json, bodyProblem), decodeEvent)
        yield* deposits.handleGatewayEvent(event)
        return { received: true } as const
      }))
  }))
