/**
 * The adapter for the centralized self-exclusion registry at EXCLUSION_REGISTRY_URL (docs/providers.md): `POST
 * /lookups` `{cpf}` with EXCLUSION_REGISTRY_KEY as a bearer token, 5 s per attempt, up to 2 retries with backoff on
 * network errors and 5xx, the whole lookup within 10 s. A timeout, a transport failure, a 5xx after the retries or an
 * answer outside the contract is ExclusionRegistryUnavailable (503, D20). Logged failures name what went wrong, never
 * a request or response body (they hold the CPF).
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Layer, type Redacted } from "effect"
import { ExclusionRegistry, ExclusionRegistryUnavailable, interpretRegistryLookup } from "../ExclusionRegistry"
import { providerClient, providerPost, type ProviderTimeouts } from "../ProviderHttp"

const TIMEOUTS: ProviderTimeouts = { attempt: Duration.seconds(5), total: Duration.seconds(10) }

/** The registry's lookup over its client at `url` (see `HttpExclusionRegistry`). */
const makeHttpExclusionRegistry = Effect.fnUntraced(function*(
  url: string,
  key: Redacted.Redacted<string>,
  timeouts: ProviderTimeouts
) {
  const client = yield* providerClient(url, key, { attempt: timeouts.attempt, retries: 2 })
  const isListed = (cpf: string) =>
    providerPost(
      client,
      { provider: "Self-exclusion registry", path: "/lookups", body: { cpf }, total: timeouts.total },
      interpretRegistryLookup,
      () => new ExclusionRegistryUnavailable({ message: "The self-exclusion registry is unavailable" })
    )
  return { isListed }
})

export const HttpExclusionRegistry = (url: string, key: Redacted.Redacted<string>, timeouts: ProviderTimeouts = TIMEOUTS) =>
  Layer.effect(ExclusionRegistry, makeHttpExclusionRegistry(url, key, timeouts)).pipe(
    Layer.provide(NodeHttpClient.layerUndici)
  )
