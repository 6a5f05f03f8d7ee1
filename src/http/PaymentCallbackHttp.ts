/**
 * The gateway callback's handler. The body is read raw: the signature covers the bytes sent, so it
 * is checked before anything is parsed (allowed addresses first, D9).
 */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, ParseResult, Redacted, Schema } from "effect"
import { AppConfig } from "../layers/AppConfig"
import { GatewayEvent } from "../schema/Deposit"
import { BadRequest, Forbidden, InvalidWebhookSignature } from "../schema/Errors"
import { Deposits } from "../services/Deposits"
import { verifyGatewaySignature } from "../services/GatewaySignature"
import { Api } from "./Api"
import { clientIpOf } from "./ClientInfo"
import { validationErrorOf } from "./ErrorEnvelope"

/** `::ffff:10.0.0.1` (an IPv4 client of a dual-stack socket) is `10.0.0.1`. */
const plainAddress = (ip: string) => ip.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1")

const parseJson = (raw: string) =>
  Effect.try({ try: () => JSON.parse(raw) as unknown, catch: () => new BadRequest({ message: "Malformed JSON body" }) })

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
        const raw = yield* Effect.orElseFail(request.text, () => new BadRequest({ message: "Unreadable body" }))
        if (!verifyGatewaySignature(secret, raw, request.headers["x-webhook-signature"])) {
          return yield* new InvalidWebhookSignature()
        }
        const event = yield* Effect.flatMap(parseJson(raw), decodeEvent)
        yield* deposits.handleGatewayEvent(event)
        return { received: true } as const
      }))
  }))
