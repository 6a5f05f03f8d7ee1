/**
 * The adapter for a real identity (KYC) provider at KYC_PROVIDER_URL (docs/providers.md): `POST /cpf/check`
 * `{cpf, fullName, birthDate}` with the key as a bearer token, 5 s per attempt, up to 2 retries with backoff on
 * network errors and 5xx, the whole check within 15 s. A timeout, a transport failure, a 5xx after the retries
 * or an answer outside the contract is KycUnavailable (503, D20). Logged failures name what went wrong,
 * never a request or response body (they hold the CPF and the name).
 */
import { HttpClient, HttpClientError, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Layer, Redacted, Schedule } from "effect"
import { interpretKyc, Kyc, type KycRequest, KycUnavailable } from "../Kyc"

const describe = (error: unknown): string =>
  HttpClientError.isHttpClientError(error)
    ? error._tag === "ResponseError" ? `status ${error.response.status}` : `${error.reason} error`
    : error instanceof Error
    ? error.name
    : String(error)

/** Time limits of a check: per attempt, and for the whole check with its retries (tests shorten them). */
export interface KycTimeouts {
  readonly attempt: Duration.DurationInput
  readonly total: Duration.DurationInput
}

const TIMEOUTS: KycTimeouts = { attempt: Duration.seconds(5), total: Duration.seconds(15) }

export const HttpKyc = (url: string, key: Redacted.Redacted<string>, timeouts: KycTimeouts = TIMEOUTS) =>
  Layer.effect(
    Kyc,
    Effect.gen(function*() {
      const client = (yield* HttpClient.HttpClient).pipe(
        HttpClient.mapRequest(HttpClientRequest.prependUrl(url)),
        HttpClient.mapRequest(HttpClientRequest.bearerToken(Redacted.value(key))),
        HttpClient.filterStatus((status) => status < 500),
        HttpClient.transformResponse(Effect.timeout(timeouts.attempt)),
        HttpClient.retryTransient({ times: 2, schedule: Schedule.exponential("200 millis") })
      )
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
          Effect.catchAll((error) => Effect.succeed(describe(error))),
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
  ).pipe(Layer.provide(NodeHttpClient.layerUndici))
