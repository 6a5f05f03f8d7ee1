/**
 * The adapter for the payment gateway's PIX key directory at PAYMENT_GATEWAY_URL (docs/providers.md): `POST
 * /pix-keys/lookup` `{pixKeyType, pixKey, payerDocument}` with PAYMENT_GATEWAY_KEY as a bearer token, 5 s per
 * attempt, up to 2 retries with backoff on network errors and 5xx, the whole lookup within 10 s. A timeout, a
 * transport failure, a 5xx after the retries or an answer outside the contract is PixKeyDirectoryUnavailable
 * (503, D20). Logged failures name what went wrong, never a request or response body (they hold the key and CPFs).
 */
import { HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Layer, type Redacted } from "effect"
import { describeFailure, providerClient } from "../ProviderHttp"
import { interpretPixKeyLookup, PixKeyDirectory, PixKeyDirectoryUnavailable, type PixKeyLookup } from "../PixKeyDirectory"

/** Time limits of a lookup: per attempt, and for the whole lookup with its retries (tests shorten them). */
export interface PixKeyDirectoryTimeouts {
  readonly attempt: Duration.DurationInput
  readonly total: Duration.DurationInput
}

const TIMEOUTS: PixKeyDirectoryTimeouts = { attempt: Duration.seconds(5), total: Duration.seconds(10) }

/** The directory's lookup over its client at `url` (see `HttpPixKeyDirectory`). */
const makeHttpPixKeyDirectory = Effect.fnUntraced(function*(
  url: string,
  key: Redacted.Redacted<string>,
  timeouts: PixKeyDirectoryTimeouts
) {
  const client = yield* providerClient(url, key, { attempt: timeouts.attempt, retries: 2 })
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
      Effect.catchAll((error) => Effect.succeed(describeFailure(error))),
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

export const HttpPixKeyDirectory = (url: string, key: Redacted.Redacted<string>, timeouts: PixKeyDirectoryTimeouts = TIMEOUTS) =>
  Layer.effect(PixKeyDirectory, makeHttpPixKeyDirectory(url, key, timeouts)).pipe(
    Layer.provide(NodeHttpClient.layerUndici)
  )
