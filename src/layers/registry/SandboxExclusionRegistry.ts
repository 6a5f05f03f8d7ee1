/**
 * The embedded sandbox self-exclusion registry (docs/rules.md#exclusion-registry-sandbox), used with SANDBOX on and no
 * EXCLUSION_REGISTRY_URL: a CPF is listed from its `POST /sandbox/exclusion-registry` until its `DELETE`; no other
 * CPF is. The list lives in this process only, as the sandbox PIX key directory's registrations do: a restart
 * forgets it and two instances do not share it. `sandboxRegistryAnswer` is the registry's side of
 * docs/providers.md, so the contract test serves it over HTTP to the real client.
 */
import { Effect, Layer } from "effect"
import { ExclusionRegistry, ExclusionRegistryUnavailable, interpretRegistryLookup } from "../ExclusionRegistry"

/**
 * The sandbox's answer to `POST /lookups` with `body`, given the listed CPFs (11 digits each): status and JSON body,
 * as the wire carries them.
 */
export const sandboxRegistryAnswer = (
  body: unknown,
  listed: ReadonlySet<string> = new Set()
): { readonly status: number; readonly body: unknown } => {
  const { cpf } = (typeof body === "object" && body !== null ? body : {}) as { cpf?: unknown }
  if (typeof cpf !== "string" || !/^\d{11}$/.test(cpf)) {
    return { status: 400, body: { message: "cpf (11 digits) is required" } }
  }
  return { status: 200, body: { listed: listed.has(cpf) } }
}

export const SandboxExclusionRegistry = Layer.sync(ExclusionRegistry, () => {
  const listed = new Set<string>()
  return {
    isListed: (cpf) => {
      const answer = sandboxRegistryAnswer({ cpf }, listed)
      const result = interpretRegistryLookup(answer.status, answer.body)
      return result === undefined
        ? Effect.fail(new ExclusionRegistryUnavailable({ message: "The self-exclusion registry is unavailable" }))
        : Effect.succeed(result)
    },
    list: (cpf) => Effect.sync(() => void listed.add(cpf)),
    unlist: (cpf) => Effect.sync(() => void listed.delete(cpf))
  }
})
