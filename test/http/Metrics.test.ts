/**
 * GET /metrics: Prometheus text behind METRICS_TOKEN, with the request, game, lock and job figures;
 * and the request id every answer carries.
 */
import { expect, layer } from "@effect/vitest"
import { ConfigProvider, Deferred, Effect, Fiber, TestClock } from "effect"
import { UserLock } from "../../src/layers/stores/UserLock"
import { fundedPlayer, makeCase } from "../support/GameFixtures"
import { makeTestClient, type TestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const TOKEN = "metrics-token-of-at-least-32-bytes-long"

/** The app with METRICS_TOKEN set (the rest of the environment as it is). */
const withToken = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.withConfigProvider(
    effect,
    ConfigProvider.fromMap(new Map([["METRICS_TOKEN", TOKEN]])).pipe(ConfigProvider.orElse(() => ConfigProvider.fromEnv()))
  )

const app = withToken(makeTestClient({ config: { adminIdpIds: ["root"] }, accessLog: true }))

const scrape = (client: TestClient) =>
  Effect.map(client.get("/metrics", { authorization: `Bearer ${TOKEN}` }), (response) => {
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/)
    return response.body as string
  })

/** The value of the sample `name` whose labels include `labels` (0 when there is none yet). */
const sample = (text: string, name: string, labels: Record<string, string> = {}) => {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`)
  const line = text.split("\n").find((l) =>
    (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && wanted.every((pair) => l.includes(pair))
  )
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1))
}

layer(TestDatabase)("metrics", (it) => {
  it.scoped("after some openings: request counts and latencies by route, rounds and money by game", () =>
    Effect.gen(function*() {
      const client = yield* app
      const { kase } = yield* makeCase({ priceCents: 500n })
      const player = yield* fundedPlayer(client, "metered", 2_000)
      const before = yield* scrape(client)

      const opened = yield* Effect.forEach([1, 2, 3], () => client.post(`/api/cases/${kase.id}/open`, undefined, player.auth))
      expect(opened.map((r) => r.status)).toEqual([200, 200, 200])
      const won = opened.reduce((sum, r) => sum + (r.body.item.valueCents as number), 0)
      const after = yield* scrape(client)

      const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels)
      const openRoute = { method: "POST", route: "/api/cases/:id/open" }
      expect(delta("http_server_requests_total", { ...openRoute, status: "200" })).toBe(3)
      expect(delta("http_server_request_duration_seconds_count", openRoute)).toBe(3)
      expect(delta("http_server_request_duration_seconds_bucket", { ...openRoute, le: "+Inf" })).toBe(3)
      expect(delta("game_rounds_total", { game: "case_open" })).toBe(3)
      expect(delta("game_stakes_cents_total", { game: "case_open" })).toBe(1_500)
      expect(delta("game_awards_cents_total", { game: "case_open" })).toBe(won)
      // Every opening takes the user's lock once.
      expect(delta("user_lock_wait_count")).toBe(3)
      // The raw path never becomes a label: the route is the endpoint's template.
      expect(after).not.toContain(`/api/cases/${kase.id}/open`)
      expect(sample(after, "database_up")).toBe(1)
      expect(sample(after, "redis_up")).toBe(1)
      expect(after).toMatch(/^# TYPE http_server_request_duration_seconds histogram$/m)
    }))

  it.scoped("a lock wait that gives up is counted as busy", () =>
    Effect.gen(function*() {
      const client = yield* app
      const before = yield* scrape(client)
      const lock = yield* UserLock
      const taken = yield* Deferred.make<void>()
      const holder = yield* lock.withLock("user:busy", Effect.zipRight(Deferred.succeed(taken, undefined), Effect.never))
        .pipe(Effect.fork)
      yield* Deferred.await(taken)
      const waiter = yield* lock.withLock("user:busy", Effect.void).pipe(Effect.either, Effect.fork)
      yield* TestClock.adjust("5300 millis")
      expect((yield* Fiber.join(waiter))._tag).toBe("Left")
      yield* Fiber.interrupt(holder)
      const after = yield* scrape(client)
      expect(sample(after, "user_lock_busy_total") - sample(before, "user_lock_busy_total")).toBe(1)
    }).pipe(Effect.provide(UserLock.memory)))

  it.scoped("answers 401 without the token, and is not served when METRICS_TOKEN is unset", () =>
    Effect.gen(function*() {
      const client = yield* app
      for (const authorization of [undefined, "Bearer wrong", `Basic ${TOKEN}`]) {
        const response = yield* client.get("/metrics", authorization === undefined ? {} : { authorization })
        expect([authorization, response.status, response.body]).toEqual([
          authorization,
          401,
          { statusCode: 401, message: "Unauthorized" }
        ])
      }
      const unset = yield* makeTestClient()
      expect((yield* unset.get("/metrics")).status).toBe(404)
    }))

  it.scoped("every answer carries a request id: the load balancer's when it is a plain token, else a new one", () =>
    Effect.gen(function*() {
      const client = yield* app
      const given = yield* client.get("/api/health", { "x-request-id": "lb-7f3a.42" })
      expect(given.headers.get("x-request-id")).toBe("lb-7f3a.42")
      const made = yield* client.get("/api/nowhere", { "x-request-id": "not a token\u0007" })
      expect(made.status).toBe(404)
      expect(made.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    }))
})
