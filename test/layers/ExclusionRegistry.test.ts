/**
 * The centralized self-exclusion registry port (docs/rules.md#exclusion-registry, docs/providers.md): the real HTTP
 * client against the sandbox twin served over HTTP (the contract), against a registry that fails, hangs or answers
 * off-contract, and the registry chosen by the configuration.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../../src/layers/AppConfig"
import { ExclusionRegistry, ExclusionRegistryUnavailable, interpretRegistryLookup } from "../../src/layers/ExclusionRegistry"
import { ExclusionRegistryFromConfig } from "../../src/layers/registry/ExclusionRegistryFromConfig"
import { HttpExclusionRegistry } from "../../src/layers/registry/HttpExclusionRegistry"
import { sandboxRegistryAnswer } from "../../src/layers/registry/SandboxExclusionRegistry"
import { cpfOf } from "../support/Cpf"
import { FAST_LIMITS, providerServer } from "../support/ProviderServer"
import { testConfig } from "../support/TestApp"

/** The real client, alive until the test's scope closes. */
const client = (url: string) =>
  Effect.map(Layer.build(HttpExclusionRegistry(url, Redacted.make("registry-key"), FAST_LIMITS)), Context.get(ExclusionRegistry))

const excluded = cpfOf("123456789")
const free = cpfOf("987654321")
const unavailable = new ExclusionRegistryUnavailable({ message: "The self-exclusion registry is unavailable" })

describe("the HTTP self-exclusion registry client against the sandbox twin over HTTP (docs/providers.md)", () => {
  it.live("POST /lookups {cpf} with the registry's key: a listed CPF is listed, any other is not", () =>
    Effect.gen(function*() {
      const sandbox = yield* providerServer((body) => sandboxRegistryAnswer(body, new Set([excluded])))
      const registryClient = yield* client(`${sandbox.url}/v1/`)
      expect(yield* registryClient.isListed(excluded)).toBe(true)
      expect(yield* registryClient.isListed(free)).toBe(false)
      expect(sandbox.seen.map((s) => [s.method, s.path, s.headers.authorization, s.headers["content-type"]])).toEqual(
        Array(2).fill(["POST", "/v1/lookups", "Bearer registry-key", "application/json"])
      )
      expect(sandbox.seen.map((s) => s.body)).toEqual([{ cpf: excluded }, { cpf: free }])
      // The twin refuses a lookup without an 11-digit CPF: 400, which the client takes as off-contract.
      expect(sandboxRegistryAnswer({ cpf: "123" }).status).toBe(400)
      expect(yield* Effect.flip(registryClient.isListed("123"))).toEqual(unavailable)
    }).pipe(Effect.scoped))

  it.live("5xx after the retries, a hung registry, a closed port, a 404 or 401, or an answer outside the contract: unavailable", () =>
    Effect.gen(function*() {
      const failing = yield* providerServer(() => ({ status: 503, body: {} }))
      expect(yield* Effect.flip((yield* client(failing.url)).isListed(excluded))).toEqual(unavailable)
      expect(failing.seen).toHaveLength(3)

      const recovering = yield* providerServer((body, seen) => seen.length < 2 ? { status: 502, body: {} } : sandboxRegistryAnswer(body, new Set([excluded])))
      expect(yield* (yield* client(recovering.url)).isListed(excluded)).toBe(true)

      const hung = yield* providerServer(() => undefined)
      const started = Date.now()
      expect(yield* Effect.flip((yield* client(hung.url)).isListed(excluded))).toEqual(unavailable)
      expect(Date.now() - started).toBeLessThan(3_500)

      const closed = yield* providerServer(() => ({ status: 200, body: { listed: false } }))
      closed.close()
      expect(yield* Effect.flip((yield* client(closed.url)).isListed(excluded))).toEqual(unavailable)

      for (
        const [status, body] of [
          [404, { message: "not found" }],
          [401, { message: "bad key" }],
          [201, { listed: false }],
          [200, { listed: "false" }],
          [200, { listed: 0 }],
          [200, {}],
          [200, "text"],
          [200, null]
        ] as const
      ) {
        const odd = yield* providerServer(() => ({ status, body }))
        expect(yield* Effect.flip((yield* client(odd.url)).isListed(excluded)), `${status} ${JSON.stringify(body)}`).toEqual(unavailable)
      }
    }).pipe(Effect.scoped))

  it("interpretRegistryLookup: only 200 with a boolean `listed` is an answer", () => {
    expect(interpretRegistryLookup(200, { listed: true, since: "2026-01-01" })).toBe(true)
    expect(interpretRegistryLookup(200, { listed: false })).toBe(false)
    expect(interpretRegistryLookup(200, { listed: "true" })).toBeUndefined()
    expect(interpretRegistryLookup(404, { listed: false })).toBeUndefined()
    expect(interpretRegistryLookup(500, { listed: true })).toBeUndefined()
  })
})

describe("the self-exclusion registry chosen by the configuration", () => {
  const chosen = (config: Partial<typeof testConfig>) =>
    Layer.build(ExclusionRegistryFromConfig).pipe(
      Effect.provide(Layer.succeed(AppConfig, { ...testConfig, ...config })),
      Effect.map(Context.get(ExclusionRegistry)),
      Effect.either
    )

  it.scoped("the sandbox (with list and unlist) with SANDBOX on and no EXCLUSION_REGISTRY_URL; the real one without them; under BR without either, no start", () =>
    Effect.gen(function*() {
      const sandbox = yield* chosen({ sandbox: true, jurisdiction: "BR" })
      if (sandbox._tag === "Left") return expect.unreachable(sandbox.left.message)
      const twin = sandbox.right
      expect(yield* twin.isListed(excluded)).toBe(false)
      yield* twin.list!(excluded)
      yield* twin.list!(excluded)
      expect(yield* twin.isListed(excluded)).toBe(true)
      expect(yield* twin.isListed(free)).toBe(false)
      yield* twin.unlist!(excluded)
      yield* twin.unlist!(free)
      expect(yield* twin.isListed(excluded)).toBe(false)
      // Each instance keeps its own list (in memory).
      const another = yield* chosen({ sandbox: true })
      yield* twin.list!(excluded)
      expect(another._tag === "Right" && (yield* another.right.isListed(excluded))).toBe(false)

      const real = yield* chosen({
        sandbox: true,
        jurisdiction: "BR",
        exclusionRegistry: { url: Option.some("https://registry.example.com"), key: Option.some(Redacted.make("k")) }
      })
      expect(real._tag === "Right" && [real.right.list, real.right.unlist]).toEqual([undefined, undefined])

      const refused = yield* chosen({ sandbox: false, jurisdiction: "BR" })
      expect(refused._tag === "Left" && refused.left.message).toBe(
        "EXCLUSION_REGISTRY_URL is required under JURISDICTION=BR without SANDBOX=true"
      )
      // Under NONE the registry is never consulted: the service starts, with none.
      const none = yield* chosen({ sandbox: false, jurisdiction: "NONE" })
      if (none._tag === "Left") return expect.unreachable(none.left.message)
      expect(none.right.list).toBeUndefined()
      expect(yield* Effect.flip(none.right.isListed(excluded))).toBeInstanceOf(ExclusionRegistryUnavailable)
    }))
})
