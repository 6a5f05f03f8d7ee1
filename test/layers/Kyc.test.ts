/**
 * The KYC port (docs/rules.md#kyc-provider, docs/providers.md): the real HTTP client against the sandbox twin
 * served over HTTP (the contract), against a provider that refuses, fails or hangs, and the provider chosen
 * by the configuration.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../../src/layers/AppConfig"
import { Kyc, KycUnavailable } from "../../src/layers/Kyc"
import { HttpKyc } from "../../src/layers/kyc/HttpKyc"
import { KycFromConfig } from "../../src/layers/kyc/KycFromConfig"
import { sandboxKycAnswer } from "../../src/layers/kyc/SandboxKyc"
import { FAST_LIMITS, providerServer } from "../support/ProviderServer"
import { testConfig } from "../support/TestApp"

/** The real client, alive until the test's scope closes. */
const client = (url: string) => Effect.map(Layer.build(HttpKyc(url, Redacted.make("kyc-key"), FAST_LIMITS)), Context.get(Kyc))

const maria = { cpf: "12345678909", fullName: "Maria da Silva", birthDate: "1990-05-17" }

describe("the HTTP KYC client against the sandbox twin over HTTP (docs/providers.md)", () => {
  it.live("POST /cpf/check {cpf, fullName, birthDate} with the key as bearer: regular, and 000... irregular", () =>
    Effect.gen(function*() {
      const sandbox = yield* providerServer((body) => sandboxKycAnswer(body))
      const kyc = yield* client(`${sandbox.url}/v1/`)
      expect(yield* kyc.check(maria)).toEqual({ _tag: "Regular" })
      expect(yield* kyc.check({ ...maria, cpf: "00012345600" })).toEqual({ _tag: "Refused", reason: "irregular CPF" })
      expect(sandbox.seen.map((s) => [s.method, s.path, s.headers.authorization, s.headers["content-type"]])).toEqual([
        ["POST", "/v1/cpf/check", "Bearer kyc-key", "application/json"],
        ["POST", "/v1/cpf/check", "Bearer kyc-key", "application/json"]
      ])
      expect(sandbox.seen[0]!.body).toEqual(maria)
    }).pipe(Effect.scoped))

  it.live("another holder's name or an unknown CPF (404) is Refused; names compare without accents, case or extra spaces", () =>
    Effect.gen(function*() {
      const registry = yield* providerServer((body) =>
        (body as { cpf: string }).cpf === "11111111111"
          ? { status: 404, body: { message: "CPF not found" } }
          : { status: 200, body: { situation: "REGULAR", holderName: "MARIA  DA SÍLVA" } }
      )
      const kyc = yield* client(registry.url)
      expect(yield* kyc.check({ ...maria, fullName: "maria da silva" })).toEqual({ _tag: "Regular" })
      expect(yield* kyc.check({ ...maria, fullName: "Mario da Silva" })).toEqual({ _tag: "Refused", reason: "name mismatch" })
      expect(yield* kyc.check({ ...maria, cpf: "11111111111" })).toEqual({ _tag: "Refused", reason: "CPF not found" })
    }).pipe(Effect.scoped))

  it.live("5xx after the retries, a hung provider, a closed port, a 401 or an answer outside the contract: KycUnavailable", () =>
    Effect.gen(function*() {
      const unavailable = new KycUnavailable({ message: "The identity provider is unavailable" })
      const failing = yield* providerServer(() => ({ status: 503, body: {} }))
      expect(yield* Effect.flip((yield* client(failing.url)).check(maria))).toEqual(unavailable)
      expect(failing.seen).toHaveLength(3)

      const recovering = yield* providerServer((_, seen) => seen.length < 2 ? { status: 502, body: {} } : sandboxKycAnswer(maria))
      expect(yield* (yield* client(recovering.url)).check(maria)).toEqual({ _tag: "Regular" })

      const hung = yield* providerServer(() => undefined)
      const started = Date.now()
      expect(yield* Effect.flip((yield* client(hung.url)).check(maria))).toEqual(unavailable)
      expect(Date.now() - started).toBeLessThan(3_500)

      const closed = yield* providerServer(() => ({ status: 200, body: {} }))
      closed.close()
      expect(yield* Effect.flip((yield* client(closed.url)).check(maria))).toEqual(unavailable)

      for (const [status, body] of [[401, { message: "bad key" }], [200, { situation: 7 }], [200, "text"]] as const) {
        const odd = yield* providerServer(() => ({ status, body }))
        expect(yield* Effect.flip((yield* client(odd.url)).check(maria)), `${status} ${JSON.stringify(body)}`).toEqual(unavailable)
      }
    }).pipe(Effect.scoped))
})

describe("the KYC provider chosen by the configuration", () => {
  const chosen = (config: Partial<typeof testConfig>) =>
    Layer.build(KycFromConfig).pipe(
      Effect.provide(Layer.succeed(AppConfig, { ...testConfig, ...config })),
      Effect.map(Context.get(Kyc)),
      Effect.either
    )

  it.scoped("the sandbox with SANDBOX on and no KYC_PROVIDER_URL; under BR without either, no start", () =>
    Effect.gen(function*() {
      const sandbox = yield* chosen({ sandbox: true, jurisdiction: "BR" })
      expect(sandbox._tag === "Right" && (yield* sandbox.right.check({ ...maria, cpf: "00012345600" }))._tag).toBe("Refused")
      const refused = yield* chosen({ sandbox: false, jurisdiction: "BR" })
      expect(refused._tag === "Left" && refused.left.message).toBe(
        "KYC_PROVIDER_URL is required under JURISDICTION=BR without SANDBOX=true"
      )
      // Under NONE nothing is ever checked: the service starts, with no provider.
      const none = yield* chosen({ sandbox: false, jurisdiction: "NONE" })
      expect(none._tag === "Right" && (yield* Effect.flip(none.right.check(maria)))).toBeInstanceOf(KycUnavailable)
      const real = yield* chosen({
        sandbox: false,
        jurisdiction: "BR",
        kyc: { url: Option.some("https://kyc.example.com"), key: Option.some(Redacted.make("k")) }
      })
      expect(real._tag).toBe("Right")
    }))
})
