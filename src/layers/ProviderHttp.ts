/**
 * What the HTTP clients of the outside providers (payment gateway, KYC provider, PIX key directory, self-exclusion
 * registry: docs/providers.md) share: the client set-up of their contracts (base URL, the key as a bearer token, a time
 * limit per attempt, retries with backoff on network errors and 5xx), how a failure is put in a log line (never a
 * request or response body, which hold CPFs, names and keys), and the one-call contracts' call (`providerPost`: the
 * KYC check, the PIX key lookup, the registry lookup).
 */
import { HttpClient, HttpClientError, HttpClientRequest } from "@effect/platform"
import { type Duration, Effect, Either, Redacted, Schedule } from "effect"

/** Time limits of a one-call contract's call: per attempt, and for the whole call with its retries (tests shorten them). */
export interface ProviderTimeouts {
  readonly attempt: Duration.DurationInput
  readonly total: Duration.DurationInput
}

/** A provider's client: `url` prefixed, `key` as bearer, 5xx retried `retries` times, each attempt within `attempt`. */
export const providerClient = (
  url: string,
  key: Redacted.Redacted<string>,
  options: { readonly attempt: Duration.DurationInput; readonly retries: number }
) =>
  Effect.map(HttpClient.HttpClient, (client) =>
    client.pipe(
      HttpClient.mapRequest(HttpClientRequest.prependUrl(url)),
      HttpClient.mapRequest(HttpClientRequest.bearerToken(Redacted.value(key))),
      HttpClient.filterStatus((status) => status < 500),
      HttpClient.transformResponse(Effect.timeout(options.attempt)),
      HttpClient.retryTransient({ times: options.retries, schedule: Schedule.exponential("200 millis") })
    ))

/** What went wrong, in words fit for a log line. */
export const describeFailure = (error: unknown): string =>
  HttpClientError.isHttpClientError(error)
    ? error._tag === "ResponseError" ? `status ${error.response.status}` : `${error.reason} error`
    : error instanceof Error
    ? error.name
    : "unexpected response"

type ProviderClient = Effect.Effect.Success<ReturnType<typeof providerClient>>

/**
 * One call of a provider's contract: `POST path` with `body`, the whole call (its retries too) within `total`. A 200's
 * JSON body, or no body for another status, is read by `interpret`, which answers undefined for an answer outside the
 * contract. A timeout, a transport failure, a 5xx after the retries or an answer outside the contract is logged as
 * `"<provider> <path> failed: <what went wrong>"` and fails with `unavailable()`.
 */
export const providerPost = <A, E>(
  client: ProviderClient,
  call: { readonly provider: string; readonly path: string; readonly body: unknown; readonly total: Duration.DurationInput },
  interpret: (status: number, body: unknown) => A | undefined,
  unavailable: () => E
): Effect.Effect<A, E> =>
  HttpClientRequest.post(call.path).pipe(
    HttpClientRequest.bodyUnsafeJson(call.body),
    client.execute,
    Effect.flatMap((response) =>
      Effect.map(
        response.status === 200 ? Effect.orElseSucceed(response.json, () => undefined) : Effect.succeed(undefined),
        (body): Either.Either<A, string> => {
          const answer = interpret(response.status, body)
          return answer === undefined ? Either.left(`status ${response.status} outside the contract`) : Either.right(answer)
        }
      )
    ),
    Effect.scoped,
    Effect.timeout(call.total),
    Effect.catchAll((error) => Effect.succeed<Either.Either<A, string>>(Either.left(describeFailure(error)))),
    Effect.flatMap(Either.match({
      onLeft: (failure): Effect.Effect<A, E> =>
        Effect.zipRight(Effect.logWarning(`${call.provider} ${call.path} failed: ${failure}`), Effect.fail(unavailable())),
      onRight: Effect.succeed
    }))
  )
