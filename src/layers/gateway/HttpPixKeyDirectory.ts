/**
 * The adapter for the payment gateway's PIX key directory at PAYMENT_GATEWAY_URL (docs/providers.md): `POST
 * /pix-keys/lookup` `{pixKeyType, pixKey, payerDocument}` with PAYMENT_GATEWAY_KEY as a bearer token, 5 s per
 * attempt, up to 2 retries with backoff on network errors and 5xx, the whole lookup within 10 s. A timeout, a
 * transport failure, a 5xx after the retries or an answer outside the contract is PixKeyDirectoryUnavailable
 * (503, D20). Logged failures name what went wrong, never a request or response body (they hold the key and CPFs).
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Layer, type Redacted } from "effect"
import { providerClient, providerPost, type ProviderTimeouts } from "../ProviderHttp"
import { interpretPixKeyLookup, PixKeyDirectory, PixKeyDirectoryUnavailable, type PixKeyLookup } from "../PixKeyDirectory"

const TIMEOUTS: ProviderTimeouts = { attempt: Duration.seconds(5), total: Duration.seconds(10) }

/** The directory's lookup over its client at `url` (see `HttpPixKeyDirectory`). */
const makeHttpPixKeyDirectory = Effect.fnUntraced(function*(
  url: string,
  key: Redacted.Redacted<string>,
  timeouts: ProviderTimeouts
) {
  const client = yield* providerClient(url, key, { attempt: timeouts.attempt, retries: 2 })
  const lookup = (request: PixKeyLookup) =>
    providerPost(
      client,
      {
        provider: "PIX key directory",
        path: "/pix-keys/lookup",
        body: { pixKeyType: request.pixKeyType, pixKey: request.pixKey, payerDocument: request.payerDocument },
        total: timeouts.total
      },
      interpretPixKeyLookup,
      () => new PixKeyDirectoryUnavailable({ message: "The PIX key directory is unavailable" })
    )
  return { lookup }
})

export const HttpPixKeyDirectory = (url: string, key: Redacted.Redacted<string>, timeouts: ProviderTimeouts = TIMEOUTS) =>
  Layer.effect(PixKeyDirectory, makeHttpPixKeyDirectory(url, key, timeouts)).pipe(
    Layer.provide(NodeHttpClient.layerUndici)
  )
