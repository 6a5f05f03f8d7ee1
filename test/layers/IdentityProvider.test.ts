/**
 * OpenID Connect sign-in (docs/rules.md#sign-in) end to end against the embedded development provider, on real
 * time.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import { AppConfig, type AppConfigShape, StartupError } from "../../src/layers/AppConfig"
import { DevIdentityProvider } from "../../src/layers/DevIdentityProvider"
import { IdentityProvider } from "../../src/layers/IdentityProvider"
import { KeyValue } from "../../src/layers/stores/KeyValue"
import { InvalidLoginCallback } from "../../src/schema/identity/Identity"
import { type CookieJar, makeCookieJar, signInAtDevProvider } from "../support/DevSignIn"
import { testConfig } from "../support/TestApp"

const config = (oidc: Partial<AppConfigShape["oidc"]> = {}, rest: Partial<AppConfigShape> = {}) =>
  Layer.succeed(AppConfig, { ...testConfig, ...rest, oidc: { ...testConfig.oidc, devIdpPort: 0, ...oidc } })

const CALLBACK = `${testConfig.publicUrl}/api/auth/idp/callback`

/** A sign-in as `login` up to the callback URL the browser would be sent to. */
const signInUpToCallback = (login: string, jar?: CookieJar) =>
  Effect.gen(function*() {
    const start = yield* (yield* IdentityProvider).startLogin
    const callback = yield* Effect.promise(() => signInAtDevProvider(start.authorizationUrl, login, jar))
    return { start, callback: new URL(callback) }
  })

const rejected = (url: URL) =>
  Effect.gen(function*() {
    const error = yield* Effect.flip((yield* IdentityProvider).completeLogin(url))
    expect(error).toBeInstanceOf(InvalidLoginCallback)
    expect(error.message).toBe("Invalid login callback")
  })

