/**
 * One contract for both twins of every store (Redis and in-memory): each suite runs it with its own
 * way of letting time pass — TestClock for the in-memory stores, real time against Redis, whose TTLs
 * are its own.
 */
import { expect, type Vitest } from "@effect/vitest"
import { Clock, Deferred, Effect, Either, Exit, Fiber, Option, Queue } from "effect"
import { randomUUID } from "node:crypto"
import { Broadcast } from "../../src/layers/stores/Broadcast"
import { KeyValue } from "../../src/layers/stores/KeyValue"
import { RateCounter, type RateCounterShape } from "../../src/layers/stores/RateCounter"
import type { StoreServices } from "../../src/layers/stores/Stores"
import { UserLock, type UserLockShape } from "../../src/layers/stores/UserLock"

export interface Harness {
  /** Lets `ms` milliseconds pass for the stores under test. */
  readonly advance: (ms: number) => Effect.Effect<void>
}

/** Redis keeps its own time: real time passes. */
export const realTime: Harness = {
  advance: (ms) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))
}

/**
 * The options of a suite that runs this contract on real time. A loaded host (CI on two cores, eight more
 * redis-servers beside the test workers) has stalled a step by over a second, past any slack below that a test can
 * afford: a value that had to be there was gone. Such a suite runs a failed test again, twice at most; a real fault
 * fails all three tries. The in-memory twin runs the same contract on the TestClock, where nothing stalls, and is
 * never run again.
 */
export const realTimeSuite = { retry: 2 } as const

/**
 * Times to live for checks that a value is still there, with the steps that pass. Against Redis the time is real: a
 * loaded host (CI on two cores) stalled a 400 ms step by over 200 ms, so a value that must still be there keeps at
 * least 700 ms of slack after a step, and a step that must outlast a time to live only gains from a stall. A
 * longer stall fails a test, which then runs again (`realTimeSuite`).
 */
const ttlMs = 1_600
/** A step inside a time to live, with 800 ms to spare. */
const earlyMs = 800
/** A second step: with `earlyMs` past `ttlMs` (so a value not moved would be gone), with 700 ms to spare. */
const lateMs = 900

/** A fresh key per test, so tests never see each other's data. */
const fresh = (name: string) => `${name}:${randomUUID()}`

/** Subscribes to `channel` for the scope, keeping each delivery as it came. */
const listen = (broadcast: Broadcast["Type"], channel: string) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<ReadonlyArray<string>>()
    const all: Array<string> = []
    yield* broadcast.subscribe(channel, (messages) => {
      all.push(...messages)
      queue.unsafeOffer(messages)
    })
    /** The next deliveries, until they hold `count` messages in all. */
    const deliveries = (count: number) =>
      Effect.gen(function*() {
        const got: Array<ReadonlyArray<string>> = []
        while (got.flat().length < count) got.push(yield* Queue.take(queue))
        return got
      })
    return {
      deliveries,
      messages: (count: number) => Effect.map(deliveries(count), (got) => got.flat()),
      /** Every message delivered so far. */
      received: () => all
    }
  })
const hit = (counter: RateCounterShape, subject: string, windowMs: number) =>
  Effect.map(counter.hitAll([{ subject, name: "n", windowMs }]), ([count]) => count!)

/** Lets forked fibers run up to their next wait. */
const settle = Effect.sleep(0).pipe(Effect.zipRight(Effect.yieldNow()), Effect.repeatN(20))

/** A fiber holding `key`'s lock (already taken when this returns) until `release` completes. */
const holdLock = (lock: UserLockShape, key: string, release: Effect.Effect<void> = Effect.never) =>
  Effect.gen(function*() {
    const taken = yield* Deferred.make<void>()
    const holder = yield* lock.withLock(key, Effect.zipRight(Deferred.succeed(taken, undefined), release)).pipe(Effect.fork)
    yield* Deferred.await(taken)
    return holder
  })

