/**
 * The centralized self-exclusion registry's checks under JURISDICTION=BR (docs/responsible-gaming.md#registry, D23),
 * against the sandbox registry (its list kept with `POST`/`DELETE /api/sandbox/exclusion-registry`): identity
 * verification refuses a listed CPF and stores nothing; the first authenticated request of a player's day (America/
 * Sao_Paulo) consults the registry, so a player listed since is excluded (indefinitely, while listed) and one delisted
 * is free again; a player listed newly has their balance paid out, or the dashboard asks an administrator to; the
 * 15-day job looks up every verified player not looked up for 15 days. A registry that does not answer fails no
 * request. Under JURISDICTION=NONE nothing consults it. Asserted through the public API; the job's run through the
 * app's own ResponsibleGaming service, as the scheduler calls it.
 */
import { SqlClient } from "@effect/sql"
import { type AddressInfo } from "node:net"
import { createServer, type Server } from "node:http"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Logger, Option, Redacted, TestClock } from "effect"
import type { Jurisdiction } from "../../src/layers/AppConfig"
import { ResponsibleGaming } from "../../src/services/identity/ResponsibleGaming"
import { cpfOf, formatted } from "../support/Cpf"
import { balanceOf, fundedPlayer, makeCase } from "../support/GameFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient, type TestResponse, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { makeTestGateway } from "../support/TestGateway"
import { withdrawal } from "../support/WithdrawalFixtures"

const NOW = Date.parse("2026-11-26T12:00:00Z")
const DAY = 24 * 60 * 60 * 1000
/** The next day in America/Sao_Paulo (UTC-3) begins at 03:00 UTC. */
const nextDayStart = (day: number) => Date.parse("2026-11-27T03:00:00Z") + day * DAY
const REGISTRY = "/api/sandbox/exclusion-registry"
const lifted = { count: 1000, windowMs: 60_000 }

const app = (jurisdiction: Jurisdiction, extra: Partial<typeof testConfig> = {}, options?: Parameters<typeof makeTestClient>[0]) =>
  makeTestClient({
    ...options,
    config: {
      jurisdiction,
      adminIdpIds: ["root"],
      rateLimits: { ...testConfig.rateLimits, global: lifted, auth: lifted, caseOpen: lifted, withdrawal: lifted },
      ...extra
    }
  })

let cpfs = 0
/** A fresh valid CPF (never one the sandbox KYC calls irregular). */
const newCpf = () => cpfOf(String(517_000_000 + ++cpfs))

const identity = (client: TestClient, auth: Record<string, string>, cpf: string) =>
  client.post("/api/users/me/identity", { cpf: formatted(cpf), fullName: "Listed Player", birthDate: "1990-01-01" }, auth)

/** A funded player, identity verified with `cpf` and limits set (as BR requires before playing). */
const verifiedPlayer = (client: TestClient, login: string, balanceCents: number, cpf = newCpf()) =>
  Effect.gen(function*() {
    const player = yield* fundedPlayer(client, login, balanceCents)
    const verified = yield* identity(client, player.auth, cpf)
    expect(verified.status, JSON.stringify(verified.body)).toBe(200)
    const limits = yield* client.put("/api/users/me/limits", { dailyLossCents: 100_000, dailyPlayMinutes: 600 }, player.auth)
    expect(limits.status).toBe(200)
    return { ...player, cpf }
  })

const list = (client: TestClient, auth: Record<string, string>, cpf: string) =>
  Effect.map(client.post(REGISTRY, { cpf }, auth), (r) => expect(r.status).toBe(201))
const delist = (client: TestClient, auth: Record<string, string>, cpf: string) =>
  Effect.map(client.request(REGISTRY, { method: "DELETE", headers: { "content-type": "application/json", ...auth }, body: JSON.stringify({ cpf }) }), (r) =>
    expect(r.status).toBe(200))

const exclusionOf = (client: TestClient, auth: Record<string, string>) =>
  Effect.map(client.get("/api/users/me/compliance", auth), (r) => {
    expect(r.status).toBe(200)
    return r.body.exclusion as { excluded: boolean; since: string | null; until: string | null; registryListed: boolean }
  })

const expectSelfExcluded = (response: TestResponse) => {
  expect(response.status, JSON.stringify(response.body)).toBe(403)
  expect(response.body).toEqual({ statusCode: 403, error: "SELF_EXCLUDED", message: expect.any(String), until: null })
}

const expectOpened = (response: TestResponse) => expect([200, 201], JSON.stringify(response.body)).toContain(response.status)

const auditOf = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ action: string; metadata: unknown }>`
      SELECT action, metadata FROM audit_logs
      WHERE user_id = ${userId} AND action IN ('SELF_EXCLUDED', 'REGISTRY_DELISTED') ORDER BY id`)
    .pipe(Effect.map((rows) =>
      rows.map((row) => ({ action: row.action, metadata: typeof row.metadata === "string" ? JSON.parse(row.metadata) : row.metadata }))
    ))

