/**
 * The adapter for a real payment gateway at PAYMENT_GATEWAY_URL (D9): JSON over HTTPS with the key as
 * a bearer token, a 10 s timeout per call, and up to 3 retries with backoff on network errors and 5xx.
 * Every call carries an `Idempotency-Key`, so a retry after a lost response never charges or pays twice.
 *
 * Wire format: `POST /charges {amount, currency: "BRL", method, reference}` ->
 * `{id, qrCodeText, qrCode, expiresAt}`; `POST /payouts {amount, currency, pixKeyType, pixKey, reference}`
 * -> `{id}`. Amounts are in currency units (cents / 100, SPEC deposit rule 2).
 */
import { HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Layer, Redacted, Schedule, Schema } from "effect"
import { GatewayError, PaymentGateway } from "../PaymentGateway"

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

      const call = <A, I>(path: string, idempotencyKey: string, body: unknown, schema: Schema.Schema<A, I>) =>
        HttpClientRequest.post(path).pipe(
          HttpClientRequest.setHeader("idempotency-key", idempotencyKey),
          HttpClientRequest.bodyUnsafeJson(body),
          client.execute,
          Effect.flatMap(HttpClientResponse.filterStatusOk),
          Effect.flatMap(HttpClientResponse.schemaBodyJson(schema)),
          Effect.scoped,
          Effect.catchAll((error) =>
            Effect.logWarning(`Payment gateway ${path} failed`, error).pipe(
              Effect.zipRight(Effect.fail(new GatewayError({ message: "The payment gateway is unavailable" })))
            )
          )
        )

      return {
        createCharge: (request) =>
          call(
            "/charges",
            request.reference,
            { amount: units(request.amountCents), currency: "BRL", method: request.method, reference: request.reference },
            ChargeResponse
          ).pipe(Effect.map((charge) => ({ ...charge, externalId: charge.id }))),
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
