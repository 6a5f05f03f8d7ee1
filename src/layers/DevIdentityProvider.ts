/**
 * The embedded development OpenID provider (docs/rules.md#sandbox-mode): `oidc-provider`, a certified OpenID
 * provider, served in-process on 127.0.0.1:DEV_IDP_PORT when OIDC_ISSUER is absent and SANDBOX is on; never in
 * production.
 *
 * One client is registered: this service (authorization code with PKCE S256, client_secret_basic).
 * Its sign-in page is our own minimal form at `/interaction/:uid`: any login name, no password; the
 * name becomes `sub` and `preferred_username`. The form is shown on every sign-in, even when the browser
 * still has a provider session, so switching users needs no cookie clearing. There is no consent page:
 * `loadExistingGrant` grants the one (first-party) client whatever it asked for. State lives in memory
 * (`memoryStore`) and is lost on restart.
 */
import { Context, Effect, Layer, Redacted, type Scope } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import type { Adapter, AdapterPayload, Configuration, JWK } from "oidc-provider"
import type Provider from "oidc-provider"
import { AppConfig, cannotListen, StartupError } from "./AppConfig"

/** How the provider signs ID tokens; the service's client is registered (and discovers it) with it. */
export const ID_TOKEN_ALG = "ES256"

const INTERACTION_ROUTE = /^\/interaction\/([\w-]+)(?:\/(login|abort))?$/
const MAX_LOGIN_LENGTH = 100

