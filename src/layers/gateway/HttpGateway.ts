/**
 * The adapter for a real payment gateway at PAYMENT_GATEWAY_URL (D9): JSON over HTTPS with the key as
 * a bearer token, a 10 s timeout per call, and up to 3 retries with backoff on network errors and 5xx.
 * Every call carries an `Idempotency-Key`, so a retry after a lost response never charges or pays twice.
 *
 * Wire format: `POST /charges {amount, currency: "BRL", method, reference}` ->
 * `{id, qrCodeText, qrCode, expiresAt}`; `POST /charges/:id/cancel` -> 2xx, or 409 when the charge is
 * paid; `POST /payouts {amount, currency, pixKeyType, pixKey, reference}` -> `{id}`. Amounts are in
 * currency units (cents / 100, SPEC deposit rule 2).
 */
import { HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Layer, Redacted, Schedule, Schema } from "effect"
import { ChargeAlreadyPaid, GatewayError, PaymentGateway } from "../PaymentGateway"

const ChargeResponse = Schema.Struct({
  id: Schema.String,
  qrCodeText: Schema.String,
  qrCode: Schema.String,
  expiresAt: Schema.Date
})
const PayoutResponse = Schema.Struct({ id: Schema.String })

const units = (cents: bigint) => Number(cents) / 100

export const HttpGateway = (url: string, key: Redacted.Redacted<string>) =>
  Layer.effect(
    PaymentGateway,
    Effect.gen(function*() {
      const client = (yield* HttpClient.HttpClient).pipe(
        HttpClient.mapRequest(HttpClientRequest.prependUrl(url)),
        HttpClient.mapRequest(HttpClientRequest.bearerToken(Redacted.value(key))),
        HttpClient.filterStatus((status) => status < 500),
        HttpClient.transformResponse(Effect.timeout(Duration.seconds(10))),
        HttpClient.retryTransient({ times: 3, schedule: Schedule.exponential("200 millis") })
      )

      const unavailable = (path: string) => (error: unknown) =>
        Effect.logWarning(`Payment gateway ${path} failed`, error).pipe(
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

      return {
        createCharge: (request) =>
          call(
            "/charges",
            request.reference,
            { amount: units(request.amountCents), currency: "BRL", method: request.method, reference: request.reference },
            ChargeResponse
          ).pipe(Effect.map((charge) => ({ ...charge, externalId: charge.id }))),
        cancelCharge,
        payout: (request) =>
          call(
            "/payouts",
            `withdrawal-${request.withdrawalId}`,
            {
              amount: units(request.amountCents),
              currency: "BRL",
              pixKeyType: request.pixKeyType,
              pixKey: request.pixKey,
              reference: `withdrawal-${request.withdrawalId}`
            },
            PayoutResponse
          ).pipe(Effect.map((payout) => ({ payoutId: payout.id })))
      }
    })
  ).pipe(Layer.provide(NodeHttpClient.layerUndici))
