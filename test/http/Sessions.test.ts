/** Sign-in, sessions and their security rules through the public API (docs/rules.md#identity-and-sessions). */
import { HttpServerRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Option, TestClock } from "effect"
import { KeyValue } from "../../src/layers/stores/KeyValue"
import { Stores } from "../../src/layers/stores/Stores"
import { startSessionReadAhead, takeSessionReadAhead } from "../../src/http/identity/SessionReadAhead"
import { ACCOUNT_RECHECK_MS, Sessions } from "../../src/services/identity/Sessions"
import { sessionReference } from "../../src/schema/admin/AdminPlayer"
import { cookieOf, setCookieLine, signIn } from "../support/SignIn"
import { makeTestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

let seq = 0
const login = (name: string) => `${name}-${++seq}`
const DAY = 24 * 60 * 60 * 1000

const auditRows = (action: string, userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ metadata: unknown; entityId: string }>`
      SELECT metadata, entity_id FROM audit_logs WHERE action = ${action} AND user_id = ${userId} ORDER BY id`)

layer(TestDatabase)("sign-in and sessions", (it) => {
  it.scoped("the callback creates the user and a session, sets the session cookie and redirects", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const name = login("alice")
      const { callback, sessionId } = yield* signIn(client, name, { "user-agent": "TestBrowser/1.0" })
      expect(callback.status).toBe(302)
      expect(callback.headers.get("location")).toBe("/")
      expect(sessionId).toMatch(/^[0-9a-f]{32}$/)
      const cookie = setCookieLine(callback, "sessionId")!
      expect(cookie).toMatch(/HttpOnly/)
      expect(cookie).toMatch(/SameSite=Lax/)
      expect(cookie).toMatch(/Max-Age=604800/)
      expect(cookie).toMatch(/Path=\//)
      expect(cookie).not.toMatch(/Secure/)

      const me = yield* client.get("/api/auth/me", { cookie: `sessionId=${sessionId}` })
      expect(me.status).toBe(200)
      expect(me.body).toEqual({
        id: expect.stringMatching(/^[1-9][0-9]*$/),
        username: name,
        idpId: name,
        role: "USER",
        balanceCents: 0,
        twoFactorEnabled: false,
        createdAt: expect.any(String)
      })
      const bearer = yield* client.get("/api/auth/me", { authorization: `Bearer ${sessionId}` })
      expect(bearer.body.id).toBe(me.body.id)

      // A second sign-in is the same user.
      const again = yield* signIn(client, name)
      expect((yield* client.get("/api/auth/me", again.auth)).body.id).toBe(me.body.id)
    }))

  it.scoped("the session cookie is Secure in production", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { production: true } })
      const { callback } = yield* signIn(client, login("prod"))
      expect(setCookieLine(callback, "sessionId")).toMatch(/Secure/)
    }))

  it.scoped("a user without a name from the provider is called user-<id>; ADMIN_IDP_IDS are administrators", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { adminIdpIds: ["boss-1", "boss-2"] } })
      const nameless = yield* signIn(client, login("nameless"))
      const me = (yield* client.get("/api/auth/me", nameless.auth)).body
      expect(me.username).toBe(`user-${me.id}`)
      const boss = yield* signIn(client, "boss-2")
      expect((yield* client.get("/api/auth/me", boss.auth)).body.role).toBe("ADMIN")
    }))

  it.scoped("a name that looks like a reserved one is reserved; a name mixing scripts becomes user-<id>", () =>
    Effect.gen(function*() {
      const lifted = { count: 1_000, windowMs: 60_000 }
      const client = yield* makeTestClient({ config: { rateLimits: { ...testConfig.rateLimits, auth: lifted } } })
      const nameOf = (login: string) =>
        Effect.flatMap(signIn(client, login), ({ auth }) => Effect.map(client.get("/api/auth/me", auth), (me) => me.body))
      // Cyrillic а with Latin dmin: two scripts, so no part of it is kept.
      const mixed = yield* nameOf("\u0430dmin")
      expect(mixed.username).toBe(`user-${mixed.id}`)
      const mixedName = yield* nameOf("Mari\u0430")
      expect(mixedName.username).toBe(`user-${mixedName.id}`)
      // All Cyrillic (аԁміп), all Greek capitals with digits, Latin rn for m: each looks like a reserved name.
      const cyrillic = yield* nameOf("\u0430\u0501\u043c\u0456\u043f")
      expect(cyrillic.username).toBe(`\u0430\u0501\u043c\u0456\u043f-${cyrillic.id}`)
      const lookAlike = yield* nameOf("adrnin")
      expect(lookAlike.username).toBe(`adrnin-${lookAlike.id}`)
      const digits = yield* nameOf("M0D")
      expect(digits.username).toBe(`M0D-${digits.id}`)
      // Invisible marks are removed; l, I, 1 and İ are one letter beside i; Lisu is no recommended script.
      const joined = yield* nameOf("adm\u034fin")
      expect(joined.username).toBe(`admin-${joined.id}`)
      const selector = yield* nameOf("adm\u{e0100}in")
      expect(selector.username).toBe(`admin-${selector.id}`)
      const ell = yield* nameOf("ADMlN")
      expect(ell.username).toBe(`ADMlN-${ell.id}`)
      const dotted = yield* nameOf("ADM\u0130N")
      expect(dotted.username).toBe(`ADM\u0130N-${dotted.id}`)
      const lisu = yield* nameOf("\ua4ee\ua4d3\ua4df\ua4f2\ua4e0")
      expect(lisu.username).toBe(`user-${lisu.id}`)
      // One script, whatever it is, is kept as it is; Japanese mixes Han and kana as one writing system.
      expect((yield* nameOf("\u0418\u0432\u0430\u043d")).username).toBe("\u0418\u0432\u0430\u043d")
      expect((yield* nameOf("\u5c71\u7530\u305f\u308d\u3046")).username).toBe("\u5c71\u7530\u305f\u308d\u3046")
      expect((yield* nameOf("Jo\u00e3o_2")).username).toBe("Jo\u00e3o_2")
    }))

  it.scoped("a callback without the browser's state cookie, or replayed, is refused", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const start = yield* client.get("/api/auth/idp/login")
      expect(start.status).toBe(302)
      expect(start.headers.get("location")).toMatch(/^https:\/\/idp\.test\/authorize/)
      const state = new URL(start.headers.get("location")!).searchParams.get("state")!
      const noCookie = yield* client.get(`/api/auth/idp/callback?code=mallory&state=${state}`)
      expect(noCookie.status).toBe(400)
      expect(noCookie.body).toEqual({ statusCode: 400, message: "Invalid login callback" })
      const cookie = { cookie: `oidcState=${cookieOf(start, "oidcState")}` }
      expect((yield* client.get(`/api/auth/idp/callback?code=bob&state=${state}`, cookie)).status).toBe(302)
      const replay = yield* client.get(`/api/auth/idp/callback?code=bob&state=${state}`, cookie)
      expect(replay.status).toBe(400)
      expect(replay.body.message).toBe("Invalid login callback")
    }))

  it.scoped("without a session, or with an unknown one, endpoints answer 401", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      for (const headers of [{}, { authorization: "Bearer 0123456789abcdef0123456789abcdef" }, { cookie: "sessionId=nope" }]) {
        const response = yield* client.get("/api/auth/me", headers as Record<string, string>)
        expect(response.status).toBe(401)
        expect(response.body).toEqual({ statusCode: 401, message: "Unauthorized" })
      }
    }))

  it.scoped("the session read the rate limiter starts is taken once by the authentication, then forgotten", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const { sessionId } = yield* signIn(client, login("ahead"))
      const sessions = yield* client.service(Sessions)
      const request = HttpServerRequest.fromWeb(
        new Request("http://localhost/api/auth/me", { headers: { authorization: `Bearer ${sessionId}` } })
      )
      yield* startSessionReadAhead(sessions, request, sessionId)
      const slid = takeSessionReadAhead(request, sessionId)
      expect(slid).toBeDefined()
      expect(Option.isSome((yield* slid!).stored)).toBe(true)
      // Node keeps a connection's last request until its next one: nothing of the read may stay with it.
      expect(takeSessionReadAhead(request, sessionId)).toBeUndefined()
    }))

  it.scoped("validation slides the session: it lives 7 days from its last use, not from its creation", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const { auth } = yield* signIn(client, login("slide"))
      yield* TestClock.adjust(6 * DAY)
      expect((yield* client.get("/api/auth/me", auth)).status).toBe(200)
      yield* TestClock.adjust(6 * DAY)
      expect((yield* client.get("/api/auth/me", auth)).status).toBe(200)
      yield* TestClock.adjust(7 * DAY + 1000)
      expect((yield* client.get("/api/auth/me", auth)).status).toBe(401)
    }))

  it.scoped("a 6th session evicts the one idle the longest; the list is newest activity first", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const name = login("many")
      const sessions = []
      for (let i = 0; i < 5; i++) {
        sessions.push(yield* signIn(client, name, { "user-agent": `device-${i}` }))
        yield* TestClock.adjust(60_000)
      }
      // Using the first session makes the second the one idle the longest.
      expect((yield* client.get("/api/auth/me", sessions[0]!.auth)).status).toBe(200)
      yield* TestClock.adjust(60_000)
      const sixth = yield* signIn(client, name, { "user-agent": "device-5" })
      expect((yield* client.get("/api/auth/me", sessions[1]!.auth)).status).toBe(401)
      const listed = (yield* client.get("/api/auth/sessions", sixth.auth)).body.sessions
      expect(listed.map((s: { userAgent: string }) => s.userAgent)).toEqual([
        "device-5",
        "device-0",
        "device-4",
        "device-3",
        "device-2"
      ])
      expect(listed.map((s: { isCurrent: boolean }) => s.isCurrent)).toEqual([true, false, false, false, false])
      expect(Object.keys(listed[0]).sort()).toEqual(["createdAt", "id", "ip", "isCurrent", "lastActivity", "userAgent"])
      for (const kept of [sessions[0]!, sessions[2]!, sessions[3]!, sessions[4]!]) {
        expect((yield* client.get("/api/auth/me", kept.auth)).status).toBe(200)
      }
    }))

  it.scoped("a session can be revoked by its owner only; logout and logout-all end sessions", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const name = login("owner")
      const first = yield* signIn(client, name)
      const second = yield* signIn(client, name)
      const third = yield* signIn(client, name)
      const stranger = yield* signIn(client, login("stranger"))

      const foreign = yield* client.request(`/api/auth/sessions/${first.sessionId}`, { method: "DELETE", headers: stranger.auth })
      expect(foreign.status).toBe(403)
      expect(foreign.body).toEqual({ statusCode: 403, message: "Not your session" })
      const unknown = yield* client.request(`/api/auth/sessions/${"f".repeat(32)}`, { method: "DELETE", headers: first.auth })
      expect(unknown.status).toBe(404)

      const revoked = yield* client.request(`/api/auth/sessions/${second.sessionId}`, { method: "DELETE", headers: first.auth })
      expect(revoked.body).toEqual({ message: "Session revoked" })
      expect((yield* client.get("/api/auth/me", second.auth)).status).toBe(401)

      const logout = yield* client.post("/api/auth/logout", undefined, third.auth)
      expect(logout.body).toEqual({ message: "Logged out" })
      expect(setCookieLine(logout, "sessionId")).toMatch(/Max-Age=0|Expires=Thu, 01 Jan 1970/)
      expect((yield* client.get("/api/auth/me", third.auth)).status).toBe(401)

      const fourth = yield* signIn(client, name)
      const all = yield* client.post("/api/auth/logout-all", undefined, fourth.auth)
      expect(all.body).toEqual({ message: "All sessions revoked", sessionsRevoked: 2 })
      expect((yield* client.get("/api/auth/me", first.auth)).status).toBe(401)
      expect((yield* client.get("/api/auth/me", fourth.auth)).status).toBe(401)
      expect((yield* client.get("/api/auth/me", stranger.auth)).status).toBe(200)
    }))

  it.scoped("a session revoked while its own requests are in flight stays revoked", () =>
    Effect.gen(function*() {
      const lifted = { count: 10_000, windowMs: 60_000 }
      const client = yield* makeTestClient({ config: { rateLimits: { ...testConfig.rateLimits, auth: lifted, global: lifted } } })
      const name = login("stolen")
      const owner = yield* signIn(client, name)
      for (let round = 0; round < 5; round++) {
        const thief = yield* signIn(client, name)
        // Lanes of back-to-back requests with the session, until one is refused; the owner revokes it
        // after a few requests of their own, so the revocation lands among the thief's requests. Each
        // request comes when the session's copy of its user is old, so validation reads the database
        // between reading the session and writing it back.
        const lane = Effect.gen(function*() {
          for (let i = 0; i < 50; i++) {
            yield* TestClock.adjust(ACCOUNT_RECHECK_MS)
            if ((yield* client.get("/api/auth/sessions", thief.auth)).status === 401) return
          }
        })
        const revoke = Effect.gen(function*() {
          for (let i = 0; i < 3; i++) yield* client.get("/api/auth/sessions", owner.auth)
          return yield* client.request(`/api/auth/sessions/${thief.sessionId}`, { method: "DELETE", headers: owner.auth })
        })
        const [revoked] = yield* Effect.all([revoke, ...Array.from({ length: 8 }, () => lane)], { concurrency: "unbounded" })
        expect(revoked!.status).toBe(200)
        expect((yield* client.get("/api/auth/me", thief.auth)).status).toBe(401)
      }
    }))

  it.scoped("a session bound to a device refuses another device with 401 and an audit entry", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const { auth, sessionId } = yield* signIn(client, login("device"), { "x-device-id": "phone-A" })
      const me = (yield* client.get("/api/auth/me", auth)).body
      const other = yield* client.get("/api/auth/me", { ...auth, "x-device-id": "laptop-B" })
      expect(other.status).toBe(401)
      expect(other.body).toEqual({ statusCode: 401, message: "Device mismatch" })
      expect(yield* auditRows("DEVICE_MISMATCH", me.id)).toEqual([
        { entityId: sessionReference(sessionId), metadata: { expectedDevice: "phone-A", receivedDevice: "laptop-B" } }
      ])
      // The session is kept for its own device.
      expect((yield* client.get("/api/auth/me", auth)).status).toBe(200)
    }))

  it.scoped("a request from another country is served, audited once and the user alerted", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { trustProxy: 1 } })
      const brazil = { "x-forwarded-for": "200.147.67.142" }
      const { auth, sessionId } = yield* signIn(client, login("traveller"), brazil)
      const me = (yield* client.get("/api/auth/me", auth)).body
      expect(yield* auditRows("SUSPICIOUS_IP_CHANGE", me.id)).toEqual([])

      const fromUs = { ...auth, "x-forwarded-for": "10.0.0.1, 8.8.8.8" }
      expect((yield* client.get("/api/auth/me", fromUs)).status).toBe(200)
      expect((yield* client.get("/api/auth/me", fromUs)).status).toBe(200)
      expect(yield* auditRows("SUSPICIOUS_IP_CHANGE", me.id)).toEqual([
        // Recorded by its reference: the id signs in, and the audit log is read by administrators.
        { entityId: sessionReference(sessionId), metadata: { sessionId: sessionReference(sessionId), originalIp: "200.147.67.142", newIp: "8.8.8.8" } }
      ])
      const notifications = (yield* client.get("/api/notifications", auth)).body
      expect(notifications.unreadCount).toBe(1)
      expect(notifications.notifications[0]).toMatchObject({ type: "SECURITY_ALERT", read: false })

      // Private and unknown addresses have no region.
      expect((yield* client.get("/api/auth/me", { ...auth, "x-forwarded-for": "10.1.2.3" })).status).toBe(200)
      const home = yield* signIn(client, login("homebody"), { "x-forwarded-for": "192.168.0.10" })
      const homeMe = (yield* client.get("/api/auth/me", home.auth)).body
      yield* client.get("/api/auth/me", { ...home.auth, "x-forwarded-for": "8.8.8.8" })
      expect(yield* auditRows("SUSPICIOUS_IP_CHANGE", homeMe.id)).toEqual([])
    }))

  it.scoped("X-Forwarded-For is ignored unless TRUST_PROXY is set", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const { auth } = yield* signIn(client, login("direct"), { "x-forwarded-for": "200.147.67.142" })
      const me = (yield* client.get("/api/auth/me", auth)).body
      yield* client.get("/api/auth/me", { ...auth, "x-forwarded-for": "8.8.8.8" })
      expect(yield* auditRows("SUSPICIOUS_IP_CHANGE", me.id)).toEqual([])
      expect((yield* client.get("/api/auth/sessions", auth)).body.sessions[0].ip).toBe("127.0.0.1")
    }))

  it.scoped("the first request of a user on a UTC day records the day", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const { auth } = yield* signIn(client, login("active"))
      const me = (yield* client.get("/api/auth/me", auth)).body
      const today = new Date(yield* Clock.currentTimeMillis).toISOString().slice(0, 10)
      yield* TestClock.adjust(DAY)
      const tomorrow = new Date(yield* Clock.currentTimeMillis).toISOString().slice(0, 10)
      yield* client.get("/api/auth/me", auth)
      yield* client.get("/api/auth/me", auth)
      const sql = yield* SqlClient.SqlClient
      const days = yield* sql<{ day: string }>`
        SELECT to_char(day, 'YYYY-MM-DD') AS day FROM user_activity_days WHERE user_id = ${me.id} ORDER BY day`
      expect(days.map((d) => d.day)).toEqual([today, tomorrow])
    }))

  it.scoped("a session stored before sessions kept a copy of their user is served, and keeps one from then on", () =>
    Effect.gen(function*() {
      const stores = yield* Layer.build(Stores.memory)
      const client = yield* makeTestClient({ stores: Layer.succeedContext(stores) })
      const kv = Context.get(stores, KeyValue)
      const name = login("veteran")
      const { auth, sessionId } = yield* signIn(client, name)
      const key = `session:${sessionId}`
      const { account, ...before } = JSON.parse(Option.getOrThrow(yield* kv.get(key)))
      expect(account).toEqual({ username: name, role: "USER", checkedAt: expect.any(String) })
      yield* kv.set(key, JSON.stringify(before), 60_000)
      const me = yield* client.get("/api/inventory", auth)
      expect(me.status).toBe(200)
      expect(JSON.parse(Option.getOrThrow(yield* kv.get(key))).account).toEqual({
        username: name,
        role: "USER",
        checkedAt: new Date(yield* Clock.currentTimeMillis).toISOString()
      })
    }))
})