/** Runs `effect` to its end while moving the TestClock on (a registry's retries and time limits wait on it). */
const whileClockRuns = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    for (let i = 0; i < 400; i++) {
      const done = yield* Fiber.poll(fiber)
      if (Option.isSome(done)) break
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      yield* TestClock.adjust("500 millis")
    }
    return yield* Fiber.join(fiber)
  })

layer(TestDatabase)("the self-exclusion registry's checks", (it) => {
  it.scoped("identity verification with a listed CPF: 403 SELF_EXCLUDED, until null, nothing stored; delisted, it succeeds", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const client = yield* app("BR")
      const player = yield* fundedPlayer(client, "registry-verify", 0)
      const cpf = newCpf()
      yield* list(client, player.auth, cpf)

      const refused = yield* identity(client, player.auth, cpf)
      expectSelfExcluded(refused)
      const compliance = (yield* client.get("/api/users/me/compliance", player.auth)).body
      expect(compliance.identity).toEqual({ status: "UNVERIFIED" })
      expect(compliance.exclusion).toMatchObject({ excluded: false, registryListed: false })
      // Nothing stored: the CPF is not taken (another account may try it; the registry still refuses it).
      const other = yield* fundedPlayer(client, "registry-verify-other", 0)
      expectSelfExcluded(yield* identity(client, other.auth, cpf))

      yield* delist(client, player.auth, cpf)
      const verified = yield* identity(client, player.auth, cpf)
      expect(verified.status, JSON.stringify(verified.body)).toBe(200)
      expect(verified.body).toMatchObject({ status: "VERIFIED", cpf: `***.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-**` })
      expect((yield* client.get("/api/users/me/compliance", player.auth)).body.identity.status).toBe("VERIFIED")
    }))

  it.scoped("the daily check: listed after verification, excluded from the first request of the next day; delisted, free the day after", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const client = yield* app("BR")
      const { kase } = yield* makeCase()
      const player = yield* verifiedPlayer(client, "registry-daily", 100_000)
      const open = () => client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)
      yield* list(client, player.auth, player.cpf)

      // The verification consulted the registry today: the rest of the day's requests do not ask again.
      expectOpened(yield* open())
      expect(yield* exclusionOf(client, player.auth)).toMatchObject({ excluded: false, registryListed: false })
      yield* TestClock.setTime(nextDayStart(0) - 60_000) // 23:59 in Sao Paulo, still the same day
      expectOpened(yield* open())
      expect(yield* auditOf(player.id)).toEqual([])

      // A new day in Sao Paulo: the first request consults the registry.
      yield* TestClock.setTime(nextDayStart(0) + 1_000)
      const exclusion = yield* exclusionOf(client, player.auth)
      expect(exclusion).toMatchObject({ excluded: true, until: null, registryListed: true })
      expect(exclusion.since).toBe(new Date(nextDayStart(0) + 1_000).toISOString())
      expectSelfExcluded(yield* open())
      expectSelfExcluded(yield* client.post("/api/payment/deposit/initiate", { amountCents: 5_000, method: "PIX" }, player.auth))
      for (const path of ["/api/auth/me", "/api/inventory", "/api/cases", "/api/payment/deposits", "/api/withdrawals", "/api/users/me/limits"]) {
        expect((yield* client.get(path, player.auth)).status, path).toBe(200)
      }
      expect(yield* auditOf(player.id)).toEqual([{ action: "SELF_EXCLUDED", metadata: { source: "registry" } }])

      // Delisted: excluded for the rest of the day (checked today), free from the next day's first request.
      yield* delist(client, player.auth, player.cpf)
      expectSelfExcluded(yield* open())
      yield* TestClock.setTime(nextDayStart(1) + 1_000)
      expectOpened(yield* open())
      expect(yield* exclusionOf(client, player.auth)).toEqual({ excluded: false, since: null, until: null, registryListed: false })
      expect((yield* auditOf(player.id)).map((a) => a.action)).toEqual(["SELF_EXCLUDED", "REGISTRY_DELISTED"])
    }))

  it.scoped("newly listed: the balance is paid out to the last used own key, or without one the dashboard's excluded-balance alert", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const gateway = yield* makeTestGateway()
      const client = yield* app("BR", {}, { gateway: gateway.layer })
      const root = (yield* signIn(client, "root")).auth
      const noKey = yield* verifiedPlayer(client, "registry-no-key", 4_321)
      const withKey = yield* verifiedPlayer(client, "registry-with-key", 30_000)
      const KEY = { pixKeyType: "EMAIL", pixKey: "registry.own@example.com" }
      const paid = yield* client.post("/api/withdrawals/request", withdrawal(5_000, KEY), withKey.auth)
      expect(paid.status, JSON.stringify(paid.body)).toBe(201)
      expect(paid.body.status).toBe("COMPLETED")
      const alerts = Effect.map(client.get("/api/admin/dashboard/alerts", root), (r) => {
        expect(r.status).toBe(200)
        return (r.body.alerts as ReadonlyArray<{ id: string; level: string; message: string }>)
          .filter((a) => a.id === `excluded-balance:${noKey.id}` || a.id === `excluded-balance:${withKey.id}`)
      })
      yield* list(client, root, noKey.cpf)
      yield* list(client, root, withKey.cpf)
      expect(yield* alerts).toEqual([])

      yield* TestClock.setTime(nextDayStart(0) + 1_000)
      expect((yield* client.get("/api/auth/me", noKey.auth)).status).toBe(200)
      expect((yield* client.get("/api/auth/me", withKey.auth)).status).toBe(200)

      // No key to pay to: the money waits for an administrator, named by the alert.
      const shown = yield* alerts
      expect(shown.map((a) => a.id)).toEqual([`excluded-balance:${noKey.id}`])
      expect(shown[0]).toMatchObject({ level: "WARNING" })
      expect(shown[0]!.message).toContain("R$ 43.21")
      expect(yield* balanceOf(client, noKey.auth)).toBe(4_321)

      // A completed withdrawal: the whole balance goes to its key.
      expect(yield* balanceOf(client, withKey.auth)).toBe(0)
      const payouts = yield* gateway.payouts
      expect(payouts).toHaveLength(2)
      expect(payouts[1]).toMatchObject({ amountCents: 25_000n, pixKeyType: "EMAIL", pixKey: KEY.pixKey })
      const rows = (yield* client.get("/api/withdrawals", withKey.auth)).body.withdrawals as ReadonlyArray<{ amountCents: number; status: string }>
      expect(rows.map((w) => [w.amountCents, w.status]).sort()).toEqual([[25_000, "COMPLETED"], [5_000, "COMPLETED"]])
    }))

  it.scoped("the 15-day job: a player listed after verification is looked up 15 days later; a failing registry fails no request", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const client = yield* app("BR")
      const { kase } = yield* makeCase()
      const player = yield* verifiedPlayer(client, "registry-job", 50_000)
      const keeper = (yield* signIn(client, "registry-job-keeper")).auth
      yield* list(client, keeper, player.cpf)
      const job = yield* client.service(ResponsibleGaming)

      // No request from the player: only the job looks them up, once they were not for 15 days.
      expect(yield* job.recheckRegistry()).toBe(0)
      yield* TestClock.setTime(NOW + 14 * DAY)
      expect(yield* job.recheckRegistry()).toBe(0)
      yield* TestClock.setTime(NOW + 15 * DAY - 60_000)
      expect(yield* job.recheckRegistry()).toBe(0)
      expect(yield* auditOf(player.id)).toEqual([])
      yield* TestClock.setTime(NOW + 15 * DAY)
      expect(yield* job.recheckRegistry()).toBeGreaterThanOrEqual(1)
      expect(yield* auditOf(player.id)).toEqual([{ action: "SELF_EXCLUDED", metadata: { source: "registry" } }])
      // The job's verdict stands (the day's check need not ask again, so delisting now changes nothing today).
      // Sessions last 7 days: both sign in again.
      yield* delist(client, (yield* signIn(client, "registry-job-keeper")).auth, player.cpf)
      const again = (yield* signIn(client, "registry-job")).auth
      expect(yield* exclusionOf(client, again)).toMatchObject({ excluded: true, until: null, registryListed: true })
      expectSelfExcluded(yield* client.post(`/api/cases/${kase.id}/open`, undefined, again))
      // Looked up just now: not due again.
      expect(yield* job.recheckRegistry()).toBe(0)

      // Another player, verified on day 31; on day 47 (every verified player due) the service runs against a registry
      // that does not answer (nothing listens on port 9).
      yield* TestClock.setTime(NOW + 31 * DAY)
      const other = yield* verifiedPlayer(client, "registry-job-other", 50_000)
      yield* TestClock.setTime(NOW + 47 * DAY)
      const logged: Array<string> = []
      const capture = Logger.make(({ message }) => void logged.push(String(message)))
      const failing = yield* app(
        "BR",
        { exclusionRegistry: { url: Option.some("http://127.0.0.1:9"), key: Option.some(Redacted.make("k")) } },
        { logging: Logger.replace(Logger.defaultLogger, capture) }
      )
      const failures = (text: string) => logged.filter((line) => line.includes(text)).length
      const otherAuth = (yield* signIn(failing, "registry-job-other")).auth
      // The day's first request asks the registry, which fails: the request is answered all the same.
      const me = yield* whileClockRuns(failing.get("/api/auth/me", otherAuth))
      expect(me.status).toBe(200)
      // The lookup goes on after the request (which waits for it a second at most) until its retries are spent.
      yield* whileClockRuns(Effect.gen(function*() {
        while (failures("the daily check failed") === 0) yield* Effect.sleep("100 millis")
      }))
      expect(failures("the daily check failed")).toBe(1)
      expectOpened(yield* whileClockRuns(failing.post(`/api/cases/${kase.id}/open`, undefined, otherAuth)))
      expect(yield* exclusionOf(failing, otherAuth)).toMatchObject({ excluded: false })
      expect(failures("the daily check failed")).toBe(1) // asked again only 5 minutes later
      expect(yield* whileClockRuns((yield* failing.service(ResponsibleGaming)).recheckRegistry())).toBe(0)
      // Every verified player was due and asked for; each lookup failed and waits for the next run.
      expect(failures("a periodic check failed")).toBeGreaterThanOrEqual(2)
      expect(yield* auditOf(other.id)).toEqual([])
    }))

  it.scoped("a slow registry holds a player's requests at most a second, their parallel requests share one lookup, and its verdict still applies", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW + 200 * DAY)
      // A registry that answers at once until told to hold its answers; then it answers `listed` when released.
      let hits = 0
      let hold = false
      let release: () => void = () => {}
      const released = new Promise<void>((resolve) => (release = resolve))
      const server = yield* Effect.acquireRelease(
        Effect.promise(() =>
          new Promise<Server>((resolve) => {
            const s = createServer((request, response) => {
              hits++
              const answer = (listed: boolean) => {
                response.writeHead(200, { "content-type": "application/json" })
                response.end(JSON.stringify({ listed }))
              }
              request.resume()
              if (hold) void released.then(() => answer(true))
              else answer(false)
            })
            s.listen(0, "127.0.0.1", () => resolve(s))
          })
        ),
        (s) => Effect.promise(() => new Promise<void>((resolve) => s.close(() => resolve())))
      )
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const client = yield* app("BR", { exclusionRegistry: { url: Option.some(url), key: Option.some(Redacted.make("k")) } })
      const player = yield* verifiedPlayer(client, "registry-slow", 10_000)
      expect(hits).toBe(1) // the verification's lookup

      // The next day: the registry holds its answer. Six parallel requests wait one second of the clock, not more.
      yield* TestClock.setTime(NOW + 201 * DAY)
      hold = true
      const requests = yield* Effect.fork(Effect.all(Array.from({ length: 6 }, () => client.get("/api/auth/me", player.auth)), {
        concurrency: "unbounded"
      }))
      // Move the clock on in small steps until all six are answered (each waits a second from when it arrived), but
      // stay under the registry client's 5 seconds per attempt, so the lookup is still the one in flight.
      let moved = 0
      for (let i = 0; i < 500 && Option.isNone(yield* Fiber.poll(requests)); i++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
        if (hits >= 2 && moved < 4_000) {
          yield* TestClock.adjust("250 millis")
          moved += 250
        }
      }
      const answers = yield* Fiber.join(requests)
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200])
      expect(hits).toBe(2) // one lookup for all six

      // Its answer arrives: the player is excluded from then on.
      release()
      let exclusion = yield* exclusionOf(client, player.auth)
      for (let i = 0; i < 100 && !exclusion.excluded; i++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
        exclusion = yield* exclusionOf(client, player.auth)
      }
      expect(exclusion).toMatchObject({ excluded: true, registryListed: true })
      expect(hits).toBe(2)
    }))

  it.scoped("under JURISDICTION=NONE nothing consults the registry: a verified player whose CPF is listed is never excluded", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW + 100 * DAY)
      // Verified while the service ran under BR; the service now runs under NONE on the same database.
      const br = yield* app("BR")
      const { kase } = yield* makeCase()
      const { cpf } = yield* verifiedPlayer(br, "registry-none", 50_000)
      yield* TestClock.setTime(NOW + 120 * DAY)
      const client = yield* app("NONE")
      const player = (yield* signIn(client, "registry-none")).auth
      yield* list(client, player, cpf)
      const job = yield* client.service(ResponsibleGaming)
      // Every verified player of this database is due (not looked up for 15 days): none is looked up.
      expect(yield* job.recheckRegistry()).toBe(0)
      yield* TestClock.setTime(NOW + 121 * DAY)
      expectOpened(yield* client.post(`/api/cases/${kase.id}/open`, undefined, player))
      expect(yield* exclusionOf(client, player)).toEqual({ excluded: false, since: null, until: null, registryListed: false })
      expect(yield* job.recheckRegistry()).toBe(0)
      expect(yield* auditOf((yield* client.get("/api/auth/me", player)).body.id)).toEqual([])
    }))
})