const signInPage = (uid: string, notice?: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Development sign-in</title></head>
<body style="font-family: sans-serif; max-width: 24rem; margin: 3rem auto">
  <h1>Development sign-in</h1>
  <p>Type any login name; there is no password. The name becomes your idpId and username.</p>
  ${notice === undefined ? "" : `<p role="alert" style="color: #b00">${notice}</p>`}
  <form method="post" action="/interaction/${uid}/login">
    <label>Login name <input name="login" required autofocus maxlength="${MAX_LOGIN_LENGTH}" autocomplete="username"></label>
    <button type="submit">Sign in</button>
  </form>
  <form method="post" action="/interaction/${uid}/abort"><button type="submit">Cancel</button></form>
</body>
</html>
`

const send = (res: ServerResponse, status: number, contentType: string, body: string) => {
  res.writeHead(status, { "content-type": `${contentType}; charset=utf-8`, "cache-control": "no-store" })
  res.end(body)
}

const readForm = async (req: IncomingMessage): Promise<URLSearchParams> => {
  let body = ""
  for await (const chunk of req) {
    body += chunk
    if (body.length > 16_384) throw new Error("form too large")
  }
  return new URLSearchParams(body)
}

/** The sign-in form and its two actions; everything else is oidc-provider's. */
const interaction = async (provider: Provider, req: IncomingMessage, res: ServerResponse, action: string | undefined) => {
  // Throws when the interaction cookie is missing or the interaction expired or was finished.
  const details = await provider.interactionDetails(req, res)
  if (req.method === "GET" && action === undefined) return send(res, 200, "text/html", signInPage(details.uid))
  if (req.method === "POST" && action === "login") {
    const login = (await readForm(req)).get("login")?.trim() ?? ""
    if (login === "" || login.length > MAX_LOGIN_LENGTH) {
      return send(res, 400, "text/html", signInPage(details.uid, `Type a login name of 1 to ${MAX_LOGIN_LENGTH} characters.`))
    }
    return provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false })
  }
  if (req.method === "POST" && action === "abort") {
    const result = { error: "access_denied", error_description: "End-User aborted interaction" }
    return provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false })
  }
  send(res, 405, "text/plain", "Method not allowed")
}

/**
 * oidc-provider's storage: entries until they expire, however many sign-ins are under way. (Its
 * built-in memory adapter keeps at most 1000 entries, about 200 sign-ins in progress; beyond that it
 * drops authorization codes, and the exchange fails with `invalid_grant`.)
 */
const GRANTABLE = new Set(["AccessToken", "AuthorizationCode", "RefreshToken", "DeviceCode", "BackchannelAuthenticationRequest"])

const memoryStore = () => {
  const entries = new Map<string, { readonly payload: AdapterPayload; readonly expiresAt: number }>()
  const byUid = new Map<string, string>()
  const byUserCode = new Map<string, string>()
  const byGrant = new Map<string, Set<string>>()
  let writes = 0
  const sweep = () => {
    const now = Date.now()
    for (const [key, entry] of entries) if (entry.expiresAt <= now) entries.delete(key)
    for (const index of [byUid, byUserCode]) for (const [name, key] of index) if (!entries.has(key)) index.delete(name)
    for (const [grantId, keys] of byGrant) {
      for (const key of keys) if (!entries.has(key)) keys.delete(key)
      if (keys.size === 0) byGrant.delete(grantId)
    }
  }
  const live = (key: string | undefined) => {
    const entry = key === undefined ? undefined : entries.get(key)
    return entry !== undefined && entry.expiresAt > Date.now() ? entry.payload : undefined
  }
  return class MemoryAdapter implements Adapter {
    constructor(private readonly model: string) {}
    private key(id: string) {
      return `${this.model}:${id}`
    }
    async upsert(id: string, payload: AdapterPayload, expiresIn?: number) {
      if (++writes % 1000 === 0) sweep()
      const key = this.key(id)
      entries.set(key, { payload, expiresAt: expiresIn === undefined ? Infinity : Date.now() + expiresIn * 1000 })
      // As oidc-provider's own adapter: sessions are found by uid, tokens of a grant revoked together.
      if (this.model === "Session" && payload.uid !== undefined) byUid.set(payload.uid, key)
      if (payload.userCode !== undefined) byUserCode.set(payload.userCode, key)
      if (GRANTABLE.has(this.model) && payload.grantId !== undefined) {
        byGrant.set(payload.grantId, (byGrant.get(payload.grantId) ?? new Set()).add(key))
      }
    }
    async find(id: string) {
      return live(this.key(id))
    }
    async findByUid(uid: string) {
      return live(byUid.get(uid))
    }
    async findByUserCode(userCode: string) {
      return live(byUserCode.get(userCode))
    }
    async consume(id: string) {
      const payload = live(this.key(id))
      if (payload !== undefined) payload.consumed = Math.floor(Date.now() / 1000)
    }
    async destroy(id: string) {
      entries.delete(this.key(id))
    }
    async revokeByGrantId(grantId: string) {
      for (const key of byGrant.get(grantId) ?? []) entries.delete(key)
      byGrant.delete(grantId)
    }
  }
}

const listen = (port: number) =>
  Effect.acquireRelease(
    Effect.async<Server, StartupError>((resume) => {
      const server = createServer()
      server.once("error", (cause) =>
        resume(Effect.fail(cannotListen(port, "DEV_IDP_PORT", cause, "the development identity provider's, default PORT + 1"))))
      server.listen(port, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections() // keep-alive connections would hold close() open
      })
  )

/** Starts the provider for the life of the current scope; its issuer URL is `http://127.0.0.1:<port>`. */
const make: Effect.Effect<{ readonly issuer: string }, StartupError, AppConfig | Scope.Scope> = Effect.gen(function*() {
  const config = yield* AppConfig
  if (config.production || !config.sandbox) {
    return yield* new StartupError({ message: "The development identity provider never runs in production, and only with SANDBOX=true: set OIDC_ISSUER" })
  }
  const server = yield* listen(config.oidc.devIdpPort)
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  // Imported here, not at the top, so that production never loads it (it also prints a warning on Node 20).
  const { default: Provider, interactionPolicy } = yield* Effect.promise(() => import("oidc-provider"))

  // Show the sign-in form on every authorization request, except the one resuming after the form.
  const policy = interactionPolicy.base()
  policy.get("login")!.checks.push(
    new interactionPolicy.Check("dev_sign_in", "the development provider always asks who you are", (ctx) =>
      ctx.oidc.result?.login === undefined)
  )

  // A fresh key per start: ID tokens from an earlier run are not worth keeping valid. ES256: made in
  // a millisecond, where an RSA key takes about a second of the start.
  const signingKey = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" })
  const configuration: Configuration = {
    clients: [{
      client_id: config.oidc.clientId,
      client_secret: Redacted.value(config.oidc.clientSecret),
      redirect_uris: [`${config.publicUrl}/api/auth/idp/callback`],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      id_token_signed_response_alg: ID_TOKEN_ALG
    }],
    pkce: { required: () => true },
    claims: { openid: ["sub"], profile: ["preferred_username"] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, preferred_username: sub }) }),
    adapter: memoryStore(),
    features: { devInteractions: { enabled: false } },
    interactions: { policy, url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // Auto-consent (oidc-provider's recipe for first-party clients): a grant of exactly what was asked.
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({ accountId: ctx.oidc.session!.accountId!, clientId: ctx.oidc.client!.clientId })
      grant.addOIDCScope([...ctx.oidc.requestParamOIDCScopes].join(" "))
      grant.addOIDCClaims([...ctx.oidc.requestParamClaims])
      await grant.save()
      return grant
    },
    // Seconds. Setting them also silences oidc-provider's notices about its defaults.
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AuthorizationCode: 60, AccessToken: 600, IdToken: 600 },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    enabledJWA: { idTokenSigningAlgValues: [ID_TOKEN_ALG] },
    jwks: { keys: [{ ...signingKey, use: "sig", alg: ID_TOKEN_ALG } as JWK] }
  }
  const provider = yield* Effect.try({
    try: () => new Provider(issuer, configuration),
    catch: (cause) => new StartupError({ message: `Cannot configure the development identity provider: ${cause}` })
  })

  const handle = provider.callback()
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const route = INTERACTION_ROUTE.exec(new URL(req.url ?? "/", issuer).pathname)
    if (route === null) return handle(req, res)
    interaction(provider, req, res, route[2]).catch(() => {
      if (!res.headersSent) send(res, 400, "text/plain", "This sign-in expired or was already completed: start again from the application.")
    })
  })

  yield* Effect.logInfo(`Development identity provider (any login name, no password) at ${issuer}`)
  return { issuer }
})

export class DevIdentityProvider extends Context.Tag("app/DevIdentityProvider")<
  DevIdentityProvider,
  { readonly issuer: string }
>() {
  static readonly make = make
  static readonly layer: Layer.Layer<DevIdentityProvider, StartupError, AppConfig> = Layer.scoped(this, make)
}
