/**
 * The centralized self-exclusion registry (docs/rules.md#exclusion-registry, D23; SPA/MF 1.231/2024 as amended by
 * 2.579/2025), an outside system behind a Layer: is this CPF listed as self-excluded from betting? Implementations:
 * the embedded sandbox (SANDBOX on, no EXCLUSION_REGISTRY_URL), whose list is kept by `POST` and `DELETE
 * /sandbox/exclusion-registry`, and the HTTP adapter of docs/providers.md at EXCLUSION_REGISTRY_URL; both read the
 * registry's answer with `interpretRegistryLookup`, so they answer alike.
 */
import { Context, Data, type Effect } from "effect"

/** The registry could not be reached, timed out, failed on its side or answered off-contract (D20: 503). */
export class ExclusionRegistryUnavailable extends Data.TaggedError("ExclusionRegistryUnavailable")<{ readonly message: string }> {}

interface ExclusionRegistryShape {
  /** Whether the CPF (its 11 digits) is listed in the registry. */
  readonly isListed: (cpf: string) => Effect.Effect<boolean, ExclusionRegistryUnavailable>
  /**
   * The sandbox's listing of a CPF (11 digits; `POST /sandbox/exclusion-registry`, docs/rules.md#exclusion-registry-sandbox);
   * undefined for a real registry.
   */
  readonly list?: (cpf: string) => Effect.Effect<void>
  /** The sandbox's removal of a CPF from its list (`DELETE /sandbox/exclusion-registry`); undefined for a real registry. */
  readonly unlist?: (cpf: string) => Effect.Effect<void>
}

export class ExclusionRegistry extends Context.Tag("app/ExclusionRegistry")<ExclusionRegistry, ExclusionRegistryShape>() {}

/**
 * The registry's answer to `POST /lookups` (docs/providers.md), read: 200 `{listed: boolean}` is the answer; anything
 * else (other statuses, a body outside the contract) is `undefined`: unavailable.
 */
export const interpretRegistryLookup = (status: number, body: unknown): boolean | undefined => {
  if (status !== 200 || typeof body !== "object" || body === null) return undefined
  const { listed } = body as { listed?: unknown }
  return typeof listed === "boolean" ? listed : undefined
}
