/**
 * The adapter for a real identity (KYC) provider at KYC_PROVIDER_URL (docs/providers.md): `POST /cpf/check`
 * `{cpf, fullName, birthDate}` with the key as a bearer token, 5 s per attempt, up to 2 retries with backoff on
 * network errors and 5xx, the whole check within 15 s. A timeout, a transport failure, a 5xx after the retries
 * or an answer outside the contract is KycUnavailable (503, D20). Logged failures name what went wrong,
 * never a request or response body (they hold the CPF and the name).
 */
import { HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Layer, type Redacted } from "effect"
import { describeFailure, providerClient } from "../ProviderHttp"
import { interpretKyc, Kyc, type KycRequest, KycUnavailable } from "../Kyc"

/** Time limits of a check: per attempt, and for the whole check with its retries (tests shorten them). */
export interface KycTimeouts {
  readonly attempt: Duration.DurationInput
  readonly total: Duration.DurationInput
}

const TIMEOUTS: KycTimeouts = { attempt: Duration.seconds(5), total: Duration.seconds(15) }

/** The provider's check over its client at `url` (see `HttpKyc`). */
const makeHttpKyc = Effect.fnUntraced(function*(url: string, key: Redacted.Redacted<string>, timeouts: KycTimeouts) {
  const client = yield* providerClient(url, key, { attempt: timeouts.attempt, retries: 2 })
  const check = (request: KycRequest) =>
    HttpClientRequest.post("/cpf/check").pipe(
      HttpClientRequest.bodyUnsafeJson({ cpf: request.cpf, fullName: request.fullName, birthDate: request.birthDate }),
      client.execute,
      Effect.flatMap((response) =>
        Effect.map(
          response.status === 200 ? Effect.orElseSucceed(response.json, () => undefined) : Effect.succeed(undefined),
          (body) => interpretKyc(request, response.status, body) ?? `status ${response.status} outside the contract`
        )
      ),
      Effect.scoped,
      Effect.timeout(timeouts.total),
      Effect.catchAll((error) => Effect.succeed(describeFailure(error))),
      Effect.flatMap((result) =>
        typeof result === "string"
          ? Effect.zipRight(
            Effect.logWarning(`Identity provider /cpf/check failed: ${result}`),
            Effect.fail(new KycUnavailable({ message: "The identity provider is unavailable" }))
          )
          : Effect.succeed(result)
      )
    )
  return { check }
})

export const HttpKyc = (url: string, key: Redacted.Redacted<string>, timeouts: KycTimeouts = TIMEOUTS) =>
  Layer.effect(Kyc, makeHttpKyc(url, key, timeouts)).pipe(Layer.provide(NodeHttpClient.layerUndici))