export const storeContract = (it: Vitest.MethodsNonLive<StoreServices, boolean>, { advance }: Harness) => {
  it.effect("key-value: a value is there until its time to live runs out", () =>
    Effect.gen(function*() {
      const kv = yield* KeyValue
      const key = fresh("session")
      expect(yield* kv.get(key)).toEqual(Option.none())
      yield* kv.set(key, "alice", ttlMs)
      expect(yield* kv.get(key)).toEqual(Option.some("alice"))
      yield* advance(earlyMs)
      expect(yield* kv.get(key)).toEqual(Option.some("alice"))
      yield* advance(lateMs)
      expect(yield* kv.get(key)).toEqual(Option.none())
    }))

  it.effect("key-value: touch restarts the time to live; delete removes at once", () =>
    Effect.gen(function*() {
      const kv = yield* KeyValue
      const key = fresh("session")
      expect(yield* kv.touch(key, ttlMs)).toBe(false)
      yield* kv.set(key, "bob", ttlMs)
      yield* advance(earlyMs)
      expect(yield* kv.touch(key, ttlMs)).toBe(true)
      yield* advance(lateMs)
      expect(yield* kv.get(key)).toEqual(Option.some("bob"))
      expect(yield* kv.delete(key)).toBe(true)
      expect(yield* kv.delete(key)).toBe(false)
      expect(yield* kv.get(key)).toEqual(Option.none())
    }))

  it.effect("key-value: slide reads a session and moves its times and time to live, unless expired or from another device", () =>
    Effect.gen(function*() {
      const kv = yield* KeyValue
      const session = (fields: Record<string, string>) =>
        JSON.stringify({ id: "s", userAgent: 'x "deviceId":"d1" \\', lastActivity: "2026-01-01T00:00:00.000Z", ...fields })
      const stamp = { now: "2026-01-05T00:00:00.000Z", expiresAt: "2026-01-12T00:00:00.000Z", deviceId: undefined }
      const slidOf = (value: string) => ({ ...JSON.parse(value), lastActivity: stamp.now, expiresAt: stamp.expiresAt })
      const absent = fresh("session")
      expect(yield* Effect.flatten(kv.slide(absent, 600, stamp))).toEqual(Option.none())
      expect(yield* kv.get(absent)).toEqual(Option.none())

      // Every case in the same steps (one wait for all of them). Slid: unbound, and bound to the request's device
      // (compared as JSON text: quotes and backslashes included). Not slid: expired by its own expiresAt (at the
      // stamp's now, or before), another device, or no device on a bound one.
      const cases = ([
        [{ expiresAt: "2026-01-08T00:00:00.000Z" }, undefined, true],
        [{ expiresAt: "2026-01-08T00:00:00.000Z" }, "d1", true],
        [{ deviceId: 'd"1\\', expiresAt: "2026-01-08T00:00:00.000Z" }, 'd"1\\', true],
        [{ expiresAt: stamp.now }, undefined, false],
        [{ expiresAt: "2026-01-04T23:59:59.999Z" }, undefined, false],
        [{ deviceId: "d1", expiresAt: "2026-01-08T00:00:00.000Z" }, "d2", false],
        [{ deviceId: "d1", expiresAt: "2026-01-08T00:00:00.000Z" }, "d", false],
        [{ deviceId: "d1", expiresAt: "2026-01-08T00:00:00.000Z" }, undefined, false]
      ] as const).map(([fields, deviceId, slid]) => ({ key: fresh("session"), value: session(fields), deviceId, slid }))
      for (const { key, value } of cases) yield* kv.set(key, value, ttlMs)
      yield* advance(earlyMs)
      for (const { deviceId, key, slid, value } of cases) {
        expect(yield* Effect.flatten(kv.slide(key, ttlMs, { ...stamp, deviceId }))).toEqual(Option.some({ value, slid }))
        const now = yield* kv.get(key)
        if (slid) expect(Option.map(now, JSON.parse)).toEqual(Option.some(slidOf(value)))
        else expect(now).toEqual(Option.some(value)) // untouched, to the byte
      }
      yield* advance(lateMs)
      for (const { key, slid, value } of cases) {
        // A slide moved the time to live; a refusal left it, so the value is gone.
        expect(Option.map(yield* kv.get(key), JSON.parse)).toEqual(slid ? Option.some(slidOf(value)) : Option.none())
      }
    }))

  it.effect("key-value: a slide is sent before its answer is awaited, and its answer can be awaited again", () =>
    Effect.gen(function*() {
      const kv = yield* KeyValue
      const key = fresh("session")
      const value = JSON.stringify({ id: "s", lastActivity: "2026-01-01T00:00:00.000Z", expiresAt: "2026-01-08T00:00:00.000Z" })
      yield* kv.set(key, value, ttlMs)
      const stamp = { now: "2026-01-05T00:00:00.000Z", expiresAt: "2026-01-12T00:00:00.000Z", deviceId: undefined }
      const answer = yield* kv.slide(key, ttlMs, stamp)
      // Not awaited yet: a command sent after it already finds the session slid (one connection keeps the order).
      const slidValue = JSON.stringify({ ...JSON.parse(value), lastActivity: stamp.now, expiresAt: stamp.expiresAt })
      expect(yield* kv.get(key)).toEqual(Option.some(slidValue))
      expect(yield* answer).toEqual(Option.some({ value, slid: true }))
      expect(yield* answer).toEqual(Option.some({ value, slid: true }))
    }))

  it.effect("key-value: setIfAbsent sets once, and again only after expiry; parallel callers: one wins", () =>
    Effect.gen(function*() {
      const kv = yield* KeyValue
      const key = fresh("totp-step")
      expect(yield* kv.setIfAbsent(key, "first", earlyMs)).toBe(true)
      expect(yield* kv.setIfAbsent(key, "second", earlyMs)).toBe(false)
      expect(yield* kv.get(key)).toEqual(Option.some("first"))
      yield* advance(lateMs)
      expect(yield* kv.setIfAbsent(key, "third", 400)).toBe(true)
      const racing = fresh("totp-step")
      const wins = yield* Effect.all(Array.from({ length: 20 }, (_, i) => kv.setIfAbsent(racing, `r${i}`, 1000)), {
        concurrency: "unbounded"
      })
      expect(wins.filter((won) => won)).toHaveLength(1)
    }))

  it.effect("key-value: setIfPresent replaces a value with its time to live, and never brings back a deleted or expired key", () =>
    Effect.gen(function*() {
      const kv = yield* KeyValue
      const key = fresh("session")
      expect(yield* kv.setIfPresent(key, "ghost", 400)).toBe(false)
      expect(yield* kv.get(key)).toEqual(Option.none())
      yield* kv.set(key, "v1", earlyMs)
      expect(yield* kv.setIfPresent(key, "v2", ttlMs)).toBe(true)
      yield* advance(lateMs) // past v1's time to live: v2 brought its own
      expect(yield* kv.get(key)).toEqual(Option.some("v2"))
      yield* kv.delete(key)
      expect(yield* kv.setIfPresent(key, "v3", 1000)).toBe(false)
      expect(yield* kv.get(key)).toEqual(Option.none())
      yield* kv.set(key, "v4", 400)
      yield* advance(600)
      expect(yield* kv.setIfPresent(key, "v5", 1000)).toBe(false)
      expect(yield* kv.get(key)).toEqual(Option.none())
    }))

  it.effect("key-value: sets add, remove and list members; an emptied set is gone", () =>
    Effect.gen(function*() {
      const kv = yield* KeyValue
      const key = fresh("user-sessions")
      expect(yield* kv.setMembers(key)).toEqual([])
      expect(yield* kv.setAdd(key, "s1")).toBe(true)
      expect(yield* kv.setAdd(key, "s2")).toBe(true)
      expect(yield* kv.setAdd(key, "s1")).toBe(false)
      expect([...(yield* kv.setMembers(key))].sort()).toEqual(["s1", "s2"])
      expect(yield* kv.setRemove(key, "s1")).toBe(true)
      expect(yield* kv.setRemove(key, "s1")).toBe(false)
      expect(yield* kv.setRemove(key, "s2")).toBe(true)
      expect(yield* kv.setMembers(key)).toEqual([])
      expect(yield* kv.touch(key, 1000)).toBe(false)
    }))

  it.effect("lock: one holder at a time; a waiter gets the lock when it is released", () =>
    Effect.gen(function*() {
      const lock = yield* UserLock
      const key = fresh("user")
      const release = yield* Deferred.make<void>()
      const taken = yield* Deferred.make<void>()
      const order: Array<string> = []
      const first = yield* lock.withLock(key, Deferred.succeed(taken, undefined).pipe(
        Effect.zipRight(Deferred.await(release)),
        Effect.zipRight(Effect.sync(() => order.push("first")))
      )).pipe(Effect.fork)
      yield* Deferred.await(taken)
      const second = yield* lock.withLock(key, Effect.sync(() => order.push("second"))).pipe(Effect.fork)
      yield* advance(300)
      yield* settle
      expect(order).toEqual([])
      expect(Option.isNone(yield* Fiber.poll(second))).toBe(true)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(first)
      yield* advance(200)
      yield* Fiber.join(second)
      expect(order).toEqual(["first", "second"])
    }))

  it.effect("lock: waiters of one key run in the order they came", () =>
    Effect.gen(function*() {
      const lock = yield* UserLock
      const key = fresh("user")
      const release = yield* Deferred.make<void>()
      const holder = yield* holdLock(lock, key, Deferred.await(release))
      const order: Array<number> = []
      const waiters: Array<Fiber.RuntimeFiber<number, unknown>> = []
      for (let i = 0; i < 5; i++) {
        waiters.push(yield* lock.withLock(key, Effect.sync(() => order.push(i))).pipe(Effect.fork))
        yield* settle
      }
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      for (let i = 0; i < 20 && order.length < 5; i++) {
        yield* advance(100)
        yield* settle
      }
      yield* Effect.forEach(waiters, Fiber.join)
      expect(order).toEqual([0, 1, 2, 3, 4])
    }))

  it.effect("lock: a waiter that was interrupted or gave up holds nobody up, and the key is free afterwards", () =>
    Effect.gen(function*() {
      const lock = yield* UserLock
      const key = fresh("user")
      const release = yield* Deferred.make<void>()
      const holder = yield* holdLock(lock, key, Deferred.await(release))
      const interrupted = yield* lock.withLock(key, Effect.succeed("interrupted ran")).pipe(Effect.fork)
      yield* settle
      const givingUp = yield* lock.withLock(key, Effect.succeed("gave up ran")).pipe(Effect.either, Effect.fork)
      yield* settle
      yield* Fiber.interrupt(interrupted)
      yield* advance(5_300)
      const gaveUp = yield* Fiber.join(givingUp)
      expect(Either.isLeft(gaveUp) && gaveUp.left._tag).toBe("OperationInProgress")
      const next = yield* lock.withLock(key, Effect.succeed("next ran")).pipe(Effect.fork)
      yield* settle
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      yield* advance(200)
      expect(yield* Fiber.join(next)).toBe("next ran")
      expect(yield* lock.withLock(key, Effect.succeed("free"))).toBe("free")
    }))

  it.effect("lock: a waiter gives up with OperationInProgress after 5 seconds", () =>
    Effect.gen(function*() {
      const lock = yield* UserLock
      const key = fresh("user")
      const holder = yield* holdLock(lock, key)
      const waiter = yield* lock.withLock(key, Effect.succeed("ran")).pipe(Effect.either, Effect.fork)
      yield* advance(5_300)
      const result = yield* Fiber.join(waiter)
      expect(Either.isLeft(result) && result.left._tag).toBe("OperationInProgress")
      yield* Fiber.interrupt(holder)
      // Interrupting the holder released the lock.
      expect(yield* lock.withLock(key, Effect.succeed("ran"))).toBe("ran")
    }))

  it.effect("lock: an expired holder's release never frees the next holder's lock", () =>
    Effect.gen(function*() {
      const lock = yield* UserLock
      const key = fresh("user")
      const taken = yield* Deferred.make<void>()
      // A holder that hangs past its time to live, as a crashed instance would.
      const stale = yield* lock.withLock(key, Effect.zipRight(Deferred.succeed(taken, undefined), Effect.never), {
        ttlMs: 300
      }).pipe(Effect.fork)
      yield* Deferred.await(taken)
      yield* advance(500)
      const inside = yield* Deferred.make<void>()
      const done = yield* Deferred.make<void>()
      const next = yield* lock.withLock(key, Effect.zipRight(Deferred.succeed(inside, undefined), Deferred.await(done)))
        .pipe(Effect.fork)
      yield* Deferred.await(inside)
      yield* Fiber.interrupt(stale) // releases with its own, stale token
      const third = yield* lock.withLock(key, Effect.void).pipe(Effect.exit, Effect.fork)
      yield* advance(300)
      yield* settle
      expect(Option.isNone(yield* Fiber.poll(third))).toBe(true)
      yield* Deferred.succeed(done, undefined)
      yield* Fiber.join(next)
      yield* advance(200)
      expect(Exit.isSuccess(yield* Fiber.join(third))).toBe(true)
    }))

  it.effect("lock: a failing effect still releases the lock", () =>
    Effect.gen(function*() {
      const lock = yield* UserLock
      const key = fresh("user")
      const failed = yield* lock.withLock(key, Effect.fail("boom" as const)).pipe(Effect.either)
      expect(failed).toEqual(Either.left("boom"))
      expect(yield* lock.withLock(key, Effect.succeed(1))).toBe(1)
    }))

  it.effect("lock: reentrant within a fiber; once its withLock ends, the fiber's next one takes the lock again and others wait", () =>
    Effect.gen(function*() {
      const lock = yield* UserLock
      const key = fresh("user")
      // Nested: at once (a lock that did not know its holder would wait for itself until it gave up).
      expect(yield* lock.withLock(key, lock.withLock(key, Effect.succeed("nested")))).toBe("nested")
      // Ended: this fiber (and what it forks) no longer counts as the holder.
      const release = yield* Deferred.make<void>()
      const taken = yield* Deferred.make<void>()
      const order: Array<string> = []
      const holder = yield* lock.withLock(key, Deferred.succeed(taken, undefined).pipe(
        Effect.zipRight(Deferred.await(release)),
        Effect.zipRight(Effect.sync(() => order.push("holder")))
      )).pipe(Effect.fork)
      yield* Deferred.await(taken)
      const other = yield* lock.withLock(key, Effect.sync(() => order.push("other"))).pipe(Effect.fork)
      yield* advance(300)
      yield* settle
      expect(order).toEqual([])
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      yield* advance(200)
      yield* Fiber.join(other)
      expect(order).toEqual(["holder", "other"])
    }))

  it.effect("lock: a taking sent ahead is what its effect's withLock holds, until that ends; then the key is free", () =>
    Effect.gen(function*() {
      const lock = yield* UserLock
      const key = fresh("user")
      const taken = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* lock.withTakenAhead(key, lock.withLock(key, Effect.zipRight(Deferred.succeed(taken, undefined), Deferred.await(release))))
        .pipe(Effect.fork)
      // At once, with the taking sent ahead: had the withLock sent its own, it would find the key taken and poll.
      for (let i = 0; i < 10 && !(yield* Deferred.isDone(taken)); i++) yield* advance(10)
      expect(yield* Deferred.isDone(taken)).toBe(true)
      const next = yield* lock.withLock(key, Effect.succeed("next ran")).pipe(Effect.fork)
      yield* advance(300)
      yield* settle
      expect(Option.isNone(yield* Fiber.poll(next))).toBe(true)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      yield* advance(200)
      expect(yield* Fiber.join(next)).toBe("next ran")
    }))

  it.effect("lock: a taking sent ahead that its effect did not use is released when the effect ends, failed or interrupted", () =>
    Effect.gen(function*() {
      const lock = yield* UserLock
      const key = fresh("user")
      const other = fresh("user")
      expect(yield* lock.withTakenAhead(key, lock.withLock(other, Effect.succeed("other key")))).toBe("other key")
      const failed = yield* lock.withTakenAhead(key, Effect.fail("refused" as const)).pipe(Effect.either)
      expect(failed).toEqual(Either.left("refused"))
      const started = yield* Deferred.make<void>()
      const aborted = yield* lock.withTakenAhead(key, Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)).pipe(Effect.fork)
      yield* Deferred.await(started)
      yield* Fiber.interrupt(aborted)
      // Taken at once: a taking left behind would hold the key for its time to live, and this waiter would poll.
      const next = yield* lock.withLock(key, Effect.succeed("next ran")).pipe(Effect.fork)
      for (let i = 0; i < 10 && Option.isNone(yield* Fiber.poll(next)); i++) yield* advance(10)
      expect(yield* Fiber.poll(next)).toEqual(Option.some(Exit.succeed("next ran")))
    }))

  it.effect("lock: a caller of this instance that reaches withLock first goes first; the taking another request sent ahead is released for it", () =>
    Effect.gen(function*() {
      const lock = yield* UserLock
      const key = fresh("user")
      const order: Array<string> = []
      // A request whose taking reached the store, still on its way to its operation (authentication, checks).
      const go = yield* Deferred.make<void>()
      const sent = yield* Deferred.make<void>()
      const later = yield* lock.withTakenAhead(
        key,
        Deferred.succeed(sent, undefined).pipe(
          Effect.zipRight(Deferred.await(go)),
          Effect.zipRight(lock.withLock(key, Effect.sync(() => order.push("ahead"))))
        )
      ).pipe(Effect.either, Effect.fork)
      yield* Deferred.await(sent)
      yield* settle
      // Another caller of this instance comes to the line first: it does not wait for the store.
      const first = yield* lock.withLock(key, Effect.sync(() => order.push("first"))).pipe(Effect.either, Effect.fork)
      for (let i = 0; i < 5 && order.length < 1; i++) yield* Effect.zipRight(settle, advance(1))
      expect(order).toEqual(["first"])
      expect(Either.isRight(yield* Fiber.join(first))).toBe(true)
      yield* Deferred.succeed(go, undefined)
      for (let i = 0; i < 10 && order.length < 2; i++) {
        yield* advance(100)
        yield* settle
      }
      expect(order).toEqual(["first", "ahead"])
      expect(Either.isRight(yield* Fiber.join(later))).toBe(true)
    }))

  it.effect("counter: counts hits in fixed windows, per key, and starts over in the next window", () =>
    Effect.gen(function*() {
      const counter = yield* RateCounter
      const windowMs = 1_000
      // Start just after a window boundary so that the hits below share one window.
      const now = yield* Clock.currentTimeMillis
      yield* advance(windowMs - (now % windowMs) + 20)
      const key = fresh("login")
      const hits = yield* Effect.all([hit(counter, key, windowMs), hit(counter, key, windowMs), hit(counter, key, windowMs)])
      expect(hits.map((h) => h.count)).toEqual([1, 2, 3])
      const windowEnd = hits[0]!.resetAtMs
      expect(windowEnd % windowMs).toBe(0)
      expect(windowEnd - (yield* Clock.currentTimeMillis)).toBeGreaterThan(0)
      expect(windowEnd - (yield* Clock.currentTimeMillis)).toBeLessThanOrEqual(windowMs)
      expect((yield* hit(counter, fresh("login"), windowMs)).count).toBe(1)
      yield* advance(windowEnd - (yield* Clock.currentTimeMillis) + 20)
      const next = yield* hit(counter, key, windowMs)
      expect(next).toEqual({ count: 1, resetAtMs: windowEnd + windowMs })
    }))

  it.effect("counter: one call counts several keys, each in its own window", () =>
    Effect.gen(function*() {
      const counter = yield* RateCounter
      const now = yield* Clock.currentTimeMillis
      if (60_000 - (now % 60_000) < 5_000) yield* advance(60_000 - (now % 60_000) + 20)
      const [user, address] = [fresh("user"), fresh("ip")]
      expect((yield* counter.hitAll([{ subject: user, name: "global", windowMs: 60_000 }])).map((c) => c.count)).toEqual([1])
      // A user's counters and an address's interleaved, as a request's limits come.
      const counts = yield* counter.hitAll([
        { subject: user, name: "global", windowMs: 60_000 },
        { subject: address, name: "auth", windowMs: 60_000 },
        { subject: user, name: "open", windowMs: 1_000 },
        { subject: user, name: "open", windowMs: 60_000 },
        { subject: address, name: "global", windowMs: 60_000 }
      ])
      expect(counts.map((c) => c.count)).toEqual([2, 1, 1, 1, 1])
      const at = yield* Clock.currentTimeMillis
      expect(counts.map((c) => c.resetAtMs)).toEqual([
        (Math.floor(at / 60_000) + 1) * 60_000,
        (Math.floor(at / 60_000) + 1) * 60_000,
        (Math.floor(at / 1_000) + 1) * 1_000,
        (Math.floor(at / 60_000) + 1) * 60_000,
        (Math.floor(at / 60_000) + 1) * 60_000
      ])
      expect((yield* counter.hitAll([
        { subject: user, name: "open", windowMs: 60_000 },
        { subject: address, name: "global", windowMs: 60_000 }
      ])).map((c) => c.count)).toEqual([2, 2])
      // More of one subject's limits than one store call takes.
      const many = yield* counter.hitAll(Array.from({ length: 6 }, (_, i) => ({ subject: user, name: `limit${i}`, windowMs: 60_000 })))
      expect(many.map((c) => c.count)).toEqual([1, 1, 1, 1, 1, 1])
      expect(yield* counter.hitAll([])).toEqual([])
    }))

  it.effect("counter: parallel hits are each counted once", () =>
    Effect.gen(function*() {
      const counter = yield* RateCounter
      const key = fresh("burst")
      const windowMs = 60_000
      const now = yield* Clock.currentTimeMillis
      if (windowMs - (now % windowMs) < 5_000) yield* advance(windowMs - (now % windowMs) + 20)
      const hits = yield* Effect.all(Array.from({ length: 50 }, () => hit(counter, key, windowMs)), {
        concurrency: "unbounded"
      })
      expect(hits.map((h) => h.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
    }))

  it.scoped("pub/sub: subscribers get every message published after they subscribed, in order", () =>
    Effect.gen(function*() {
      const broadcast = yield* Broadcast
      const channel = fresh("drops")
      const first = yield* listen(broadcast, channel)
      const second = yield* listen(broadcast, channel)
      const other = yield* listen(broadcast, fresh("other"))
      // Enough messages, one publication after the other, that a cluster routing them through different nodes
      // would deliver some out of order.
      const messages = Array.from({ length: 100 }, (_, i) => `m${i}`)
      for (const message of messages) yield* broadcast.publish({ channel, message })
      expect(yield* first.messages(messages.length)).toEqual(messages)
      expect(yield* second.messages(messages.length)).toEqual(messages)
      const stray = yield* other.messages(1).pipe(Effect.timeout("100 millis"), Effect.either, Effect.fork)
      yield* advance(200)
      expect(Either.isLeft(yield* Fiber.join(stray))).toBe(true)
    }))

  it.scoped("pub/sub: publications sent together each reach their own channel, in order", () =>
    Effect.gen(function*() {
      const broadcast = yield* Broadcast
      const user = fresh("user")
      const drops = fresh("drops")
      const userMessages = yield* listen(broadcast, user)
      const dropMessages = yield* listen(broadcast, drops)
      yield* broadcast.publish(
        { channel: user, message: "balance" },
        { channel: drops, message: "drop" },
        { channel: user, message: "notification" }
      )
      expect(yield* userMessages.messages(2)).toEqual(["balance", "notification"])
      expect(yield* dropMessages.messages(1)).toEqual(["drop"])
    }))

  it.scoped("pub/sub: a burst reaches a subscriber in few deliveries, whole and in order", () =>
    Effect.gen(function*() {
      const broadcast = yield* Broadcast
      const channel = fresh("burst")
      const subscriber = yield* listen(broadcast, channel)
      // Ten messages a couple of real milliseconds apart: each would be a delivery of its own, were a channel's
      // messages not passed on together (COALESCE_MS).
      for (let i = 0; i < 10; i++) {
        yield* broadcast.publish({ channel, message: `b${i}` })
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 2)))
      }
      const deliveries = yield* subscriber.deliveries(10)
      expect(deliveries.flat()).toEqual(Array.from({ length: 10 }, (_, i) => `b${i}`))
      expect(deliveries.length).toBeLessThanOrEqual(4)
    }))

  it.scoped("pub/sub: a burst in one window comes whole and in order, in deliveries of at most 64 messages", () =>
    Effect.gen(function*() {
      const broadcast = yield* Broadcast
      const channel = fresh("flood")
      const subscriber = yield* listen(broadcast, channel)
      // 1200 within a few milliseconds (one window).
      for (let i = 0; i < 1200; i++) yield* broadcast.publish({ channel, message: `m${i}` })
      const deliveries = yield* subscriber.deliveries(1200)
      expect(deliveries.flat()).toEqual(Array.from({ length: 1200 }, (_, i) => `m${i}`))
      expect(Math.max(...deliveries.map((delivery) => delivery.length))).toBeLessThanOrEqual(64)
    }))

  it.scoped("pub/sub: who subscribes while a burst waits to be passed on gets only what follows", () =>
    Effect.gen(function*() {
      const broadcast = yield* Broadcast
      const channel = fresh("window")
      const early = yield* listen(broadcast, channel)
      // `first` goes at once; `second`, a moment later, waits for the rest of the channel's window (COALESCE_MS).
      yield* broadcast.publish({ channel, message: "first" })
      yield* broadcast.publish({ channel, message: "second" })
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))
      const late = yield* listen(broadcast, channel)
      yield* broadcast.publish({ channel, message: "third" })
      expect(yield* early.messages(3)).toEqual(["first", "second", "third"])
      expect(yield* late.messages(1)).toEqual(["third"])
    }))

  it.scoped("pub/sub: a subscriber that throws is let go; the others get the delivery and the publisher does not fail", () =>
    Effect.gen(function*() {
      const broadcast = yield* Broadcast
      const channel = fresh("faulty")
      let calls = 0
      yield* broadcast.subscribe(channel, () => {
        calls++
        throw new Error("a defect in a subscriber")
      })
      const healthy = yield* listen(broadcast, channel)
      yield* broadcast.publish({ channel, message: "one" })
      expect(yield* healthy.messages(1)).toEqual(["one"])
      yield* broadcast.publish({ channel, message: "two" })
      expect(yield* healthy.messages(1)).toEqual(["two"])
      expect(calls).toBe(1)
    }))

  it.effect("pub/sub: a channel can be subscribed again after its last subscriber left", () =>
    Effect.gen(function*() {
      const broadcast = yield* Broadcast
      const channel = fresh("battle")
      yield* Effect.scoped(listen(broadcast, channel))
      const message = yield* Effect.scoped(
        Effect.gen(function*() {
          const subscriber = yield* listen(broadcast, channel)
          yield* broadcast.publish({ channel, message: "again" })
          return yield* subscriber.messages(1)
        })
      )
      expect(message).toEqual(["again"])
    }))

  it.effect("pub/sub: a subscriber gets nothing once its scope has closed", () =>
    Effect.gen(function*() {
      const broadcast = yield* Broadcast
      const channel = fresh("left")
      const gone = yield* Effect.scoped(listen(broadcast, channel))
      yield* Effect.scoped(Effect.gen(function*() {
        const stays = yield* listen(broadcast, channel)
        yield* broadcast.publish({ channel, message: "after" })
        expect(yield* stays.messages(1)).toEqual(["after"])
      }))
      expect(gone.received()).toEqual([])
    }))
}