layer(IdentityProvider.layer.pipe(Layer.provideMerge(KeyValue.memory), Layer.provide(config())), {
  excludeTestServices: true
})("IdentityProvider with the development provider", (it) => {
  it.effect("the authorization URL asks for code with PKCE S256, state and nonce; the verifier and nonce wait in KeyValue", () =>
    Effect.gen(function*() {
      const { authorizationUrl, state } = yield* (yield* IdentityProvider).startLogin
      const url = new URL(authorizationUrl)
      expect(url.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const params = Object.fromEntries(url.searchParams)
      expect(params).toMatchObject({
        client_id: testConfig.oidc.clientId,
        response_type: "code",
        redirect_uri: CALLBACK,
        scope: "openid profile",
        code_challenge_method: "S256",
        state
      })
      expect(state.length).toBeGreaterThanOrEqual(32)
      expect(params.nonce?.length).toBeGreaterThanOrEqual(32)

      const pending = JSON.parse(Option.getOrThrow(yield* (yield* KeyValue).get(`oidc-login:${state}`)))
      expect(pending.nonce).toBe(params.nonce)
      expect(params.code_challenge).toBe(createHash("sha256").update(pending.codeVerifier).digest("base64url"))
    }))

  it.effect("300 sign-ins at once all complete (its storage holds every sign-in in progress)", () =>
    Effect.gen(function*() {
      const idp = yield* IdentityProvider
      const logins = Array.from({ length: 300 }, (_, i) => `crowd-${i}`)
      const callbacks = yield* Effect.forEach(logins, (login) => signInUpToCallback(login), { concurrency: "unbounded" })
      const claims = yield* Effect.forEach(callbacks, ({ callback }) => idp.completeLogin(callback), { concurrency: "unbounded" })
      expect(claims.map((c) => c.idpId)).toEqual(logins)
    }), { timeout: 120_000 })

  it.effect("a sign-in completes once with the login name as idpId and username; the same callback again is refused", () =>
    Effect.gen(function*() {
      const idp = yield* IdentityProvider
      const { callback, start } = yield* signInUpToCallback("alice")
      expect(callback.origin + callback.pathname).toBe(CALLBACK)
      expect(callback.searchParams.get("state")).toBe(start.state)
      expect(callback.searchParams.get("code")).toBeTruthy()

      expect(yield* idp.completeLogin(callback)).toStrictEqual({ idpId: "alice", username: "alice" })
      expect(Option.isNone(yield* (yield* KeyValue).get(`oidc-login:${start.state}`))).toBe(true)
      yield* rejected(callback)
    }))

  it.effect("the sign-in page is an HTML form that asks for a login name and nothing else", () =>
    Effect.gen(function*() {
      const { authorizationUrl } = yield* (yield* IdentityProvider).startLogin
      const page = yield* Effect.promise(async () => {
        const redirect = await fetch(authorizationUrl, { redirect: "manual" })
        const cookie = redirect.headers.getSetCookie().map((line) => line.split(";")[0]).join("; ")
        const response = await fetch(new URL(redirect.headers.get("location")!, authorizationUrl), { headers: { cookie } })
        return { status: response.status, type: response.headers.get("content-type"), html: await response.text() }
      })
      expect(page.status).toBe(200)
      expect(page.type).toMatch(/^text\/html/)
      const form = /<form method="post" action="\/interaction\/[\w-]+\/login">[\s\S]*?<\/form>/.exec(page.html)?.[0] ?? ""
      expect(form).toMatch(/<input name="login" required/)
      expect(form).toMatch(/<button type="submit">Sign in<\/button>/)
      expect(page.html).not.toMatch(/type="password"/)
    }))

  it.effect("any login name works, and the same browser is asked again next time (it can switch users)", () =>
    Effect.gen(function*() {
      const idp = yield* IdentityProvider
      const browser = makeCookieJar()
      const first = yield* signInUpToCallback("José da Silva", browser)
      expect(yield* idp.completeLogin(first.callback)).toStrictEqual({ idpId: "José da Silva", username: "José da Silva" })
      const second = yield* signInUpToCallback("bob", browser)
      expect(yield* idp.completeLogin(second.callback)).toStrictEqual({ idpId: "bob", username: "bob" })
    }))

  it.effect("a callback with a forged state is refused and does not spend the genuine one", () =>
    Effect.gen(function*() {
      const { callback } = yield* signInUpToCallback("carol")
      const forged = new URL(callback)
      forged.searchParams.set("state", "forged-state-0123456789abcdefghijklmn")
      yield* rejected(forged)
      const stateless = new URL(callback)
      stateless.searchParams.delete("state")
      yield* rejected(stateless)
      // The genuine callback still works: the refusals above were about the state alone.
      expect((yield* (yield* IdentityProvider).completeLogin(callback)).idpId).toBe("carol")
    }))

  it.effect("an error response (access_denied) with a genuine state is refused, and spends that state", () =>
    Effect.gen(function*() {
      const { callback } = yield* signInUpToCallback("dave")
      const denied = new URL(CALLBACK)
      denied.searchParams.set("error", "access_denied")
      denied.searchParams.set("state", callback.searchParams.get("state")!)
      denied.searchParams.set("iss", callback.searchParams.get("iss") ?? "")
      yield* rejected(denied)
      yield* rejected(callback)
    }))

  it.effect("a code whose exchange fails (wrong code) is refused", () =>
    Effect.gen(function*() {
      const { callback } = yield* signInUpToCallback("erin")
      const tampered = new URL(callback)
      tampered.searchParams.set("code", "not-the-code")
      yield* rejected(tampered)
    }))
})

describe("IdentityProvider start-up", () => {
  it.scoped("an unreachable issuer stops the start with one line naming it", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(IdentityProvider.layer).pipe(
        Effect.provide(KeyValue.memory),
        Effect.provide(config({ issuer: Option.some("http://127.0.0.1:9") }))
      ))
      expect(error).toBeInstanceOf(StartupError)
      expect(error.message).toMatch(/^OpenID Connect discovery failed for issuer http:\/\/127\.0\.0\.1:9: [^\n]+$/)
    }))

  it.scoped("the development provider never starts in production", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(DevIdentityProvider.make.pipe(Effect.provide(config({}, { production: true }))))
      expect(error).toBeInstanceOf(StartupError)
      expect(error.message).toMatch(/never runs in production/)
    }))

  it.scoped("without SANDBOX the development provider does not start: OIDC_ISSUER is required", () =>
    Effect.gen(function*() {
      const noSandbox = config({}, { sandbox: false })
      const direct = yield* Effect.flip(DevIdentityProvider.make.pipe(Effect.provide(noSandbox)))
      expect(direct.message).toMatch(/only with SANDBOX=true/)
      const error = yield* Effect.flip(Layer.build(IdentityProvider.layer).pipe(Effect.provide(KeyValue.memory), Effect.provide(noSandbox)))
      expect(error).toEqual(new StartupError({ message: "OIDC_ISSUER is required without SANDBOX=true" }))
    }))
})
