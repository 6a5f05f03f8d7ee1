/**
 * Sign-in through OpenID Connect (docs/rules.md#sign-in) with `openid-client`: authorization code flow with PKCE
 * (S256), `state` and `nonce`. The pending sign-in (code verifier and nonce) waits in KeyValue under its
 * state, so any instance can complete it, and each one completes at most once.
 */
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import * as oidc from "openid-client"
import type { ServiceUnavailable } from "../schema/platform/Errors"
import { type IdentityClaims, InvalidLoginCallback, type LoginStart } from "../schema/identity/Identity"
import { AppConfig, StartupError, usesDevIdentityProvider } from "./AppConfig"
import { DevIdentityProvider, ID_TOKEN_ALG } from "./DevIdentityProvider"
import { KeyValue } from "./stores/KeyValue"

export type { IdentityClaims, LoginStart }

interface IdentityProviderShape {
  /** Begins a sign-in: authorization code flow with PKCE (S256), state and nonce. The code verifier and nonce are kept in KeyValue under the state for 10 minutes. */
  readonly startLogin: Effect.Effect<LoginStart, ServiceUnavailable>
  /** Completes a sign-in from the full callback URL the browser arrived at. The pending login of its state is used at most once (deleted before the exchange), so a replayed or forged callback, a wrong state, an error response or a failed token exchange/ID token validation all fail with InvalidLoginCallback. */
  readonly completeLogin: (callbackUrl: URL) => Effect.Effect<IdentityClaims, InvalidLoginCallback | ServiceUnavailable>
}

export const CALLBACK_PATH = "/api/auth/idp/callback"
const SCOPE = "openid profile"
const PENDING_TTL_MS = 10 * 60_000
const pendingKey = (state: string) => `oidc-login:${state}`

const PendingLogin = Schema.parseJson(Schema.Struct({ codeVerifier: Schema.String, nonce: Schema.String }))

const usernameOf = (claims: Record<string, unknown>): string | undefined =>
  [claims.preferred_username, claims.nickname, claims.name].find(
    (value): value is string => typeof value === "string" && value.trim() !== ""
  )

/** One line for a start-up message: the error and what caused it (e.g. `fetch failed: connect ECONNREFUSED`). */
const describe = (error: unknown): string => {
  const parts: Array<string> = []
  for (let e: unknown = error; e instanceof Error && parts.length < 3; e = e.cause) parts.push(e.message)
  return (parts.length > 0 ? parts.join(": ") : String(error)).replace(/\s+/g, " ")
}

const make = Effect.gen(function*() {
  const config = yield* AppConfig
  const kv = yield* KeyValue
  const issuer = Option.isSome(config.oidc.issuer)
    ? config.oidc.issuer.value
    : usesDevIdentityProvider(config)
    ? (yield* DevIdentityProvider.make).issuer
    : yield* new StartupError({ message: "OIDC_ISSUER is required without SANDBOX=true" })
  // A real provider signs with its default (RS256); the development one with ES256.
  const signing = Option.isSome(config.oidc.issuer) ? {} : { id_token_signed_response_alg: ID_TOKEN_ALG }
  const redirectUri = `${config.publicUrl}${CALLBACK_PATH}`

  const client = yield* Effect.tryPromise({
    try: () =>
      oidc.discovery(
        new URL(issuer),
        config.oidc.clientId,
        { client_secret: Redacted.value(config.oidc.clientSecret), ...signing },
        oidc.ClientSecretBasic(),
        // http:// issuers (the embedded one, a local Keycloak) only outside production.
        { execute: config.production ? [] : [oidc.allowInsecureRequests] }
      ),
    catch: (cause) => new StartupError({ message: `OpenID Connect discovery failed for issuer ${issuer}: ${describe(cause)}` })
  })
  yield* Effect.logInfo(`Sign-in through the OpenID provider ${issuer}`)

  const startLogin: Effect.Effect<LoginStart, ServiceUnavailable> = Effect.gen(function*() {
    const codeVerifier = oidc.randomPKCECodeVerifier()
    const codeChallenge = yield* Effect.promise(() => oidc.calculatePKCECodeChallenge(codeVerifier))
    const state = oidc.randomState()
    const nonce = oidc.randomNonce()
    yield* kv.set(pendingKey(state), JSON.stringify({ codeVerifier, nonce }), PENDING_TTL_MS)
    const url = oidc.buildAuthorizationUrl(client, {
      redirect_uri: redirectUri,
      scope: SCOPE,
      code_challenge: codeChallenge,
      code_challenge_method: "S256",
      state,
      nonce
    })
    return { authorizationUrl: url.href, state }
  }).pipe(Effect.withSpan("IdentityProvider.startLogin"))

  const completeLogin = Effect.fn("IdentityProvider.completeLogin")(
    function*(callbackUrl: URL) {
      const state = callbackUrl.searchParams.get("state")
      if (state === null) return yield* Effect.fail("the callback carries no state")
      const stored = yield* kv.get(pendingKey(state))
      // Only the caller whose delete removed the entry goes on: a replay, even a concurrent one, stops here.
      if (Option.isNone(stored) || !(yield* kv.delete(pendingKey(state)))) {
        return yield* Effect.fail("no pending sign-in for this state")
      }
      const pending = yield* Schema.decode(PendingLogin)(stored.value)

      // openid-client sends the callback URL without its query as the token request's redirect_uri:
      // rebuild it on the registered redirect URI, whatever host or proxy the request came through.
      const currentUrl = new URL(redirectUri)
      currentUrl.search = callbackUrl.search
      const tokens = yield* Effect.tryPromise(() =>
        oidc.authorizationCodeGrant(client, currentUrl, {
          pkceCodeVerifier: pending.codeVerifier,
          expectedNonce: pending.nonce,
          expectedState: state
        })
      )
      const claims = tokens.claims()
      if (claims === undefined) return yield* Effect.fail("the token response has no ID token")

      // Conformant providers may keep profile claims out of the ID token: ask UserInfo then. Its
      // failure only costs the username (it falls back to `user-<id>`, docs/rules.md#usernames), not the sign-in.
      let username = usernameOf(claims)
      if (username === undefined && client.serverMetadata().userinfo_endpoint !== undefined) {
        username = yield* Effect.tryPromise(() => oidc.fetchUserInfo(client, tokens.access_token, claims.sub)).pipe(
          Effect.map(usernameOf),
          Effect.catchAll((error) => Effect.as(Effect.logDebug(`UserInfo request failed: ${describe(error)}`), undefined))
        )
      }
      return { idpId: claims.sub, username } satisfies IdentityClaims
    },
    // The reason stays in the debug log (in words: the error objects can hold the request and its
    // code, docs/rules.md#log-redaction); the client only learns that the callback was invalid.
    Effect.tapError((error) => Effect.logDebug(`Sign-in callback rejected: ${describe(error)}`)),
    Effect.mapError(() => new InvalidLoginCallback())
  )

  return { startLogin, completeLogin } satisfies IdentityProviderShape
})

export class IdentityProvider extends Context.Tag("app/IdentityProvider")<IdentityProvider, IdentityProviderShape>() {
  /** When config.oidc.issuer is Some: discovery against it; else (SANDBOX only) starts DevIdentityProvider and discovers it. Discovery failure => StartupError. */
  static readonly layer: Layer.Layer<IdentityProvider, StartupError, AppConfig | KeyValue> = Layer.scoped(this, make)
}
