/**
 * A stand-in for the outside identity provider, for HTTP tests that need signed-in users quickly
 * (the real OpenID flow against the embedded provider has its own tests). The login name travels
 * as the authorization `code`; each state is good for one callback.
 */
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { IdentityProvider } from "../../src/layers/IdentityProvider"
import { InvalidLoginCallback } from "../../src/schema/identity/Identity"

export const TestIdentityProvider = Layer.sync(IdentityProvider, () => {
  const pending = new Set<string>()
  return {
    startLogin: Effect.sync(() => {
      const state = randomBytes(8).toString("hex")
      pending.add(state)
      return { authorizationUrl: `https://idp.test/authorize?state=${state}`, state }
    }),
    completeLogin: (callbackUrl: URL) =>
      Effect.suspend(() => {
        const state = callbackUrl.searchParams.get("state") ?? ""
        const code = callbackUrl.searchParams.get("code")
        if (!pending.delete(state) || code === null) return Effect.fail(new InvalidLoginCallback())
        return Effect.succeed({ idpId: code, username: code.startsWith("nameless-") ? undefined : code })
      })
  }
})
