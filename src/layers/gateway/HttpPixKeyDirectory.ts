/**
 * The adapter for the payment gateway's PIX key directory at PAYMENT_GATEWAY_URL (docs/providers.md): `POST
 * /pix-keys/lookup` `{pixKeyType, pixKey, payerDocument}` with PAYMENT_GATEWAY_KEY as a bearer token, 5 s per
 * attempt, up to 2 retries with backoff on network errors and 5xx, the whole lookup within 10 s. A timeout, a
 * transport failure, a 5xx after the retries or an answer outside the contract is PixKeyDirectoryUnavailable
 * (503, D20). Logged failures name what went wrong, never a request or response body (they hold the key and CPFs).
 */
import { HttpClient, HttpClientError, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Layer, Redacted, Schedule } from "effect"
import { interpretPixKeyLookup, PixKeyDirectory, PixKeyDirectoryUnavailable, type PixKeyLookup } from "../PixKeyDirectory"

const describe = (error: unknown): string =>
  HttpClientError.isHttpClientError(error)
    ? error._tag === "ResponseError" ? `status ${error.response.status}` : `${error.reason} error`
    : error instanceof Error
    ? error.name
    : String(error)

/** Time limits of a lookup: per attempt, and for the whole lookup with its retries (tests shorten them). */
export interface PixKeyDirectoryTimeouts {
  readonly attempt: Duration.DurationInput
  readonly total: Duration.DurationInput
}

const TIMEOUTS: PixKeyDirectoryTimeouts = { attempt: Duration.seconds(5), total: Duration.seconds(10) }

export const HttpPixKeyDirectory = (url: string, key: Redacted.Redacted<string>, timeouts: PixKeyDirectoryTimeouts = TIMEOUTS) =>
  Layer.effect(
    PixKeyDirectory,
    Effect.gen(function*() {
      const client = (yield* HttpClient.HttpClient).pipe(
        HttpClient.mapRequest(HttpClientRequest.prependUrl(url)),
        HttpClient.mapRequest(HttpClientRequest.bearerToken(Redacted.value(key))),
        HttpClient.filterStatus((status) => status < 500),
        HttpClient.transformResponse(Effect.timeout(timeouts.attempt)),
        HttpClient.retryTransient({ times: 2, schedule: Schedule.exponential("200 millis") })
      )
      const lookup = (request: PixKeyLookup) =>
        HttpClientRequest.post("/pix-keys/lookup").pipe(
          HttpClientRequest.bodyUnsafeJson({
            pixKeyType: request.pixKeyType,
            pixKey: request.pixKey,
            payerDocument: request.payerDocument
          }),
          client.execute,
          Effect.flatMap((response) =>
            Effect.map(
              response.status === 200 ? Effect.orElseSucceed(response.json, () => undefined) : Effect.succeed(undefined),
              (body) => interpretPixKeyLookup(response.status, body) ?? `status ${response.status} outside the contract`
            )
          ),
          Effect.scoped,
          Effect.timeout(timeouts.total),
          Effect.catchAll((error) => Effect.succeed(describe(error))),
          Effect.flatMap((result) =>
            typeof result === "string"
              ? Effect.zipRight(
                Effect.logWarning(`PIX key directory /pix-keys/lookup failed: ${result}`),
                Effect.fail(new PixKeyDirectoryUnavailable({ message: "The PIX key directory is unavailable" }))
              )
              : Effect.succeed(result)
          )
        )
      return { lookup }
    })
  ).pipe(Layer.provide(NodeHttpClient.layerUndici))
