/**
 * The gateway's PIX key directory (docs/rules.md#pix-key-owner, docs/providers.md): the real HTTP client against the
 * sandbox twin served over HTTP (the contract), against a directory that fails or hangs, and the directory chosen
 * by the configuration.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../../src/layers/AppConfig"
import { HttpPixKeyDirectory } from "../../src/layers/gateway/HttpPixKeyDirectory"
import { PixKeyDirectoryFromConfig } from "../../src/layers/gateway/PixKeyDirectoryFromConfig"
import { sandboxPixKeyAnswer } from "../../src/layers/gateway/SandboxPixKeyDirectory"
import { PixKeyDirectory, PixKeyDirectoryUnavailable } from "../../src/layers/PixKeyDirectory"
import { cpfOf } from "../support/Cpf"
import { FAST_LIMITS, providerServer } from "../support/ProviderServer"
import { testConfig } from "../support/TestApp"

/** The real client, alive until the test's scope closes. */
const client = (url: string) =>
  Effect.map(Layer.build(HttpPixKeyDirectory(url, Redacted.make("gateway-key"), FAST_LIMITS)), Context.get(PixKeyDirectory))

const holder = cpfOf("123456789")
const other = cpfOf("987654321")

describe("the HTTP PIX key directory client against the sandbox twin over HTTP (docs/providers.md)", () => {
  it.live("POST /pix-keys/lookup {pixKeyType, pixKey, payerDocument} with the gateway's key: a CPF key, a registered key, any other key", () =>
    Effect.gen(function*() {
      const registered = new Map([["EMAIL:someone@example.com", other]])
      const sandbox = yield* providerServer((body) => sandboxPixKeyAnswer(body, registered))
      const pix = yield* client(`${sandbox.url}/v1/`)
      // A CPF key belongs to that CPF, whoever asks.
      expect(yield* pix.lookup({ pixKeyType: "CPF", pixKey: other, payerDocument: holder })).toEqual({ _tag: "Owner", document: other })
      // A registered key to its owner.
      expect(yield* pix.lookup({ pixKeyType: "EMAIL", pixKey: "someone@example.com", payerDocument: holder }))
        .toEqual({ _tag: "Owner", document: other })
      // Any other key to the payer the lookup is made for.
      expect(yield* pix.lookup({ pixKeyType: "PHONE", pixKey: "+5511912345678", payerDocument: holder }))
        .toEqual({ _tag: "Owner", document: holder })
      expect(sandbox.seen.map((s) => [s.method, s.path, s.headers.authorization, s.headers["content-type"]])).toEqual(
        Array(3).fill(["POST", "/v1/pix-keys/lookup", "Bearer gateway-key", "application/json"])
      )
      expect(sandbox.seen[0]!.body).toEqual({ pixKeyType: "CPF", pixKey: other, payerDocument: holder })
      // The twin refuses a lookup without a payer: 400, which the client takes as off-contract.
      expect(sandboxPixKeyAnswer({ pixKeyType: "EMAIL", pixKey: "a@b.co" }).status).toBe(400)
    }).pipe(Effect.scoped))

  it.live("404 is an unknown key (NotFound); a CNPJ owner is read as such", () =>
    Effect.gen(function*() {
      const registry = yield* providerServer((body) =>
        (body as { pixKey: string }).pixKey === "nobody@example.com"
          ? { status: 404, body: { message: "key not found" } }
          : { status: 200, body: { ownerDocument: "11222333000181", pixKeyType: "EMAIL" } }
      )
      const pix = yield* client(registry.url)
      expect(yield* pix.lookup({ pixKeyType: "EMAIL", pixKey: "nobody@example.com", payerDocument: holder })).toEqual({ _tag: "NotFound" })
      expect(yield* pix.lookup({ pixKeyType: "EMAIL", pixKey: "shop@example.com", payerDocument: holder }))
        .toEqual({ _tag: "Owner", document: "11222333000181" })
    }).pipe(Effect.scoped))

  it.live("5xx after the retries, a hung directory, a closed port, a 401 or an answer outside the contract: unavailable", () =>
    Effect.gen(function*() {
      const unavailable = new PixKeyDirectoryUnavailable({ message: "The PIX key directory is unavailable" })
      const request = { pixKeyType: "EMAIL", pixKey: "player@example.com", payerDocument: holder }
      const failing = yield* providerServer(() => ({ status: 503, body: {} }))
      expect(yield* Effect.flip((yield* client(failing.url)).lookup(request))).toEqual(unavailable)
      expect(failing.seen).toHaveLength(3)

      const recovering = yield* providerServer((body, seen) => seen.length < 2 ? { status: 502, body: {} } : sandboxPixKeyAnswer(body))
      expect(yield* (yield* client(recovering.url)).lookup(request)).toEqual({ _tag: "Owner", document: holder })

      const hung = yield* providerServer(() => undefined)
      const started = Date.now()
      expect(yield* Effect.flip((yield* client(hung.url)).lookup(request))).toEqual(unavailable)
      expect(Date.now() - started).toBeLessThan(3_500)

      const closed = yield* providerServer(() => ({ status: 200, body: {} }))
      closed.close()
      expect(yield* Effect.flip((yield* client(closed.url)).lookup(request))).toEqual(unavailable)

      for (
        const [status, body] of [[401, { message: "bad key" }], [200, { ownerDocument: 7 }], [200, { ownerDocument: "123" }], [200, "text"]] as const
      ) {
        const odd = yield* providerServer(() => ({ status, body }))
        expect(yield* Effect.flip((yield* client(odd.url)).lookup(request)), `${status} ${JSON.stringify(body)}`).toEqual(unavailable)
      }
    }).pipe(Effect.scoped))
})

describe("the PIX key directory chosen by the configuration", () => {
  const chosen = (config: Partial<typeof testConfig>) =>
    Layer.build(PixKeyDirectoryFromConfig).pipe(
      Effect.provide(Layer.succeed(AppConfig, { ...testConfig, ...config })),
      Effect.map(Context.get(PixKeyDirectory))
    )

  it.scoped("the sandbox's (with registration) while the sandbox gateway is in use, else the gateway's, without registration", () =>
    Effect.gen(function*() {
      const sandbox = yield* chosen({ sandbox: true })
      expect(sandbox.register).toBeDefined()
      yield* sandbox.register!({ pixKeyType: "EMAIL", pixKey: "mine@example.com" }, other)
      expect(yield* sandbox.lookup({ pixKeyType: "EMAIL", pixKey: "mine@example.com", payerDocument: holder }))
        .toEqual({ _tag: "Owner", document: other })
      expect(yield* sandbox.lookup({ pixKeyType: "EMAIL", pixKey: "yours@example.com", payerDocument: holder }))
        .toEqual({ _tag: "Owner", document: holder })
      const real = yield* chosen({
        sandbox: false,
        gateway: { ...testConfig.gateway, url: Option.some("https://gateway.example.com"), key: Option.some(Redacted.make("k")) }
      })
      expect(real.register).toBeUndefined()
      const none = yield* chosen({ sandbox: false })
      expect(yield* Effect.flip(none.lookup({ pixKeyType: "CPF", pixKey: holder, payerDocument: holder }))).toBeInstanceOf(PixKeyDirectoryUnavailable)
    }))
})
