/**
 * Cross-site requests (docs/rules.md#cross-site-requests): a page on another origin, even a sibling host of the
 * same site that SameSite=Lax lets the cookie through from, cannot act with a player's session cookie. Unsafe
 * methods with the cookie need `Origin` (or `Sec-Fetch-Site: same-origin`) of our own origin; bearer
 * requests and reads are unaffected. The browser's own form post is in test/e2e/Console.test.ts.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { fundedPlayer, makeCase } from "../support/GameFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const config = {
  adminIdpIds: ["root"],
  rateLimits: { ...testConfig.rateLimits, caseOpen: { count: 1_000, windowMs: 60_000 } }
}

const refused = { statusCode: 403, message: "Cross-site request refused" }

/** An opening sent with the session cookie and `headers`. */
const openWithCookie = (client: TestClient, caseId: string, sessionId: string, headers: Record<string, string>) =>
  client.request(`/api/cases/${caseId}/open`, { method: "POST", headers: { cookie: `sessionId=${sessionId}`, ...headers } })

const balanceOf = (client: TestClient, sessionId: string) =>
  Effect.map(client.get("/api/auth/me", { authorization: `Bearer ${sessionId}` }), (me) => me.body.balanceCents as number)

layer(TestDatabase)("cross-site requests", (it) => {
  it.scoped("the report's form post: with the cookie, an opening from another origin or none is 403 and moves nothing", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config })
      const { kase } = yield* makeCase()
      const player = yield* fundedPlayer(client, "victim", 5_000)
      const sessionId = player.auth.authorization.replace("Bearer ", "")
      for (
        const headers of [
          {} as Record<string, string>, // an old browser, or a form with `referrerpolicy` games: no Origin at all
          { origin: "http://evil.localhost:3000" },
          { origin: "http://localhost:4000" }, // a sibling origin of the same site
          { origin: "null" }, // a sandboxed frame
          { origin: "http://localhost:4000", "sec-fetch-site": "same-site" },
          { "sec-fetch-site": "cross-site" }
        ]
      ) {
        const answer = yield* openWithCookie(client, String(kase.id), sessionId, headers)
        expect(answer.status, JSON.stringify(headers)).toBe(403)
        expect(answer.body).toEqual(refused)
      }
      expect(yield* balanceOf(client, sessionId)).toBe(5_000)
      // Every unsafe method, on other endpoints of the report too.
      for (const [method, path] of [["POST", "/api/inventory/sell-all"], ["PUT", "/api/provably-fair/client-seed"], ["POST", "/api/auth/logout-all"]] as const) {
        const answer = yield* client.request(path, {
          method,
          headers: { cookie: `sessionId=${sessionId}`, origin: "http://localhost:4000", "content-type": "application/json" },
          body: method === "PUT" ? JSON.stringify({ clientSeed: "chosen-by-the-attacker" }) : undefined
        })
        expect(answer.body, `${method} ${path}`).toEqual(refused)
      }
      // The session still works: logout-all did not run.
      expect((yield* client.get("/api/auth/me", player.auth)).status).toBe(200)
    }))

  it.scoped("refused cross-site requests do not use up the victim's own limits: they count against the address", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { adminIdpIds: ["root"] } }) // 5 openings a minute
      const { kase } = yield* makeCase()
      const player = yield* fundedPlayer(client, "not-locked-out", 5_000)
      const sessionId = player.auth.authorization.replace("Bearer ", "")
      for (let i = 0; i < 5; i++) {
        expect((yield* openWithCookie(client, String(kase.id), sessionId, { origin: "http://localhost:4000" })).body).toEqual(refused)
      }
      // The player's own openings still have their 5.
      for (let i = 0; i < 5; i++) {
        expect((yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).status).toBe(200)
      }
    }))

  it.scoped("our own pages act: Origin of PUBLIC_URL, of the request's own Host outside production, or Sec-Fetch-Site same-origin; bearer needs none", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { ...config, publicUrl: "http://localhost:3000" } })
      const { kase } = yield* makeCase()
      const player = yield* fundedPlayer(client, "own-pages", 5_000)
      const sessionId = player.auth.authorization.replace("Bearer ", "")
      const accepted: Array<Record<string, string>> = [
        { origin: "http://localhost:3000" },
        { "sec-fetch-site": "same-origin" },
        { origin: "http://127.0.0.1:3100", host: "127.0.0.1:3100" }
      ]
      for (const headers of accepted) {
        expect((yield* openWithCookie(client, String(kase.id), sessionId, headers)).status, JSON.stringify(headers)).toBe(200)
      }
      expect((yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).status).toBe(200)
      // Reads need nothing.
      expect((yield* client.get("/api/auth/me", { cookie: `sessionId=${sessionId}` })).status).toBe(200)
      expect(yield* balanceOf(client, sessionId)).toBe(5_000 - 4 * 500)
    }))

  it.scoped("production accepts only PUBLIC_URL's origin (or Sec-Fetch-Site same-origin), not the Host's", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { production: true, publicUrl: "https://play.example.com" } })
      const { sessionId } = yield* signIn(client, "prod-player")
      const put = (headers: Record<string, string>) =>
        client.request("/api/provably-fair/client-seed", {
          method: "PUT",
          headers: { cookie: `sessionId=${sessionId}`, "content-type": "application/json", ...headers },
          body: JSON.stringify({ clientSeed: "mine" })
        })
      expect((yield* put({ origin: "https://evil.example.com", host: "evil.example.com" })).body).toEqual(refused)
      expect((yield* put({ origin: "http://play.example.com" })).body).toEqual(refused)
      expect((yield* put({ origin: "https://play.example.com" })).status).toBe(200)
      expect((yield* put({ "sec-fetch-site": "same-origin" })).status).toBe(200)
    }))
})

