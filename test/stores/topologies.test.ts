/**
 * The Redis stores on a Sentinel set-up and on a Redis Cluster of this file's own (test/support/RedisTopologies.ts,
 * docs/operations.md#redis-high-availability): the whole store contract on each, and the primary killed under a
 * running app, which answers 503 (never 500) until the sentinels have failed over and then serves again by itself,
 * with what it acknowledged before the fail-over still there.
 *
 * These start eight redis-server processes and need no database of their own, so they run in the real-servers
 * run only (REDIS_URL set, as in .ci/run's second `npm test`); without the redis-server binary they are skipped,
 * saying so.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { afterAll, beforeAll } from "vitest"
import { Context, Effect, Fiber, Layer, Option, Ref, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { type Cluster, Redis } from "ioredis"
import { Broadcast } from "../../src/layers/stores/Broadcast"
import { KeyValue } from "../../src/layers/stores/KeyValue"
import { RedisConnection } from "../../src/layers/stores/RedisConnection"
import { Stores } from "../../src/layers/stores/Stores"
import { ServiceUnavailable } from "../../src/schema/platform/Errors"
import type { RedisAuth, RedisTarget } from "../../src/layers/stores/RedisTarget"
import { Ledger } from "../../src/services/money/Ledger"
import { fundedPlayer, makeCase } from "../support/GameFixtures"
import { type ClusterSetup, privateRedisSkipped, type SentinelSetup, startCluster, startSentinelSetup } from "../support/RedisTopologies"
import { countWrites } from "../support/SocketWrites"
import { makeTestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { realTime, realTimeSuite, storeContract } from "./contract"

const noAuth: RedisAuth = { username: Option.none(), password: Option.none(), sentinelPassword: Option.none() }
/** Limits no test request reaches: the load below opens a case every 20 ms. */
const unlimited = { count: 1_000_000, windowMs: 60_000 }

const skipped = privateRedisSkipped

