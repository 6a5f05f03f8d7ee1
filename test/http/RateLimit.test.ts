/** Rate limits (docs/rules.md#rate-limits) through the public API, with the test clock driving the windows. */
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient, type TestResponse, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const limitHeaders = (response: TestResponse) => ({
  limit: response.headers.get("x-ratelimit-limit"),
  remaining: response.headers.get("x-ratelimit-remaining"),
  reset: response.headers.get("x-ratelimit-reset")
})

const repeat = (times: number, request: Effect.Effect<TestResponse>) =>
  Effect.forEach(Array.from({ length: times }), () => request)

const from = (ip: string, headers: Record<string, string> = {}) => ({ ...headers, "x-forwarded-for": ip })

const client = makeTestClient({ config: { trustProxy: 1 } })

const expectTooMany = (response: TestResponse, retryAfter: number) => {
  expect(response.status).toBe(429)
  expect(response.body).toEqual({ statusCode: 429, message: "Too many requests" })
  expect(response.headers.get("retry-after")).toBe(String(retryAfter))
  expect(response.headers.get("x-ratelimit-remaining")).toBe("0")
  // Like every API answer: never stored, never sniffed.
  expect([response.headers.get("cache-control"), response.headers.get("x-content-type-options")]).toEqual(["no-store", "nosniff"])
}

const verify = (c: TestClient, headers: Record<string, string>) => c.post("/api/auth/2fa/verify", { code: "123456" }, headers)

