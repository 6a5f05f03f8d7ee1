/**
 * How many times a request writes to Redis (docs/decisions.md "Redis round trips of a request"), counted by the
 * server: `total_reads_processed` of a Redis node of this file's own, which nothing else talks to. Commands sent
 * together (ioredis's auto-pipelining) arrive in one read; a command sent after the reply of another is a read of
 * its own. So an authenticated request waits for one reply before its handler: the session's read leaves with the
 * rate limits' counts, and for an opening the user lock's taking too.
 *
 * Like test/stores/topologies.test.ts, this starts a redis-server, so it runs in the real-servers run only
 * (REDIS_URL set); without the redis-server binary it is skipped, saying so.
 */
import { describe, expect, layer } from "@effect/vitest"
import { afterAll, beforeAll } from "vitest"
import { Effect, Layer, Redacted } from "effect"
import { Redis } from "ioredis"
import { randomUUID } from "node:crypto"
import { singleNode } from "../../src/layers/stores/RedisTarget"
import { Stores } from "../../src/layers/stores/Stores"
import { fundedPlayer, makeCase } from "../support/GameFixtures"
import { type NodeSetup, privateRedisSkipped, startNode } from "../support/RedisTopologies"
import { makeTestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const skipped = privateRedisSkipped

describe.skipIf(skipped !== undefined)(`Redis round trips of a request${skipped === undefined ? "" : ` (${skipped})`}`, () => {
  let node: NodeSetup
  /** One connection of its own for the counter, without a ready check: each INFO is one read. */
  let counter: Redis
  beforeAll(async () => {
    node = await startNode()
    counter = new Redis(node.port, "127.0.0.1", { enableReadyCheck: false })
  }, 60_000)
  afterAll(() => {
    counter?.disconnect()
    node?.stop()
  })

  /** The node's reads so far, this INFO's own included. */
  const reads = Effect.promise(async () =>
    Number(/^total_reads_processed:(\d+)/m.exec(await counter.info("stats"))![1])
  )
  /** Lets what a request sent without waiting for it (a lock's release, publications) reach the node. */
  const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
  /** The reads `request` made the node do, what it sent without waiting included (and nothing sent before it). */
  const readsOf = <A, E, R>(request: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      yield* settle
      const before = yield* reads
      const answer = yield* request
      yield* settle
      return { answer, reads: (yield* reads) - before - 1 }
    })

  layer(TestDatabase, { excludeTestServices: true })("on one Redis node", (it) => {
    it.scoped("GET /auth/me: one read (the session's slide with the rate limits' counts); an opening: two (that one with the lock's taking, then its release with the publications)", () =>
      Effect.gen(function*() {
        const client = yield* makeTestClient({
          stores: Stores.redis(singleNode(Redacted.make(node.url)), `gp-test:${randomUUID()}:`).pipe(Layer.orDie),
          config: { adminIdpIds: ["root"] }
        })
        const { kase } = yield* makeCase({ priceCents: 100n })
        const player = yield* fundedPlayer(client, "round-trips", 10_000)
        // The first request of a session on an instance waits for the slide to learn whom to count (then remembered).
        expect((yield* client.get("/api/auth/me", player.auth)).status).toBe(200)
        expect((yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).status).toBe(200)

        const me = yield* readsOf(client.get("/api/auth/me", player.auth))
        expect(me.answer.status).toBe(200)
        expect(me.reads).toBe(1)
        const opening = yield* readsOf(client.post(`/api/cases/${kase.id}/open`, undefined, player.auth))
        expect(opening.answer.status).toBe(200)
        expect(opening.reads).toBe(2)
      }))

    it.scoped("an opening refused before its operation (429) leaves its lock's taking released, as an answered one does", () =>
      Effect.gen(function*() {
        const prefix = `gp-test:${randomUUID()}:`
        const client = yield* makeTestClient({
          stores: Stores.redis(singleNode(Redacted.make(node.url)), prefix).pipe(Layer.orDie),
          // One opening a day: windows are fixed and aligned to the epoch, so with a minute's window the two openings
          // below straddled a minute's start once in CI, and the second was allowed.
          config: { adminIdpIds: ["root"], rateLimits: { ...testConfig.rateLimits, caseOpen: { count: 1, windowMs: 86_400_000 } } }
        })
        const { kase } = yield* makeCase({ priceCents: 100n })
        const player = yield* fundedPlayer(client, "lock-ahead", 10_000)
        expect((yield* client.get("/api/auth/me", player.auth)).status).toBe(200)
        const locks = Effect.promise(() => counter.keys(`${prefix}lock:*`))
        expect((yield* readsOf(client.post(`/api/cases/${kase.id}/open`, undefined, player.auth))).answer.status).toBe(200)
        expect(yield* locks).toEqual([])
        const refused = yield* readsOf(client.post(`/api/cases/${kase.id}/open`, undefined, player.auth))
        expect(refused.answer.status).toBe(429)
        // Its taking was sent with the counts, then released: the user's next operations are not held for 30 s.
        expect(refused.reads).toBe(2)
        expect(yield* locks).toEqual([])
      }))
  })
})