describe.skipIf(skipped !== undefined)(`Redis Sentinel and Cluster${skipped === undefined ? "" : ` (${skipped})`}`, () => {
  let sentinel: SentinelSetup
  let cluster: ClusterSetup
  beforeAll(async () => {
    ;[sentinel, cluster] = await Promise.all([startSentinelSetup(), startCluster()])
  }, 60_000)
  afterAll(() => {
    sentinel?.stop()
    cluster?.stop()
  })

  const sentinelTarget = (): RedisTarget => ({ _tag: "Sentinel", sentinels: sentinel.sentinels, name: sentinel.name, auth: noAuth })
  const storesOn = (target: () => RedisTarget) =>
    Layer.suspend(() => Stores.redis(target(), `gp-test:${randomUUID()}:`)).pipe(Layer.orDie)

  describe("Sentinel: a primary, a replica, three sentinels", realTimeSuite, () => {
    layer(storesOn(sentinelTarget), { excludeTestServices: true })((it) => storeContract(it, realTime))
  })

  describe("Cluster: three primaries", realTimeSuite, () => {
    layer(storesOn(() => ({ _tag: "Cluster", nodes: cluster.nodes, auth: noAuth })), { excludeTestServices: true })((it) =>
      storeContract(it, realTime)
    )
  })

  // As on one node (test/stores/redis.test.ts), without ioredis's auto-pipelines (src/layers/stores/RedisConnection.ts,
  // inOneWrite): each node's connection, which ioredis makes itself, sends a turn's commands in one write.
  describe("Cluster: a turn's commands", () => {
    it.scoped("the commands for one node issued in one turn of the event loop leave in one write, and the next turn's in another", () =>
      Effect.gen(function*() {
        const prefix = `gp-test:${randomUUID()}:`
        const { client } = yield* Layer.build(RedisConnection.layer({ _tag: "Cluster", nodes: cluster.nodes, auth: noAuth }, prefix))
          .pipe(Effect.map(Context.get(RedisConnection)))
        const redis = client as Cluster
        // Every node's connection is opened as soon as ioredis knows the node, not at its first command: a command to a
        // node still connecting is refused (no offline queue) and tried again 100 ms later, as the rest of that turn's.
        expect(redis.nodes("master").length).toBe(cluster.nodes.length)
        expect(redis.nodes("master").map((n) => n.status).filter((status) => status === "wait")).toEqual([])
        // Keys of one slot (a hash tag), so of one node; that node's connection ready first.
        const [a, b] = [`${prefix}{one-write}:a`, `${prefix}{one-write}:b`]
        yield* Effect.promise(() => redis.set(a, "0"))
        const slot = Number(yield* Effect.promise(() => redis.cluster("KEYSLOT", a)))
        const [host, port] = redis.slots[slot]![0]!.split(":")
        const node = redis.nodes("master").find((n) => n.options.host === host && n.options.port === Number(port))!
        expect(node.status).toBe("ready")
        const writes = countWrites(node.stream)
        // Not one of ioredis's auto-pipelines (what they cost: the comment on inOneWrite).
        expect(redis.options.enableAutoPipelining).toBe(false)
        const turn = () => Promise.all([redis.set(a, "1"), redis.incr(a), redis.get(b)])
        expect(yield* Effect.promise(turn)).toEqual(["OK", 2, null])
        expect(yield* Effect.promise(turn)).toEqual(["OK", 2, null])
        expect(writes).toEqual([3, 3])
        yield* Effect.promise(() => redis.del(a))
      }))
  })

  // A slot without a node (`cluster-require-full-coverage no`, so that the others serve on; a cluster being changed by
  // hand): an instance that starts then has no node in its slot table for it, and ioredis sends a command for it to
  // another node, whose CLUSTERDOWN it tries again until its redirections run out (~1.6 s); its sharded subscribers'
  // group, which maps every slot, throws for any channel. For the test every node forgets one slot, then its owner
  // takes it back.
  describe("Cluster: a slot without a node", () => {
    it.scoped("a command for that slot, and a subscription, are outages (503), not defects or a crash; the other slots serve; all serve again once the slot is back", () =>
      Effect.gen(function*() {
        const prefix = `gp-test:${randomUUID()}:`
        const admins = cluster.nodes.map(({ host, port }) => new Redis({ host, port, lazyConnect: true }))
        yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all(admins.map((admin) => admin.quit()))))
        const onEvery = (...args: ReadonlyArray<string | number>) =>
          Effect.promise(() => Promise.all(admins.map((admin) => admin.call(...(args as [string, ...Array<string | number>])))))
        const slot = Number(yield* Effect.promise(() => admins[0]!.cluster("KEYSLOT", `${prefix}kv:session`)))
        const ranges = (yield* Effect.promise(() => admins[0]!.cluster("SLOTS"))) as unknown as ReadonlyArray<[number, number, [string, number]]>
        const ownerPort = ranges.find(([from, to]) => from <= slot && slot <= to)![2][1]
        const owner = admins[cluster.nodes.findIndex(({ port }) => port === ownerPort)]!
        const allOk = onEvery("CLUSTER", "INFO").pipe(
          Effect.map((infos) => infos.every((info) => String(info).includes("cluster_state:ok"))),
          Effect.repeat({ until: (ok) => ok, schedule: Schedule.spaced("100 millis") }),
          Effect.timeout("20 seconds"),
          Effect.orDie
        )
        // Given back in the test, and here again if the test failed before (then ADDSLOTS may find it taken).
        const giveBack = Effect.tryPromise(() => owner.cluster("ADDSLOTS", slot)).pipe(
          Effect.ignore,
          Effect.zipRight(onEvery("CONFIG", "SET", "cluster-require-full-coverage", "yes")),
          Effect.zipRight(allOk)
        )
        yield* Effect.acquireRelease(
          onEvery("CONFIG", "SET", "cluster-require-full-coverage", "no").pipe(Effect.zipRight(onEvery("CLUSTER", "DELSLOTS", slot))),
          () => giveBack
        )
        yield* allOk

        const stores = yield* Layer.build(
          Layer.merge(KeyValue.redis, Broadcast.redis).pipe(
            Layer.provideMerge(RedisConnection.layer({ _tag: "Cluster", nodes: cluster.nodes, auth: noAuth }, prefix))
          )
        )
        const { client } = Context.get(stores, RedisConnection)
        // The instance started without the slot in its table.
        expect((client as Cluster).slots[slot]).toBeUndefined()
        const kv = Context.get(stores, KeyValue)
        expect(yield* Effect.flip(kv.get("session"))).toBeInstanceOf(ServiceUnavailable)
        // Another slot's key is served.
        expect(yield* kv.get("other")).toEqual(Option.none())
        // A live stream's subscription, whatever its channel's slot: refused, and the process still runs (before,
        // an uncaught TypeError ended it, which fails the test run).
        const subscribing = Effect.scoped(Context.get(stores, Broadcast).subscribe("live-drops", () => {}))
        expect(yield* Effect.flip(subscribing)).toBeInstanceOf(ServiceUnavailable)

        // The slot given back: the same instance serves both again by itself, within its slot table's refresh.
        yield* giveBack
        const served = Effect.all([kv.get("session"), subscribing]).pipe(
          Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 75 })
        )
        expect((yield* served)[0]).toEqual(Option.none())
      }), { timeout: 60_000 })
  })

  layer(TestDatabase, { excludeTestServices: true })("Sentinel fail-over under a running app", (it) => {
    it.scoped("the primary killed: only 503s, no 500, then 200 again by itself; a session and openings acknowledged before it stay", () =>
      Effect.gen(function*() {
        const client = yield* makeTestClient({ stores: storesOn(sentinelTarget), config: {
            adminIdpIds: ["root"],
            rateLimits: { ...testConfig.rateLimits, global: unlimited, caseOpen: unlimited }
          }
        })
        const { kase } = yield* makeCase({ priceCents: 100n })
        // Acknowledged: the sign-in answered (its session in Redis) and an opening answered 200, then replicated
        // to the replica (Redis replicates asynchronously: what the replica lacks when the primary dies is
        // lost, docs/operations.md#what-a-fail-over-can-lose).
        const player = yield* fundedPlayer(client, "failover-witness", 100_000)
        expect((yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).status).toBe(200)
        yield* Effect.promise(() => sentinel.replicated())

        // Load through the fail-over: the session read on every request, rate counters, user locks.
        const statuses = yield* Ref.make(new Map<number, number>())
        const opened = yield* Ref.make(0)
        const stopping = yield* Ref.make(false)
        // Stopped between requests, never during one: every opening the database kept was answered and counted.
        const load = yield* Effect.gen(function*() {
          const answer = yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)
          yield* Ref.update(statuses, (map) => new Map(map).set(answer.status, (map.get(answer.status) ?? 0) + 1))
          if (answer.status === 200) yield* Ref.update(opened, (n) => n + 1)
          yield* Effect.sleep("20 millis")
        }).pipe(Effect.repeat({ until: () => Ref.get(stopping) }), Effect.fork)

        const before = yield* Effect.promise(() => sentinel.primaryPort())
        yield* Effect.promise(() => sentinel.failOver())
        expect(yield* Effect.promise(() => sentinel.primaryPort())).not.toBe(before)
        // Recovered without a restart: the same app answers 200 again, for the session it created before.
        yield* client.get("/api/auth/me", player.auth).pipe(
          Effect.repeat({ until: (answer) => answer.status === 200, schedule: Schedule.spaced("100 millis") }),
          Effect.timeout("30 seconds")
        )
        yield* Ref.set(stopping, true)
        yield* Fiber.join(load)

        const seen = yield* Ref.get(statuses)
        expect([...seen.keys()].filter((status) => status !== 200 && status !== 503)).toEqual([])
        const me = yield* client.get("/api/auth/me", player.auth)
        expect(me.status).toBe(200)
        expect(me.body.balanceCents).toBe(100_000 - 100 * (1 + (yield* Ref.get(opened))))
        expect((yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).status).toBe(200)
        expect(Object.values(yield* (yield* Ledger).check).flat()).toEqual([])
      }).pipe(Effect.provide(Ledger.Default)), { timeout: 90_000 })
  })
})
