/**
 * What the HTTP clients of the outside providers (payment gateway, KYC provider, PIX key directory: docs/providers.md)
 * share: the client set-up of their contracts (base URL, the key as a bearer token, a time limit per attempt, retries
 * with backoff on network errors and 5xx) and how a failure is put in a log line (never a request or response body,
 * which hold CPFs, names and keys).
 */
import { HttpClient, HttpClientError, HttpClientRequest } from "@effect/platform"
import { type Duration, Effect, Redacted, Schedule } from "effect"

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
