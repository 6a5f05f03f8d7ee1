/**
 * The adapter for a real payment gateway at PAYMENT_GATEWAY_URL (docs/rules.md#deposit-initiation,
 * docs/rules.md#withdrawal-payout): JSON over HTTPS with the key as a bearer token, a 10 s timeout per call,
 * and up to 3 retries with backoff on network errors and 5xx. Every call carries an `Idempotency-Key`, so a
 * retry after a lost response never charges or pays twice.
 *
 * Wire format: `POST /charges {amount, currency: "BRL", method, reference}` ->
 * `{id, qrCodeText, qrCode, expiresAt}`; `POST /charges/:id/cancel` -> 2xx, or 409 when the charge is
 * paid; `POST /payouts {amount, currency, pixKeyType, pixKey, reference}` -> `{id}`, or a 4xx
 * `{message}` when the gateway refuses the payout; `GET /payouts/:reference` -> `{id, status: PAID |
 * FAILED | PROCESSING, failReason?}`, or 404 when it never received that payout; `POST /charges/:id/refund
 * {amount, currency, reference}` (reference and Idempotency-Key `deposit-<id>`: one refund per deposit however often
 * asked) -> 2xx `{id}` (the refund's id), any other answer being a failure retried later
 * (docs/rules.md#deposit-refund-retry). `charge.paid` carries `data.payerDocument`, the payer's CPF (or CNPJ) digits
 * (docs/rules.md#deposit-third-party). Amounts are in
 * currency units (cents / 100, docs/rules.md#deposit-initiation). Payout events (`payout.paid`, `payout.failed`)
 * arrive on the signed callback with `data: {id, reference, failReason?}`. The gateway signs each callback
 * (`x-webhook-signature`) over `timestamp + "." + body` with the time in `x-webhook-timestamp` (whole seconds),
 * or over the body alone where WEBHOOK_REQUIRE_TIMESTAMP allows it (docs/rules.md#gateway-callback-timestamp).
 *
 * A payout that times out, fails in transport or gets a 5xx after the retries has an unknown outcome
 * (GatewayError); only a 4xx is a refusal (PayoutRefused), except 408, 409 and 429, which say nothing
 * about whether the money left. Logged failures name the call and what went wrong, never a request
 * body (it holds the PIX key).
 */
import { HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { describeFailure, providerClient } from "../ProviderHttp"
import { Duration, Effect, Layer, type Redacted, Schema } from "effect"
import {
  ChargeAlreadyPaid,
  type ChargeRequest,
  GatewayError,
  PaymentGateway,
  payoutReference,
  PayoutRefused,
  type PayoutRequest,
  type PayoutStatus,
  refundReference,
  type RefundRequest
} from "../PaymentGateway"

const ChargeResponse = Schema.Struct({
  id: Schema.String,
  qrCodeText: Schema.String,
  qrCode: Schema.String,
  expiresAt: Schema.Date
})
const PayoutResponse = Schema.Struct({ id: Schema.String })
const PayoutStatusResponse = Schema.Struct({
  id: Schema.String,
  status: Schema.Literal("PAID", "FAILED", "PROCESSING"),
  failReason: Schema.optional(Schema.String)
})
const Refusal = Schema.Struct({ message: Schema.String })
const RefundResponse = Schema.Struct({ id: Schema.String })

const units = (cents: bigint) => Number(cents) / 100

/** 4xx answers that do not mean "will not pay": the outcome stays unknown. */
const NOT_A_REFUSAL = new Set([408, 409, 429])

/** The gateway's operations over its client at `url` (see `HttpGateway`). */
const makeHttpGateway = Effect.fnUntraced(function*(url: string, key: Redacted.Redacted<string>) {
  const client = yield* providerClient(url, key, { attempt: Duration.seconds(10), retries: 3 })

  const unavailable = (path: string) => (error: unknown) =>
    Effect.logWarning(`Payment gateway ${path} failed: ${describeFailure(error)}`).pipe(
      Effect.zipRight(Effect.fail(new GatewayError({ message: "The payment gateway is unavailable" })))
    )

  const post = (path: string, idempotencyKey: string, body: unknown) =>
    HttpClientRequest.post(path).pipe(
      HttpClientRequest.setHeader("idempotency-key", idempotencyKey),
      HttpClientRequest.bodyUnsafeJson(body),
      client.execute
    )

  const call = <A, I>(path: string, idempotencyKey: string, body: unknown, schema: Schema.Schema<A, I>) =>
    post(path, idempotencyKey, body).pipe(
      Effect.flatMap(HttpClientResponse.filterStatusOk),
      Effect.flatMap(HttpClientResponse.schemaBodyJson(schema)),
      Effect.scoped,
      Effect.catchAll(unavailable(path))
    )

  const cancelCharge = (externalId: string) => {
    const path = `/charges/${encodeURIComponent(externalId)}/cancel`
    return post(path, `cancel-${externalId}`, {}).pipe(
      Effect.scoped,
      Effect.catchAll(unavailable(path)),
      Effect.flatMap((response): Effect.Effect<void, GatewayError | ChargeAlreadyPaid> =>
        response.status === 409
          ? Effect.fail(new ChargeAlreadyPaid({ externalId }))
          : response.status >= 200 && response.status < 300
          ? Effect.void
          : unavailable(path)(`status ${response.status}`)
      )
    )
  }

  const payout = (request: PayoutRequest): Effect.Effect<{ readonly payoutId: string }, GatewayError | PayoutRefused> => {
    const reference = payoutReference(request.withdrawalId)
    const body = {
      amount: units(request.amountCents),
      currency: "BRL",
      pixKeyType: request.pixKeyType,
      pixKey: request.pixKey,
      reference
    }
    return post("/payouts", reference, body).pipe(
      Effect.flatMap((response): Effect.Effect<{ readonly payoutId: string }, unknown> =>
        response.status >= 200 && response.status < 300
          ? Effect.map(HttpClientResponse.schemaBodyJson(PayoutResponse)(response), (p) => ({ payoutId: p.id }))
          : NOT_A_REFUSAL.has(response.status)
          ? Effect.fail(`status ${response.status}`)
          : HttpClientResponse.schemaBodyJson(Refusal)(response).pipe(
            Effect.orElseSucceed(() => ({ message: `status ${response.status}` })),
            Effect.flatMap((refusal) => new PayoutRefused({ message: refusal.message.slice(0, 500) }))
          )
      ),
      Effect.scoped,
      Effect.catchAll((error): Effect.Effect<never, GatewayError | PayoutRefused> =>
        error instanceof PayoutRefused ? Effect.fail(error) : unavailable("/payouts")(error)
      )
    )
  }

  const payoutStatus = (withdrawalId: bigint): Effect.Effect<PayoutStatus, GatewayError> => {
    const path = `/payouts/${payoutReference(withdrawalId)}`
    return HttpClientRequest.get(path).pipe(
      client.execute,
      Effect.flatMap((response): Effect.Effect<PayoutStatus, unknown> =>
        response.status === 404
          ? Effect.succeed({ _tag: "Unknown" })
          : Effect.map(
            Effect.flatMap(HttpClientResponse.filterStatusOk(response), HttpClientResponse.schemaBodyJson(PayoutStatusResponse)),
            (status): PayoutStatus =>
              status.status === "PAID"
                ? { _tag: "Paid", payoutId: status.id }
                : status.status === "FAILED"
                ? { _tag: "Failed", reason: status.failReason ?? "The gateway reported the payout failed" }
                : { _tag: "Processing" }
          )
      ),
      Effect.scoped,
      Effect.catchAll(unavailable(path))
    )
  }

  const refund = (request: RefundRequest): Effect.Effect<{ readonly refundId: string }, GatewayError> => {
    const reference = refundReference(request.depositId)
    return call(
      `/charges/${encodeURIComponent(request.externalId)}/refund`,
      reference,
      { amount: units(request.amountCents), currency: "BRL", reference },
      RefundResponse
    ).pipe(Effect.map((answer) => ({ refundId: answer.id })))
  }

  return {
    createCharge: (request: ChargeRequest) =>
      call(
        "/charges",
        request.reference,
        { amount: units(request.amountCents), currency: "BRL", method: request.method, reference: request.reference },
        ChargeResponse
      ).pipe(Effect.map((charge) => ({ ...charge, externalId: charge.id }))),
    cancelCharge,
    payout,
    payoutStatus,
    refund
  }
})

export const HttpGateway = (url: string, key: Redacted.Redacted<string>) =>
  Layer.effect(PaymentGateway, makeHttpGateway(url, key)).pipe(Layer.provide(NodeHttpClient.layerUndici))
