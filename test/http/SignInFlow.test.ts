/**
 * The real OpenID Connect flow through the public API, against the embedded development provider:
 * redirect, sign-in form, callback, session cookie. Real time: the provider and the ID token
 * validation keep their own clocks.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { IdentityProvider } from "../../src/layers/IdentityProvider"
import { signInAtDevProvider } from "../support/DevSignIn"
import { cookieOf } from "../support/SignIn"
import { makeTestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const withDevProvider = makeTestClient({
  identityProvider: IdentityProvider.layer,
  config: { oidc: { ...testConfig.oidc, devIdpPort: 0 } }
})

layer(TestDatabase, { excludeTestServices: true })("sign-in through the development provider", (it) => {
  it.scoped("login redirects to the provider; its form leads back to the callback, which signs the user in", () =>
    Effect.gen(function*() {
      const client = yield* withDevProvider
      const login = yield* client.get("/api/auth/idp/login")
      expect(login.status).toBe(302)
      const authorizationUrl = login.headers.get("location")!
      expect(authorizationUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/auth\?/)

      const callbackUrl = new URL(yield* Effect.promise(() => signInAtDevProvider(authorizationUrl, "maria.silva")))
      expect(callbackUrl.pathname).toBe("/api/auth/idp/callback")
      const stateCookie = { cookie: `oidcState=${cookieOf(login, "oidcState")}` }
      const callback = yield* client.get(`${callbackUrl.pathname}${callbackUrl.search}`, stateCookie)
      expect(callback.status).toBe(302)
      expect(callback.headers.get("location")).toBe("/")
      const sessionId = cookieOf(callback, "sessionId")!
      const me = yield* client.get("/api/auth/me", { cookie: `sessionId=${sessionId}` })
      expect(me.body).toMatchObject({ username: "maria.silva", idpId: "maria.silva", role: "USER" })

      // The same callback again is refused.
      const replay = yield* client.get(`${callbackUrl.pathname}${callbackUrl.search}`, stateCookie)
      expect(replay.status).toBe(400)
      expect(replay.body).toEqual({ statusCode: 400, message: "Invalid login callback" })
    }))
})
