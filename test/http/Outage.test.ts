/**
 * A dependency that goes away is a 503 `Service unavailable` with Retry-After, not a 500, and the
 * service answers again as soon as it is back (docs/rules.md#dependency-outage): the classification of driver
 * errors, and real Redis and PostgreSQL servers of the test's own stopped and restarted under a running app.
 */
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it as plain, layer } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Logger, Redacted, Schedule } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseLive } from "../../src/layers/Database"
import { MigrationsLive } from "../../src/layers/Migrations"
import { Broadcast } from "../../src/layers/stores/Broadcast"
import { Stores } from "../../src/layers/stores/Stores"
import { singleNode } from "../../src/layers/stores/RedisTarget"
import { isTransientConflict, isUnavailable } from "../../src/layers/Failures"
import { ServiceUnavailable } from "../../src/schema/platform/Errors"
import { Ledger } from "../../src/services/money/Ledger"
import { fundedPlayer, makeCase } from "../support/GameFixtures"
import { hasRedisServer } from "../support/RedisTopologies"
import { makeTestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code })

describe("outage classification", () => {
  plain("connection failures of PostgreSQL and Redis are outages; other errors are not", () => {
    const refused = new SqlError({ cause: withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"), message: "Failed to execute statement" })
    expect(isUnavailable(refused)).toBe(true)
    expect(isUnavailable(new SqlError({ cause: new Error("Connection terminated unexpectedly"), message: "Failed" }))).toBe(true)
    expect(isUnavailable(new SqlError({ cause: withCode("terminating connection due to administrator command", "57P01"), message: "Failed" }))).toBe(true)
    expect(isUnavailable(new SqlError({ cause: withCode("connection failure", "08006"), message: "Failed" }))).toBe(true)
    const redisGaveUp = Object.assign(new Error("Reached the max retries per request limit (which is 3)."), { name: "MaxRetriesPerRequestError" })
    expect(isUnavailable(new Error("An unknown error occurred", { cause: redisGaveUp }))).toBe(true)

    // Found by the fault-injection run: the pool's client after its connection broke.
    expect(isUnavailable(new SqlError({ cause: new Error("Client has encountered a connection error and is not queryable"), message: "Failed" })))
      .toBe(true)
    // Node's connect to several addresses fails with an AggregateError of them.
    expect(isUnavailable(new SqlError({ cause: new AggregateError([withCode("connect ECONNREFUSED ::1:5432", "ECONNREFUSED")], ""), message: "Failed" })))
      .toBe(true)
    expect(isUnavailable(new SqlError({ cause: withCode("canceling statement due to lock timeout", "55P03"), message: "Failed" }))).toBe(true)
    expect(isUnavailable(new SqlError({ cause: withCode("canceling statement due to statement timeout", "57014"), message: "Failed" }))).toBe(true)
    expect(isUnavailable(new SqlError({ cause: withCode("the database system is starting up", "57P03"), message: "Failed" }))).toBe(true)
    // Conflicts are retried by the transaction, not outages in themselves.
    expect(isTransientConflict(new SqlError({ cause: withCode("could not serialize access", "40001"), message: "Failed" }))).toBe(true)
    expect(isTransientConflict(new SqlError({ cause: withCode("deadlock detected", "40P01"), message: "Failed" }))).toBe(true)
    expect(isTransientConflict(new SqlError({ cause: withCode("duplicate key value", "23505"), message: "Failed" }))).toBe(false)

    expect(isUnavailable(new SqlError({ cause: withCode("syntax error at or near \"SELEC\"", "42601"), message: "Failed" }))).toBe(false)
    expect(isUnavailable(new SqlError({ cause: withCode("duplicate key value", "23505"), message: "Failed" }))).toBe(false)
    expect(isUnavailable(new Error("boom"))).toBe(false)
    // ioredis's own refusals in a cluster: closed while a command waited between its retries (a shutdown), no node to
    // subscribe on.
    expect(isUnavailable(Object.assign(new Error("Cluster is ended."), { name: "AbortError" }))).toBe(true)
    expect(isUnavailable(new Error("No subscriber for the cluster"))).toBe(true)
    expect(isUnavailable(new Error("No sharded subscriber for slot: 866"))).toBe(true)
    expect(isUnavailable(new Error("None of startup nodes is available"))).toBe(true)
    // ioredis's sharded subscribers' slot lookup in a cluster whose slot table lacks a slot (made on a real cluster in
    // test/stores/topologies.test.ts); a TypeError thrown anywhere else stays a bug, even one whose message reads
    // like such a frame, or thrown by the auto-pipelining this service does not use (src/layers/stores/RedisConnection.ts).
    const thrownBy = (message: string, frame: string) =>
      Object.assign(new TypeError(message), { stack: `TypeError: ${message}\n    at ${frame} (file:///app/dist/main.mjs:1:2)\n    at next (x.js:1:1)` })
    expect(isUnavailable(thrownBy("Cannot read properties of undefined (reading '0')", "ClusterSubscriberGroup.getResponsibleSubscriber")))
      .toBe(true)
    expect(isUnavailable(thrownBy("Cannot read properties of undefined (reading 'join')", "executeWithAutoPipelining"))).toBe(false)
    expect(isUnavailable(new TypeError("Cannot read properties of undefined (reading 'join')"))).toBe(false)
    expect(isUnavailable(thrownBy("Cannot read properties of undefined (reading 'x\n    at getResponsibleSubscriber (y)')", "ours")))
      .toBe(false)
    expect(isUnavailable(thrownBy("x is not a function", "ClusterSubscriberGroup.getResponsibleSubscriber"))).toBe(false)
    // The service runs the bundle (built for the tests by test/support/globalSetup.ts): the function keeps its name
    // there, which a minifier or a renaming of clashing names would break.
    const bundle = readFileSync("dist/main.mjs", "utf8")
    expect(bundle).toMatch(/^\s+getResponsibleSubscriber\(slot\) \{$/m)
    expect(isUnavailable("a string")).toBe(false)
    expect(isUnavailable(undefined)).toBe(false)
  })
})

const pgBin = existsSync("/usr/lib/postgresql") ? join("/usr/lib/postgresql", readdirSync("/usr/lib/postgresql").sort().at(-1)!, "bin") : ""
const hasPostgresServer = pgBin !== "" && existsSync(join(pgBin, "initdb"))

const freePort = Effect.async<number>((resume) => {
  const server = createServer().listen(0, "127.0.0.1", () => {
    const { port } = server.address() as { port: number }
    server.close(() => resume(Effect.succeed(port)))
  })
})

/**
 * A Redis server of this test's own, killed with the scope. It restarts with its data: the append-only file is
 * written before each answer (`appendfsync always`). With the default (`everysec`), a write that arrives while
 * the previous second's fsync is still running is answered but kept in memory for up to 2 s: on a busy disk the
 * release of the first opening's lock was answered, lost with the SIGKILL, and the lock, back from the file,
 * held the next opening for 5 s (409) after the restart.
 */
const privateRedis = Effect.gen(function*() {
  const port = yield* freePort
  const dir = mkdtempSync(join(tmpdir(), "gp-outage-redis-"))
  let server: ChildProcess | undefined
  const start = Effect.async<void>((resume) => {
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", "always"]
    server = spawn("redis-server", args, { stdio: "ignore" })
    setTimeout(() => resume(Effect.void), 300)
  })
  const stop = Effect.sync(() => server?.kill("SIGKILL"))
  yield* Effect.acquireRelease(start, () => Effect.zipRight(stop, Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
  return { url: `redis://127.0.0.1:${port}`, stop, start }
})

/** A PostgreSQL server of this test's own (as the postgres user when root), stopped with the scope. */
const privatePostgres = Effect.gen(function*() {
  const port = yield* freePort
  const dir = mkdtempSync(join(tmpdir(), "gp-outage-pg-"))
  const asRoot = process.getuid?.() === 0
  if (asRoot) chownSync(dir, Number(execFileSync("id", ["-u", "postgres"]).toString()), Number(execFileSync("id", ["-g", "postgres"]).toString()))
  const tool = (name: string, args: ReadonlyArray<string>) =>
    Effect.sync(() =>
      execFileSync(asRoot ? "runuser" : join(pgBin, name), asRoot ? ["-u", "postgres", "--", join(pgBin, name), ...args] : args, { stdio: "ignore" })
    )
  const data = join(dir, "data")
  yield* tool("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "--no-sync"])
  const start = tool("pg_ctl", ["-D", data, "-w", "-l", join(dir, "log"), "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, "start"])
  const stop = tool("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
  yield* Effect.acquireRelease(start, () =>
    Effect.zipRight(Effect.ignore(stop), Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
  return { url: Redacted.make(`postgres://postgres@127.0.0.1:${port}/postgres`), stop, start }
})

/** Nothing half-written: every balance equals its movements; one CASE_OPEN debit per opening. */
const ledgerProblems = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const discrepancies = yield* Effect.flatMap(Ledger, (ledger) => ledger.discrepancies).pipe(Effect.provide(Ledger.Default))
  const [counts] = yield* sql<{ openings: number; debits: number }>`
    SELECT (SELECT count(*)::int FROM case_openings) AS openings,
           (SELECT count(*)::int FROM transactions WHERE type = 'CASE_OPEN') AS debits`
  return { discrepancies, unmatched: counts!.openings - counts!.debits }
})

/** Polls `request` until it answers `status`, for up to 30 s. */
const until = (request: Effect.Effect<{ readonly status: number }>, status: number) =>
  request.pipe(
    Effect.repeat({ until: (answer) => answer.status === status, schedule: Schedule.spaced("100 millis") }),
    Effect.timeout("30 seconds")
  )

layer(TestDatabase, { excludeTestServices: true })("Redis goes away and comes back", (it) => {
  it.scoped.skipIf(!hasRedisServer)("503 with Retry-After while it is down, 200 as soon as it is back; nothing half-written", () =>
    Effect.gen(function*() {
      const redis = yield* privateRedis
      const stores = Stores.redis(singleNode(Redacted.make(redis.url)), `gp-outage:${randomUUID()}:`).pipe(Layer.orDie)
      const client = yield* makeTestClient({ stores, config: { adminIdpIds: ["root"] } })
      const { kase } = yield* makeCase({ priceCents: 100n })
      const player = yield* fundedPlayer(client, "outage-witness", 1_000)
      expect((yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).status).toBe(200)

      yield* redis.stop
      for (const request of [client.post(`/api/cases/${kase.id}/open`, undefined, player.auth), client.get("/api/auth/me", player.auth)]) {
        const during = yield* request
        expect({ status: during.status, body: during.body, retryAfter: during.headers.get("retry-after") })
          .toEqual({ status: 503, body: { statusCode: 503, message: "Service unavailable" }, retryAfter: "2" })
      }
      const notReady = yield* client.get("/api/ready")
      expect([notReady.status, notReady.headers.get("retry-after")]).toEqual([503, "2"])

      yield* redis.start
      yield* until(client.get("/api/ready"), 200)
      expect((yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).status).toBe(200)
      expect((yield* client.get("/api/auth/me", player.auth)).body.balanceCents).toBe(800)
      expect(yield* ledgerProblems).toEqual({ discrepancies: [], unmatched: 0 })
    }), { timeout: 60_000 })

  // Publications and the user lock's release are sent without waiting for Redis's reply (docs/decisions.md
  // "Redis round trips of a request"): one made while Redis is down neither holds up nor fails its publisher.
  it.scoped.skipIf(!hasRedisServer)("a publication while it is down: the publisher goes on at once, the failure is logged; a confirmed one fails", () =>
    Effect.gen(function*() {
      const redis = yield* privateRedis
      const warnings: Array<string> = []
      const capture = Logger.make(({ logLevel, message }) => {
        if (logLevel._tag === "Warning") warnings.push(String(Array.isArray(message) ? message[0] : message))
      })
      yield* Effect.gen(function*() {
        const stores = yield* Layer.build(Stores.redis(singleNode(Redacted.make(redis.url)), `gp-outage:${randomUUID()}:`).pipe(Layer.orDie))
        const broadcast = Context.get(stores, Broadcast)
        yield* redis.stop
        const started = Date.now()
        const published = yield* Effect.exit(broadcast.publish({ channel: "outage", message: "lost" }))
        expect(published._tag).toBe("Success")
        expect(Date.now() - started).toBeLessThan(100)
        expect(warnings).toEqual([])
        // Logged once ioredis gives the command up (its retries, or the command timeout).
        yield* Effect.sync(() => warnings.includes("A publication failed")).pipe(
          Effect.repeat({ until: (found) => found, schedule: Schedule.spaced("100 millis") }),
          Effect.timeout("20 seconds")
        )
        expect(warnings).toContain("A publication failed")
        // One that must not be lost silently (a session's end, which closes its streams) fails its caller instead.
        expect(yield* Effect.exit(broadcast.publishConfirmed({ channel: "outage", message: "ended" })))
          .toEqual(Exit.fail(new ServiceUnavailable()))
      }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
    }), { timeout: 60_000 })
})

/** The app's database is a private PostgreSQL server, migrated. */
const PrivateDatabase = Layer.unwrapScoped(
  Effect.map(privatePostgres, (pg) =>
    MigrationsLive.pipe(
      Layer.provideMerge(DatabaseLive({ _tag: "Postgres", url: pg.url, maxConnections: 5 })),
      Layer.provideMerge(Layer.succeed(PrivatePostgres, pg)),
      Layer.provide(NodeContext.layer)
    ))
).pipe(Layer.orDie)

class PrivatePostgres extends Context.Tag("test/PrivatePostgres")<PrivatePostgres, Effect.Effect.Success<typeof privatePostgres>>() {}

describe.skipIf(!hasPostgresServer)("PostgreSQL goes away and comes back", () => {
  layer(PrivateDatabase, { excludeTestServices: true })("a private server", (it) => {
    it.scoped("503 with Retry-After while it is down, 200 as soon as it is back; nothing half-written", () =>
      Effect.gen(function*() {
        const pg = yield* PrivatePostgres
        const client = yield* makeTestClient({ config: { adminIdpIds: ["root"] } })
        const { kase } = yield* makeCase({ priceCents: 100n })
        const player = yield* fundedPlayer(client, "crash-witness", 1_000)
        expect((yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).status).toBe(200)

        yield* pg.stop
        for (const request of [client.post(`/api/cases/${kase.id}/open`, undefined, player.auth), client.get("/api/auth/me", player.auth)]) {
          const during = yield* request
          expect({ status: during.status, body: during.body, retryAfter: during.headers.get("retry-after") })
            .toEqual({ status: 503, body: { statusCode: 503, message: "Service unavailable" }, retryAfter: "2" })
        }
        expect((yield* client.get("/api/ready")).status).toBe(503)

        yield* pg.start
        yield* until(client.get("/api/ready"), 200)
        yield* until(client.post(`/api/cases/${kase.id}/open`, undefined, player.auth), 200)
        expect((yield* client.get("/api/auth/me", player.auth)).body.balanceCents).toBe(800)
        expect(yield* ledgerProblems).toEqual({ discrepancies: [], unmatched: 0 })
      }), { timeout: 60_000 })
  })
})
