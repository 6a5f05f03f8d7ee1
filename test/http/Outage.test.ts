/**
 * A dependency that goes away is a 503 `Service unavailable`, not a 500: the classification of
 * driver errors, and a real Redis server stopped under a running app.
 */
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it as plain, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { createServer } from "node:net"
import { isOutage } from "../../src/http/Outage"
import { Stores } from "../../src/layers/stores/Stores"
import { signIn } from "../support/SignIn"
import { makeTestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code })

describe("outage classification", () => {
  plain("connection failures of PostgreSQL and Redis are outages; other errors are not", () => {
    const refused = new SqlError({ cause: withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"), message: "Failed to execute statement" })
    expect(isOutage(refused)).toBe(true)
    expect(isOutage(new SqlError({ cause: new Error("Connection terminated unexpectedly"), message: "Failed" }))).toBe(true)
    expect(isOutage(new SqlError({ cause: withCode("terminating connection due to administrator command", "57P01"), message: "Failed" }))).toBe(true)
    expect(isOutage(new SqlError({ cause: withCode("connection failure", "08006"), message: "Failed" }))).toBe(true)
    const redisGaveUp = Object.assign(new Error("Reached the max retries per request limit (which is 3)."), { name: "MaxRetriesPerRequestError" })
    expect(isOutage(new Error("An unknown error occurred", { cause: redisGaveUp }))).toBe(true)

    expect(isOutage(new SqlError({ cause: withCode("syntax error at or near \"SELEC\"", "42601"), message: "Failed" }))).toBe(false)
    expect(isOutage(new SqlError({ cause: withCode("duplicate key value", "23505"), message: "Failed" }))).toBe(false)
    expect(isOutage(new Error("boom"))).toBe(false)
    expect(isOutage("a string")).toBe(false)
    expect(isOutage(undefined)).toBe(false)
  })
})

const hasRedisServer = spawnSync("redis-server", ["--version"]).status === 0

const freePort = Effect.async<number>((resume) => {
  const server = createServer().listen(0, "127.0.0.1", () => {
    const { port } = server.address() as { port: number }
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** A Redis server of this test's own, stopped when the scope closes (or earlier, by the test). */
const privateRedis = Effect.gen(function*() {
  const port = yield* freePort
  const server = yield* Effect.acquireRelease(
    Effect.sync(() =>
      spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" })
    ),
    (server) => Effect.sync(() => server.kill("SIGKILL"))
  )
  return { url: `redis://127.0.0.1:${port}`, stop: Effect.sync(() => server.kill("SIGKILL")) }
})

layer(TestDatabase, { excludeTestServices: true })("a dependency goes away", (it) => {
  it.scoped.skipIf(!hasRedisServer)("requests that need Redis while it is down are 503 in the error shape", () =>
    Effect.gen(function*() {
      const redis = yield* privateRedis
      const stores = Stores.redis(Redacted.make(redis.url), `gp-outage:${randomUUID()}:`).pipe(Layer.orDie)
      const client = yield* makeTestClient({ stores })
      const player = yield* signIn(client, "outage-witness")
      expect((yield* client.get("/api/auth/me", player.auth)).status).toBe(200)

      yield* redis.stop
      const during = yield* client.get("/api/auth/me", player.auth)
      expect(during.status).toBe(503)
      expect(during.body).toEqual({ statusCode: 503, message: "Service unavailable" })
      expect((yield* client.get("/api/ready")).status).toBe(503)
    }), { timeout: 30_000 })
})
