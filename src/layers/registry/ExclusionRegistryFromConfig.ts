/**
 * The real self-exclusion registry when EXCLUSION_REGISTRY_URL is set, else the embedded sandbox when SANDBOX allows it
 * (docs/rules.md#exclusion-registry). Under JURISDICTION=BR without either the service does not start; under NONE
 * (where the registry is never consulted) a registry that is always unavailable stands in.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { AppConfig, StartupError, usesSandboxExclusionRegistry } from "../AppConfig"
import { ExclusionRegistry, ExclusionRegistryUnavailable } from "../ExclusionRegistry"
import { HttpExclusionRegistry } from "./HttpExclusionRegistry"
import { SandboxExclusionRegistry } from "./SandboxExclusionRegistry"

const NoRegistry = Layer.succeed(ExclusionRegistry, {
  isListed: () => Effect.fail(new ExclusionRegistryUnavailable({ message: "No self-exclusion registry is configured" }))
})

export const ExclusionRegistryFromConfig = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isSome(config.exclusionRegistry.url)) {
      const url = config.exclusionRegistry.url.value
      return yield* Effect.as(
        Effect.logInfo(`Self-exclusion registry: ${url}`),
        HttpExclusionRegistry(url, Option.getOrElse(config.exclusionRegistry.key, () => Redacted.make("")))
      )
    }
    if (usesSandboxExclusionRegistry(config)) return SandboxExclusionRegistry
    if (config.jurisdiction === "BR") {
      return yield* Effect.fail(
        new StartupError({ message: "EXCLUSION_REGISTRY_URL is required under JURISDICTION=BR without SANDBOX=true" })
      )
    }
    return NoRegistry
  })
)
