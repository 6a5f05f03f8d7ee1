/**
 * The adapter for a real identity (KYC) provider at KYC_PROVIDER_URL (docs/providers.md): `POST /cpf/check`
 * `{cpf, fullName, birthDate}` with the key as a bearer token, 5 s per attempt, up to 2 retries with backoff on
 * network errors and 5xx, the whole check within 15 s. A timeout, a transport failure, a 5xx after the retries
 * or an answer outside the contract is KycUnavailable (503, D20). Logged failures name what went wrong,
 * never a request or response body (they hold the CPF and the name).
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Layer, type Redacted } from "effect"
import { providerClient, providerPost, type ProviderTimeouts } from "../ProviderHttp"
import { interpretKyc, Kyc, type KycRequest, KycUnavailable } from "../Kyc"

const TIMEOUTS: ProviderTimeouts = { attempt: Duration.seconds(5), total: Duration.seconds(15) }

/** The provider's check over its client at `url` (see `HttpKyc`). */
const makeHttpKyc = Effect.fnUntraced(function*(url: string, key: Redacted.Redacted<string>, timeouts: ProviderTimeouts) {
  const client = yield* providerClient(url, key, { attempt: timeouts.attempt, retries: 2 })
  const check = (request: KycRequest) =>
    providerPost(
      client,
      {
        provider: "Identity provider",
        path: "/cpf/check",
        body: { cpf: request.cpf, fullName: request.fullName, birthDate: request.birthDate },
        total: timeouts.total
      },
      (status, body) => interpretKyc(request, status, body),
      () => new KycUnavailable({ message: "The identity provider is unavailable" })
    )
  return { check }
})

export const HttpKyc = (url: string, key: Redacted.Redacted<string>, timeouts: ProviderTimeouts = TIMEOUTS) =>
  Layer.effect(Kyc, makeHttpKyc(url, key, timeouts)).pipe(Layer.provide(NodeHttpClient.layerUndici))
