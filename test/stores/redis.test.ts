import { describe, expect, it, layer } from "@effect/vitest"
import { afterAll } from "vitest"
import { Context, Deferred, Effect, Either, Fiber, Layer, Logger, Redacted } from "effect"
import { Redis } from "ioredis"
import { randomUUID } from "node:crypto"
import { KeyValue } from "../../src/layers/stores/KeyValue"
import { RedisConnection } from "../../src/layers/stores/RedisConnection"
import { singleNode } from "../../src/layers/stores/RedisTarget"
import { Stores } from "../../src/layers/stores/Stores"
import { UserLock } from "../../src/layers/stores/UserLock"
import { countWrites } from "../support/SocketWrites"
import { realTime, realTimeSuite, storeContract } from "./contract"

const url = process.env.REDIS_URL

/** A prefix of its own, so runs sharing a Redis never meet; its keys are removed afterwards. */
const prefix = `gp-test:${randomUUID()}:`

const removeKeys = (redisUrl: string) =>
  Effect.promise(async () => {
    const redis = new Redis(redisUrl)
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
    await redis.quit()
  })

describe.skipIf(url === undefined)("Redis stores (REDIS_URL)", () => {
  // The tests outside the contract's layer write keys of the prefix too.
  afterAll(() => Effect.runPromise(removeKeys(url!)))
  const StoresLive = Layer.scopedDiscard(Effect.addFinalizer(() => removeKeys(url!))).pipe(
    Layer.provideMerge(Stores.redis(singleNode(Redacted.make(url!)), prefix))
  )
  describe("the store contract", realTimeSuite, () => {
    layer(StoresLive, { excludeTestServices: true })((it) => storeContract(it, realTime))
  })

  // The rate limiter sends the session's slide ahead and a request refused before its authentication never awaits the
  // answer: with Redis gone, that answer's failure must not be an unhandled rejection (Node ends the process on one).
  it.live("a slide whose answer nobody awaits fails quietly when Redis is gone; awaited, it is a 503, logged once", () => {
    const logged: Array<string> = []
    return Effect.gen(function*() {
      const { client } = yield* RedisConnection
      const kv = yield* KeyValue
      const unhandled: Array<unknown> = []
      const onUnhandled = (reason: unknown) => unhandled.push(reason)
      process.on("unhandledRejection", onUnhandled)
      yield* Effect.addFinalizer(() => Effect.sync(() => process.off("unhandledRejection", onUnhandled)))
      yield* Effect.async<void>((resume) => {
        client.once("end", () => resume(Effect.void))
        client.disconnect()
      })
      const stamp = { now: "2026-01-05T00:00:00.000Z", expiresAt: "2026-01-12T00:00:00.000Z", deviceId: undefined }
      yield* kv.slide(`session:${randomUUID()}`, 1_000, stamp)
      const awaited = yield* kv.slide(`session:${randomUUID()}`, 1_000, stamp)
      // Awaited twice (the rate limiter for the owner, then the authentication): one failure, one warning.
      expect(yield* Effect.flip(awaited)).toMatchObject({ _tag: "ServiceUnavailable" })
      expect(yield* Effect.flip(awaited)).toMatchObject({ _tag: "ServiceUnavailable" })
      yield* Effect.sleep("100 millis")
      expect(unhandled).toEqual([])
      expect(logged.filter((message) => message.includes("A dependency is unavailable"))).toHaveLength(1)
    }).pipe(
      Effect.provide(KeyValue.redis.pipe(Layer.provideMerge(RedisConnection.layer(singleNode(Redacted.make(url!)), prefix)))),
      Effect.provide(Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void logged.push(String(message))))),
      Effect.scoped
    )
  })

  // Two instances over one Redis, each with its own line: the taking sent ahead on one finds the key held by the other.
  it.live("two instances: a taking sent ahead that found the key held elsewhere is not the lock; its withLock waits for it", () =>
    Effect.gen(function*() {
      const instance = Effect.map(Layer.build(UserLock.redis), (built) => Context.get(built, UserLock))
      const [one, two] = [yield* instance, yield* instance]
      const key = `user:${randomUUID()}`
      const taken = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* one.withLock(key, Effect.zipRight(Deferred.succeed(taken, undefined), Deferred.await(release))).pipe(Effect.fork)
      yield* Deferred.await(taken)
      let ran = false
      const other = yield* two.withTakenAhead(key, two.withLock(key, Effect.sync(() => (ran = true)))).pipe(Effect.fork)
      yield* Effect.sleep("300 millis")
      expect(ran).toBe(false)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      yield* Fiber.join(other)
      expect(ran).toBe(true)
    }).pipe(Effect.provide(RedisConnection.layer(singleNode(Redacted.make(url!)), prefix)), Effect.scoped))

  it.live("two instances: a taking sent ahead that its request did not use is released when the request ends, failed or interrupted", () =>
    Effect.gen(function*() {
      const instance = Effect.map(Layer.build(UserLock.redis), (built) => Context.get(built, UserLock))
      const [one, two] = [yield* instance, yield* instance]
      const key = `user:${randomUUID()}`
      expect(yield* two.withTakenAhead(key, Effect.succeed("answered"))).toBe("answered")
      expect(yield* two.withTakenAhead(key, Effect.fail("refused" as const)).pipe(Effect.either)).toEqual(Either.left("refused"))
      const started = yield* Deferred.make<void>()
      const aborted = yield* two.withTakenAhead(key, Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)).pipe(Effect.fork)
      yield* Deferred.await(started)
      yield* Fiber.interrupt(aborted)
      // The other instance's line knows nothing of those takings: one left behind would hold the key for 30 s, and this
      // would give up after 5 s with OperationInProgress.
      expect(yield* one.withLock(key, Effect.succeed("taken"))).toBe("taken")
    }).pipe(Effect.provide(RedisConnection.layer(singleNode(Redacted.make(url!)), prefix)), Effect.scoped))

  // ioredis stops for good when a reconnection attempt is abandoned (under Sentinel, a fail-over announced while
  // it was reconnecting): the connection must not stay dead until a restart.
  it.live("a connection the client gave up on is connected again by itself", () =>
    Effect.gen(function*() {
      const { client } = yield* RedisConnection
      yield* Effect.async<void>((resume) => {
        client.once("end", () => resume(Effect.void))
        client.disconnect()
      })
      expect(client.status).toBe("end")
      yield* Effect.promise(async () => {
        for (let i = 0; i < 50 && client.status !== "ready"; i++) await new Promise((resolve) => setTimeout(resolve, 100))
      })
      expect(client.status).toBe("ready")
      expect(yield* Effect.promise(() => client.ping())).toBe("PONG")
    }).pipe(Effect.provide(RedisConnection.layer(singleNode(Redacted.make(url!)), prefix)), Effect.scoped))

  // Many requests' commands share a write under load (src/layers/stores/RedisConnection.ts, inOneWrite), without
  // ioredis's auto-pipelines.
  it.live("the commands issued in one turn of the event loop leave in one write, and the next turn's in another", () =>
    Effect.gen(function*() {
      const { client } = yield* RedisConnection
      const writes = countWrites((client as Redis).stream)
      // Not one of ioredis's auto-pipelines (what they cost: the comment on inOneWrite).
      const pipeline = client.pipeline
      let pipelines = 0
      client.pipeline = function(this: unknown, ...args: Array<any>) {
        pipelines++
        return pipeline.apply(this, args as never)
      } as typeof pipeline
      const key = `${prefix}one-write`
      const turn = () => Promise.all([client.set(key, "1"), client.incr(key), client.get(key)])
      expect(yield* Effect.promise(turn)).toEqual(["OK", 2, "2"])
      expect(yield* Effect.promise(turn)).toEqual(["OK", 2, "2"])
      expect(writes).toEqual([3, 3])
      expect(pipelines).toBe(0)
    }).pipe(Effect.provide(RedisConnection.layer(singleNode(Redacted.make(url!)), prefix)), Effect.scoped))

  // The connection dropped in the turn whose commands wait corked: none is lost or left waiting for its time limit.
  it.live("commands of a turn whose connection drops before they leave are answered after the reconnection", () =>
    Effect.gen(function*() {
      const { client } = yield* RedisConnection
      const redis = client as Redis
      const key = `${prefix}dropped-turn`
      const started = Date.now()
      const answers = yield* Effect.promise(() => {
        const turn = Promise.all([redis.set(key, "1"), redis.incr(key), redis.get(key)])
        redis.stream.destroy()
        return turn
      })
      expect(answers).toEqual(["OK", 2, "2"])
      expect(Date.now() - started).toBeLessThan(2_000)
      expect(yield* Effect.promise(() => redis.get(key))).toBe("2")
      expect(redis.stream.writableCorked).toBe(0)
    }).pipe(Effect.provide(RedisConnection.layer(singleNode(Redacted.make(url!)), prefix)), Effect.scoped))
})
