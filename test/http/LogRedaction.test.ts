/**
 * What the service logs never holds a credential or a PIX key (docs/rules.md#log-redaction): a run that signs
 * in through the real OpenID flow (code and state in the callback URL), revokes a session (its id in the URL), uses
 * 2FA codes, and fails payouts at an HTTP gateway (the PIX key in the request body), read back from
 * the log at its most verbose, in both formats the service writes (its development lines, src/layers/LogLine.ts, and
 * JSON).
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { HttpGateway } from "../../src/layers/gateway/HttpGateway"
import { IdentityProvider } from "../../src/layers/IdentityProvider"
import { logLine } from "../../src/layers/LogLine"
import { signInAtDevProvider } from "../support/DevSignIn"
import { cookieOf } from "../support/SignIn"
import { makeTestClient, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { codeNow, withdrawal } from "../support/WithdrawalFixtures"

/** A gateway that fails every payout: 503 for withdrawal 1's reference, a refusal naming the key for the others. */
const failingGateway = Effect.acquireRelease(
  Effect.async<{ url: string; close: () => void }>((resume) => {
    const server = createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        if (request.url !== "/payouts") return response.writeHead(404).end()
        const { pixKey } = JSON.parse(body) as { pixKey: string }
        if (pixKey.includes("first")) return response.writeHead(503).end(`upstream down for ${pixKey}`)
        response.writeHead(422, { "content-type": "application/json" }).end(JSON.stringify({ message: "PIX key not found" }))
      })
    })
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() })))
  }),
  (server) => Effect.sync(server.close)
)

/** The real sign-in flow; the session id and the callback's code and state. */
const signInForReal = (client: TestClient, login: string) =>
  Effect.gen(function*() {
    const start = yield* client.get("/api/auth/idp/login")
    const callbackUrl = new URL(yield* Effect.promise(() => signInAtDevProvider(start.headers.get("location")!, login)))
    const stateCookie = { cookie: `oidcState=${cookieOf(start, "oidcState")}` }
    const callback = yield* client.get(`${callbackUrl.pathname}${callbackUrl.search}`, stateCookie)
    expect(callback.status).toBe(302)
    // Replayed: refused, and the reason is logged (at debug level).
    expect((yield* client.get(`${callbackUrl.pathname}${callbackUrl.search}`, stateCookie)).status).toBe(400)
    const sessionId = cookieOf(callback, "sessionId")!
    return {
      sessionId,
      code: callbackUrl.searchParams.get("code")!,
      state: callbackUrl.searchParams.get("state")!,
      auth: { authorization: `Bearer ${sessionId}` }
    }
  })

layer(TestDatabase, { excludeTestServices: true })("log redaction", (it) => {
  it.scoped("no session id, OAuth code or state, 2FA code or PIX key appears in the log", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const capture = Logger.zip(logLine, Logger.jsonLogger).pipe(Logger.map(([text, json]) => {
        lines.push(text, json)
      }))
      const gateway = yield* failingGateway
      const client = yield* makeTestClient({
        identityProvider: IdentityProvider.layer,
        gateway: HttpGateway(gateway.url, Redacted.make("gateway-key")).pipe(Layer.orDie),
        accessLog: true,
        logging: Layer.merge(Logger.replace(Logger.defaultLogger, capture), Logger.minimumLogLevel(LogLevel.All)),
        config: { adminIdpIds: ["root"], oidc: { ...testConfig.oidc, devIdpPort: 0 } }
      })

      const player = yield* signInForReal(client, "logged-player")
      const second = yield* signInForReal(client, "logged-player")
      const root = yield* signInForReal(client, "root")
      const me = (yield* client.get("/api/auth/me", player.auth)).body
      // Revoked through the API, once in a spelling of its own.
      const revoked = yield* client.request(`/api/AUTH/sessions/${second.sessionId}/`, { method: "DELETE", headers: player.auth })
      expect(revoked.status).toBe(200)
      expect((yield* client.request(`/api/auth/sessions/${root.sessionId}`, { method: "DELETE", headers: player.auth })).status).toBe(403)

      // Money, 2FA and payouts that fail at the gateway.
      expect((yield* client.post(`/api/admin/users/${me.id}/adjust-balance`, { amountCents: 50_000, reason: "logged funds" }, root.auth)).status)
        .toBe(200)
      const { secret } = (yield* client.post("/api/auth/2fa/generate", undefined, player.auth)).body
      const enableCode = yield* codeNow(secret)
      const enabled = yield* client.post("/api/auth/2fa/enable", { code: enableCode }, player.auth)
      expect(enabled.status).toBe(200)
      const wrongCode = enableCode === "123456" ? "654321" : "123456"
      expect((yield* client.post("/api/auth/2fa/verify", { code: wrongCode }, player.auth)).body).toEqual({ valid: false })
      // Backup codes for the withdrawals (new keys need a code): no waiting for the next TOTP step.
      const codes = (enabled.body.backupCodes as Array<string>).slice(0, 2)
      const keys = ["first.payout@example.com", "529.982.247-25"] as const
      const ids: Array<string> = []
      for (const [i, pixKey] of keys.entries()) {
        const code = codes[i]!
        const requested = yield* client.post(
          "/api/withdrawals/request",
          withdrawal(10_000, { pixKeyType: i === 0 ? "EMAIL" : "CPF", pixKey }, { twoFactorCode: code }),
          player.auth
        )
        expect(requested.status).toBe(201)
        ids.push(requested.body.id)
      }
      const unknown = yield* client.post(`/api/admin/withdrawals/${ids[0]}/approve`, undefined, root.auth)
      expect(unknown.body.status).toBe("PROCESSING")
      const refused = yield* client.post(`/api/admin/withdrawals/${ids[1]}/approve`, undefined, root.auth)
      expect(refused.status).toBe(502)

      const log = lines.join("\n")
      // The log did record the run: the requests (the revoked session's by its template), the callback
      // (its query redacted), the rejected replay and the gateway's failure.
      expect(log).toContain("/api/auth/sessions/:id")
      expect(log).toMatch(/\/api\/auth\/idp\/callback\?code=\[redacted\]&state=\[redacted\]/)
      expect(log).toContain("Sign-in callback rejected")
      expect(log).toContain("Payment gateway /payouts failed: status 503")
      expect(log).toContain("/api/admin/withdrawals/")

      const secrets = [
        player.sessionId, second.sessionId, root.sessionId,
        player.code, second.code, root.code,
        player.state, second.state, root.state,
        enableCode, wrongCode, ...codes,
        ...keys, "52998224725"
      ]
      for (const value of secrets) expect(log, value).not.toContain(value)
    }), { timeout: 120_000 })
})