layer(TestDatabase)("rate limits", (it) => {
  it.scoped("every response carries the limit, what remains and when the window resets", () =>
    Effect.gen(function*() {
      const c = yield* client
      yield* TestClock.setTime(90_000) // half way through a one-minute window
      const health = yield* c.get("/api/health", from("203.0.113.1"))
      expect(limitHeaders(health)).toEqual({ limit: "100", remaining: "99", reset: "120" })
      for (const response of [yield* c.get("/api/nowhere", from("203.0.113.1")), yield* c.get("/api/auth/me", from("203.0.113.1"))]) {
        expect(response.status).toBeGreaterThanOrEqual(400)
        expect(limitHeaders(response).remaining).not.toBeNull()
      }
      expect(limitHeaders(yield* c.get("/api/health", from("203.0.113.1"))).remaining).toBe("96")
    }))

  it.scoped("global: 100 a minute per client address, then 429 with Retry-After until the next window", () =>
    Effect.gen(function*() {
      const c = yield* client
      yield* TestClock.setTime(60_000 * 10 + 15_000)
      const ok = yield* repeat(100, c.get("/api/health", from("203.0.113.2")))
      expect(ok.every((r) => r.status === 200)).toBe(true)
      expectTooMany(yield* c.get("/api/health", from("203.0.113.2")), 45)
      // Another address has its own budget.
      expect((yield* c.get("/api/health", from("203.0.113.3"))).status).toBe(200)
      yield* TestClock.adjust(45_000)
      const next = yield* c.get("/api/health", from("203.0.113.2"))
      expect(next.status).toBe(200)
      expect(limitHeaders(next).remaining).toBe("99")
    }))

  it.scoped("a signed-in user is counted on their own, not with their address", () =>
    Effect.gen(function*() {
      const c = yield* client
      yield* TestClock.setTime(60_000 * 20)
      const ip = "203.0.113.4"
      const alice = yield* signIn(c, "rate-alice", from(ip))
      const bob = yield* signIn(c, "rate-bob", from(ip))
      yield* repeat(100, c.get("/api/auth/me", from(ip, alice.auth)))
      expectTooMany(yield* c.get("/api/auth/me", from(ip, alice.auth)), 60)
      expect((yield* c.get("/api/auth/me", from(ip, bob.auth))).status).toBe(200)
      // The address itself spent only the sign-in requests.
      expect((yield* c.get("/api/health", from(ip))).status).toBe(200)
    }))

  it.scoped("a session that is gone no longer counts against its user, but against the address", () =>
    Effect.gen(function*() {
      const c = yield* client
      yield* TestClock.setTime(60_000 * 25)
      const carol = yield* signIn(c, "rate-carol", from("203.0.113.5"))
      yield* repeat(50, c.get("/api/auth/me", from("203.0.113.5", carol.auth)))
      expect((yield* c.post("/api/auth/logout", undefined, from("203.0.113.5", carol.auth))).status).toBe(200)
      const gone = yield* c.get("/api/auth/me", from("203.0.113.6", carol.auth))
      expect(gone.status).toBe(401)
      expect(limitHeaders(gone).remaining).toBe("99") // the new address's first request
      const fresh = yield* signIn(c, "rate-carol", from("203.0.113.5"))
      // 50 reads and the logout were carol's; the request with the old session was not.
      expect(limitHeaders(yield* c.get("/api/auth/me", from("203.0.113.5", fresh.auth))).remaining).toBe("48")
    }))

  it.scoped("sign-in endpoints: 10 a minute per address", () =>
    Effect.gen(function*() {
      const c = yield* client
      yield* TestClock.setTime(60_000 * 30)
      const logins = yield* repeat(10, c.get("/api/auth/idp/login", from("203.0.113.5")))
      expect(logins.every((r) => r.status === 302)).toBe(true)
      expect(limitHeaders(logins[9]!)).toMatchObject({ limit: "10", remaining: "0" })
      expectTooMany(yield* c.get("/api/auth/idp/login", from("203.0.113.5")), 60)
      expectTooMany(yield* c.get("/api/auth/idp/callback?code=x&state=y", from("203.0.113.5")), 60)
      expect((yield* c.get("/api/health", from("203.0.113.5"))).status).toBe(200)
    }))

  it.scoped("2FA verify: 5 per 300000 ms, wrong codes included", () =>
    Effect.gen(function*() {
      const c = yield* client
      yield* TestClock.setTime(300_000 * 10)
      const user = yield* signIn(c, "rate-verify")
      const answers = yield* repeat(5, verify(c, user.auth))
      expect(answers.map((r) => r.status)).toEqual([400, 400, 400, 400, 400]) // 2FA not enabled
      expect(limitHeaders(answers[0]!)).toMatchObject({ limit: "5", remaining: "4" })
      expectTooMany(yield* verify(c, user.auth), 300)
      yield* TestClock.adjust(300_000)
      expect((yield* verify(c, user.auth)).status).toBe(400)
    }))

  it.scoped("case opening (5 a minute) and withdrawal (3 a minute) are counted per user", () =>
    Effect.gen(function*() {
      const c = yield* client
      yield* TestClock.setTime(60_000 * 40)
      const user = yield* signIn(c, "rate-spender")
      const opens = yield* repeat(5, c.post("/api/cases/1/open", {}, user.auth))
      expect(limitHeaders(opens[0]!)).toMatchObject({ limit: "5", remaining: "4" })
      expectTooMany(yield* c.post("/api/cases/1/open", {}, user.auth), 60)
      const withdrawals = yield* repeat(3, c.post("/api/withdrawals/request", {}, user.auth))
      expect(limitHeaders(withdrawals[2]!)).toMatchObject({ limit: "3", remaining: "0" })
      expectTooMany(yield* c.post("/api/withdrawals/request", {}, user.auth), 60)
      const other = yield* signIn(c, "rate-saver")
      expect((yield* c.post("/api/cases/1/open", {}, other.auth)).status).not.toBe(429)
    }))

  it.scoped("no spelling of a path escapes its limit: trailing slash, //, upper case, %-encoding, ;suffix", () =>
    Effect.gen(function*() {
      const c = yield* client
      yield* TestClock.setTime(300_000 * 20)
      const user = yield* signIn(c, "rate-speller")
      const spellings = [
        "/api/auth/2fa/verify",
        "/api/auth/2fa/verify/",
        "//api//auth/2fa/verify",
        "/API/Auth/2FA/Verify",
        "/api/auth/2fa/verif%79",
        "/api/auth/2fa/verify;x",
        "/api/auth/2fa/verify?x=1"
      ]
      const answers = yield* Effect.forEach(spellings, (path) => c.post(path, { code: "123456" }, user.auth))
      // Every spelling reached the endpoint (2FA is not enabled: 400) and counted against its limit.
      expect(answers.slice(0, 5).map((r) => r.status)).toEqual([400, 400, 400, 400, 400])
      for (const answer of answers.slice(5)) expectTooMany(answer, 300)
      expect(answers[4]!.body).toEqual({ statusCode: 400, message: "2FA not enabled" })

      // The same for case openings, counted per user.
      const opens = yield* Effect.forEach(
        ["/api/cases/1/open", "/api/cases/1/open/", "/API/CASES/1/OPEN", "//api/cases/1//open", "/api/cases/1/op%65n"],
        (path) => c.post(path, {}, user.auth)
      )
      expect(opens.every((r) => r.status !== 429)).toBe(true)
      expectTooMany(yield* c.post("/api/cases/1/open;jsessionid=1", {}, user.auth), 60)

      // And the gateway callback's exemption is not a door: only the callback itself is exempt.
      const payment = yield* c.post("/api/webhooks/payment/", {}, user.auth)
      expect(payment.headers.get("x-ratelimit-limit")).toBeNull()
    }))

  it.scoped("2FA disable has a limit of its own: 5 per 300000 ms", () =>
    Effect.gen(function*() {
      const c = yield* client
      yield* TestClock.setTime(300_000 * 30)
      const user = yield* signIn(c, "rate-disabler")
      const disable = (path: string) => c.post(path, { code: "123456" }, user.auth)
      const answers = yield* Effect.forEach(
        ["/api/auth/2fa/disable", "/api/auth/2fa/disable/", "/api/AUTH/2fa/disable", "/api/auth/2fa/disable;a", "//api/auth/2fa/disable"],
        disable
      )
      expect(answers.map((r) => r.status)).toEqual([400, 400, 400, 400, 400])
      expect(limitHeaders(answers[0]!)).toMatchObject({ limit: "5", remaining: "4" })
      expectTooMany(yield* disable("/api/auth/2fa/disable"), 300)
    }))

  it.scoped("identity verification: 5 an hour per user (each is a KYC check and a registry lookup)", () =>
    Effect.gen(function*() {
      const c = yield* makeTestClient({
        config: { trustProxy: 1, rateLimits: { ...testConfig.rateLimits, identityVerify: { count: 5, windowMs: 3_600_000 } } }
      })
      yield* TestClock.setTime(3_600_000 * 30)
      const user = yield* signIn(c, "rate-verifier")
      const attempt = c.post("/api/users/me/identity", { cpf: "123", fullName: "X", birthDate: "nope" }, user.auth)
      const answers = yield* repeat(5, attempt)
      expect(answers.map((r) => r.status)).toEqual([400, 400, 400, 400, 400]) // counted even when refused
      expect(limitHeaders(answers[4]!)).toMatchObject({ limit: "5", remaining: "0" })
      expectTooMany(yield* attempt, 3600)
      // Another user has their own count.
      expect((yield* c.post("/api/users/me/identity", {}, (yield* signIn(c, "rate-verifier-2")).auth)).status).not.toBe(429)
    }))

  it.scoped("TRUST_PROXY counts proxies from the right: an address the client writes into X-Forwarded-For is ignored", () =>
    Effect.gen(function*() {
      const c = yield* client
      yield* TestClock.setTime(60_000 * 50)
      // Behind one proxy, which appends the address it saw (203.0.113.40) to whatever the client sent.
      const spoofed = (n: number) => ({ "x-forwarded-for": `198.51.100.${n}, 203.0.113.40` })
      const answers = yield* Effect.forEach(Array.from({ length: 10 }, (_, i) => i), (i) => c.get("/api/auth/idp/login", spoofed(i)))
      expect(answers.every((r) => r.status === 302)).toBe(true)
      expectTooMany(yield* c.get("/api/auth/idp/login", spoofed(99)), 60)
      expectTooMany(yield* c.get("/api/auth/idp/login", { "x-forwarded-for": "203.0.113.40" }), 60)

      // Two proxies: the second entry from the right is the client.
      const twoProxies = yield* makeTestClient({ config: { trustProxy: 2, trustedProxies: ["127.0.0.0/8", "10.0.0.0/8"] } })
      const behindTwo = (client: string) => ({ "x-forwarded-for": `6.6.6.6, ${client}, 10.0.0.2` })
      yield* repeat(10, twoProxies.get("/api/auth/idp/login", behindTwo("203.0.113.41")))
      expectTooMany(yield* twoProxies.get("/api/auth/idp/login", behindTwo("203.0.113.41")), 60)
      expect((yield* twoProxies.get("/api/auth/idp/login", behindTwo("203.0.113.42"))).status).toBe(302)
    }))
})
