/**
 * The adapter for the centralized self-exclusion registry at EXCLUSION_REGISTRY_URL (docs/providers.md): `POST
 * /lookups` `{cpf}` with EXCLUSION_REGISTRY_KEY as a bearer token, 5 s per attempt, up to 2 retries with backoff on
 * network errors and 5xx, the whole lookup within 10 s. A timeout, a transport failure, a 5xx after the retries or an
 * answer outside the contract is ExclusionRegistryUnavailable (503, D20). Logged failures name what went wrong, never
 * a request or response body (they hold the CPF).
 */
import { HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Layer, type Redacted } from "effect"
import { ExclusionRegistry, ExclusionRegistryUnavailable, interpretRegistryLookup } from "../ExclusionRegistry"
import { describeFailure, providerClient } from "../ProviderHttp"

/** Time limits of a lookup: per attempt, and for the whole lookup with its retries (tests shorten them). */
export interface ExclusionRegistryTimeouts {
  readonly attempt: Duration.DurationInput
  readonly total: Duration.DurationInput
}

const TIMEOUTS: ExclusionRegistryTimeouts = { attempt: Duration.seconds(5), total: Duration.seconds(10) }

/** The registry's lookup over its client at `url` (see `HttpExclusionRegistry`). */
const makeHttpExclusionRegistry = Effect.fnUntraced(function*(
  url: string,
  key: Redacted.Redacted<string>,
  timeouts: ExclusionRegistryTimeouts
) {
  const client = yield* providerClient(url, key, { attempt: timeouts.attempt, retries: 2 })
  const isListed = (cpf: string) =>
    HttpClientRequest.post("/lookups").pipe(
      HttpClientRequest.bodyUnsafeJson({ cpf }),
      client.execute,
      Effect.flatMap((response) =>
        Effect.map(
          response.status === 200 ? Effect.orElseSucceed(response.json, () => undefined) : Effect.succeed(undefined),
          (body) => interpretRegistryLookup(response.status, body) ?? `status ${response.status} outside the contract`
        )
      ),
      Effect.scoped,
      Effect.timeout(timeouts.total),
      Effect.catchAll((error) => Effect.succeed(describeFailure(error))),
      Effect.flatMap((result) =>
        typeof result === "string"
          ? Effect.zipRight(
            Effect.logWarning(`Self-exclusion registry /lookups failed: ${result}`),
            Effect.fail(new ExclusionRegistryUnavailable({ message: "The self-exclusion registry is unavailable" }))
          )
          : Effect.succeed(result)
      )
    )
  return { isListed }
})

export const HttpExclusionRegistry = (url: string, key: Redacted.Redacted<string>, timeouts: ExclusionRegistryTimeouts = TIMEOUTS) =>
  Layer.effect(ExclusionRegistry, makeHttpExclusionRegistry(url, key, timeouts)).pipe(
    Layer.provide(NodeHttpClient.layerUndici)
  )
