/**
 * Per-user mutual exclusion across instances (docs/rules.md#user-lock): `SET key token NX PX ttl` with a random
 * token, released by compare-and-delete so that a holder whose lock expired never deletes the lock of
 * the next holder; the release is sent without waiting for its reply (see makeRedis). Callers of one key on
 * one instance wait in line (see fromBackend); a caller waits 5 s in all, then fails with OperationInProgress.
 * Correctness never depends on the lock (docs/rules.md#conditional-debit): it only keeps a user's operations
 * from interleaving.
 *
 * The lock is reentrant within a fiber: an operation that already holds `user:<id>` (an idempotent
 * request holds it around the whole service call) runs a nested `withLock` of that key at once.
 *
 * A lock can be taken ahead (`withTakenAhead`): the rate limiter sends the taking of `user:<id>` for an endpoint whose
 * operation takes it, in the same round trip as its counts and the session's read, and the operation's `withLock`
 * uses that taking instead of sending its own, unless another caller of this instance came to the key's line first
 * (docs/decisions.md "The user lock taken ahead").
 */
import { Cause, Clock, Context, Deferred, Effect, Exit, FiberId, FiberRef, Layer, Option, Runtime, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { OperationInProgress, type ServiceUnavailable } from "../../schema/platform/Errors"
import { userLockBusy, userLockWaited } from "../AppMetrics"
import { sentNow, storeCall } from "../Failures"
import { hotSpan } from "../HotSpans"
import { toTtl } from "./KeyValue"
import { RedisConnection } from "./RedisConnection"

interface LockOptions {
  /** How long the lock outlives a crashed holder. Default 30000 ms. */
  readonly ttlMs?: number
}

export interface UserLockShape {
  /** Runs `effect` while holding the lock named `key`; at once when this fiber already holds it. */
  readonly withLock: <A, E, R>(
    key: string,
    effect: Effect.Effect<A, E, R>,
    options?: LockOptions
  ) => Effect.Effect<A, E | OperationInProgress | ServiceUnavailable, R>
  /**
   * Sends the taking of `key` (default time to live) now, unless a caller of this instance has the key's turn, then
   * runs `effect` with it: the effect's first `withLock(key)` uses this taking instead of sending its own, when it
   * gets the key's turn on this instance at once and no other caller's taking sent ahead was released for it;
   * otherwise the taking is released then and the caller goes the usual way. A caller of this instance that reaches
   * `withLock(key)` first releases the taking (whoever comes first to the line goes first, as without it). When the
   * effect ends without a `withLock(key)`, however it ends, the taking is released.
   */
  readonly withTakenAhead: <A, E, R>(key: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

const DEFAULT_LOCK_TTL_MS = 30_000
/** How long a caller waits for the lock, in line and at the store together. */
const MAX_WAIT_MS = 5_000
const POLL = Schedule.spaced("50 millis")

class Busy {
  readonly _tag = "Busy"
}

/**
 * The primitive each store provides: one attempt to take the lock, sent when the outer effect runs and answered
 * (true: taken) when the inner one is awaited, and a release by token.
 */
interface LockBackend {
  readonly sendAcquire: (key: string, token: string, ttlMs: number) => Effect.Effect<Effect.Effect<boolean, ServiceUnavailable>>
  readonly release: (key: string, token: string, ttlMs: number) => Effect.Effect<void>
}

/** The lock keys the current fiber holds. */
const held = FiberRef.unsafeMake<ReadonlySet<string>>(new Set())

/** A taking sent ahead (`withTakenAhead`), until a `withLock` of its key or the end of its effect settles it. */
interface Ahead {
  readonly key: string
  readonly token: string
  readonly acquired: Effect.Effect<boolean, ServiceUnavailable>
  settled: boolean
}

/** The taking sent ahead for the current fiber's operation, if any; not for the fibers it forks. */
const ahead = FiberRef.unsafeMake<Ahead | undefined>(undefined, { fork: () => undefined })

/**
 * A holder's token only has to differ from every other holder's (it is compared on release, never
 * guessed at), so it is this process's random prefix and a counter.
 */
const tokenPrefix = randomBytes(8).toString("hex")
let tokensIssued = 0
const newToken = () => `${tokenPrefix}:${++tokensIssued}`

/**
 * A caller in line for a key's turn. `outcome` is set, and the caller removed from the line, only in
 * synchronous code: "turn" when the turn was handed to it, "scatter" when the holder found the store
 * failing and sent everyone to the store on their own.
 */
interface Waiter {
  readonly woken: Deferred.Deferred<void>
  readonly ttlMs: number
  outcome: "turn" | "scatter" | undefined
}

/** Who of this instance has the key's turn, until when at most (its lock's time to live), and who waits. */
interface Line {
  holderUntil: number
  readonly waiting: Array<Waiter>
}

/**
 * Callers of one key on one instance line up here, first come first served, and only the one whose
 * turn it is asks the store for the lock: under a backlog, every waiter polling the store every 50 ms
 * took the CPU the backlog needed (docs/decisions.md "Stores"). The store's lock still decides who
 * runs; a turn only orders this instance's callers. A turn held past its lock's time to live (a hung
 * holder) no longer holds anyone back: callers go to the store, whose lock has expired too. When the
 * store fails for the holder, the waiters go to the store too, and each gets its own answer (503).
 */
const fromBackend = (backend: LockBackend): UserLockShape => {
  const lines = new Map<string, Line>()

  const wake = (waiter: Waiter, outcome: "turn" | "scatter") => {
    waiter.outcome = outcome
    Deferred.unsafeDone(waiter.woken, Exit.void)
  }

  /** Hands the key's turn to the next caller in line, or ends the line. */
  const pass = (key: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.sync(() => {
        const line = lines.get(key)
        if (line === undefined) return
        const next = line.waiting.shift()
        if (next === undefined) {
          lines.delete(key)
          return
        }
        line.holderUntil = now + next.ttlMs
        wake(next, "turn")
      }))

  /** Ends the line: everyone in it goes to the store on their own. */
  const scatter = (key: string) =>
    Effect.sync(() => {
      const line = lines.get(key)
      lines.delete(key)
      for (const waiter of line?.waiting ?? []) wake(waiter, "scatter")
    })

  /**
   * The key's turn: "first" when the caller has it at once (nobody of this instance had it), "turn" when it was
   * handed the turn after waiting (either way it must pass it on), "own" when the caller goes to the store without
   * it (the holder kept it past its time to live, or scattered the line), or OperationInProgress when `waitMs` ran
   * out. Runs under the caller's uninterruptible mask: `restore` makes only the waiting interruptible. `notFirst`
   * runs first when the turn is not the caller's at once (the release of a taking sent ahead: held while the caller
   * waits in line, it would keep the turn's holder from the store).
   */
  const takeTurn = (
    key: string,
    ttlMs: number,
    waitMs: number,
    restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>,
    notFirst: Effect.Effect<void>
  ): Effect.Effect<"first" | "turn" | "own", OperationInProgress> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const line = lines.get(key)
      if (line === undefined) {
        lines.set(key, { holderUntil: now + ttlMs, waiting: [] })
        return Effect.succeed("first" as const)
      }
      if (line.holderUntil <= now) return Effect.as(notFirst, "own" as const)
      const waiter: Waiter = { woken: Deferred.unsafeMake(FiberId.none), ttlMs, outcome: undefined }
      line.waiting.push(waiter)
      const untilHolderExpires = line.holderUntil - now
      return notFirst.pipe(
        Effect.zipRight(restore(Deferred.await(waiter.woken).pipe(Effect.timeout(Math.min(waitMs, untilHolderExpires))))),
        Effect.exit,
        Effect.flatMap((exit): Effect.Effect<"turn" | "own", OperationInProgress> => {
          const interrupted = Exit.isFailure(exit) && Exit.isInterrupted(exit)
          // However the wait ended, what the line decided meanwhile stands: a turn handed over is this
          // caller's, to use or (interrupted) to pass on.
          if (waiter.outcome === "turn") return interrupted ? Effect.zipRight(pass(key), Effect.interrupt) : Effect.succeed("turn")
          const at = line.waiting.indexOf(waiter)
          if (at >= 0) line.waiting.splice(at, 1)
          if (interrupted) return Effect.interrupt
          if (waiter.outcome === "scatter" || untilHolderExpires < waitMs) return Effect.succeed("own")
          return Effect.fail(new OperationInProgress())
        })
      )
    })

  /** Takings sent ahead by key, until settled: by their own withLock, by another caller's, or at their effect's end. */
  const pending = new Map<string, Set<Ahead>>()

  /** Marks `sent` settled; true when it was not yet (the caller then uses or releases it). Synchronous. */
  const claim = (sent: Ahead): boolean => {
    if (sent.settled) return false
    sent.settled = true
    const ofKey = pending.get(sent.key)
    ofKey?.delete(sent)
    if (ofKey?.size === 0) pending.delete(sent.key)
    return true
  }

  const settle = (sent: Ahead) =>
    Effect.suspend(() => claim(sent) ? backend.release(sent.key, sent.token, DEFAULT_LOCK_TTL_MS) : Effect.void)

  /** Releases the takings other requests of this instance sent ahead for `key`; whether there were any. */
  const settleOthers = (key: string) =>
    Effect.suspend(() => {
      const others = [...pending.get(key) ?? []]
      return Effect.as(Effect.forEach(others, settle, { discard: true }), others.length > 0)
    })

  return {
    withTakenAhead: (key, effect) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.suspend(() => {
          // A caller of this instance has the key's turn: this request's operation lines up behind it anyway.
          if (lines.has(key)) return restore(effect)
          const token = newToken()
          return Effect.flatMap(backend.sendAcquire(key, token, DEFAULT_LOCK_TTL_MS), (acquired) => {
            const sent: Ahead = { key, token, acquired, settled: false }
            const ofKey = pending.get(key)
            if (ofKey === undefined) pending.set(key, new Set([sent]))
            else ofKey.add(sent)
            // Set here and unset by the same `ensuring` that settles it: a region of its own (`Effect.locally`) is
            // ~20 of the runtime's steps more per request.
            return Effect.flatMap(FiberRef.getAndSet(ahead, sent), (before) =>
              restore(effect).pipe(Effect.ensuring(Effect.zipRight(FiberRef.set(ahead, before), settle(sent)))))
          })
        })
      ),
    withLock: <A, E, R>(key: string, effect: Effect.Effect<A, E, R>, options?: LockOptions) =>
      Effect.flatMap(FiberRef.get(held), (keys): Effect.Effect<A, E | OperationInProgress | ServiceUnavailable, R> =>
        keys.has(key) ? effect : Effect.uninterruptibleMask((restore) =>
          Effect.withFiberRuntime<A, E | OperationInProgress | ServiceUnavailable, R>((fiber) => {
            // The taking sent ahead for this key, claimed under the mask: this caller uses or releases it.
            const sentAhead = fiber.getFiberRef(ahead)
            const mine = sentAhead !== undefined && sentAhead.key === key && claim(sentAhead) ? sentAhead : undefined
            const releaseMine = mine === undefined ? Effect.void : backend.release(key, mine.token, DEFAULT_LOCK_TTL_MS)
            return Effect.flatMap(Clock.currentTimeMillis, (started) => {
              const ttlMs = toTtl(options?.ttlMs ?? DEFAULT_LOCK_TTL_MS)
              // Counted once per take: the wait (in line and at the store) of a take that succeeded, and
              // the takes that gave up.
              const taken = <X, Y>(exit: Exit.Exit<X, Y>): Effect.Effect<void> =>
                Exit.isSuccess(exit)
                  ? Effect.flatMap(Clock.currentTimeMillis, (now) => userLockWaited(now - started))
                  : Option.exists(Cause.failureOption(exit.cause), (error) => error instanceof OperationInProgress)
                  ? userLockBusy
                  : Effect.void
              // First to this instance's line, the caller goes first: other requests' takings sent ahead for the key
              // are released (their operations line up when they come), and then its own answer, given while one of
              // them may have held the key, is not used either. Its own is used only as the first of the line.
              const ownTaking = (place: "first" | "turn" | "own") =>
                place !== "first" ? Effect.succeed(undefined) : Effect.flatMap(settleOthers(key), (overtook) =>
                  mine !== undefined && !overtook && ttlMs === DEFAULT_LOCK_TTL_MS
                    ? Effect.succeed(mine)
                    : Effect.as(releaseMine, undefined))
              return takeTurn(key, ttlMs, MAX_WAIT_MS, restore, releaseMine).pipe(
                Effect.onExit(Exit.match({ onFailure: (cause) => taken(Exit.failCause(cause)), onSuccess: () => Effect.void })),
                Effect.flatMap((place) => Effect.flatMap(ownTaking(place), (used) => {
                  const token = used?.token ?? newToken()
                  const attempt = Effect.flatten(backend.sendAcquire(key, token, ttlMs))
                  // Waiting at the store: only when the lock is held elsewhere (another instance, or a
                  // hung holder here), for what is left of MAX_WAIT_MS.
                  const wait = Effect.flatMap(Clock.currentTimeMillis, (now) =>
                    attempt.pipe(
                      Effect.filterOrFail((acquired) => acquired, () => new Busy()),
                      Effect.retry(POLL.pipe(Schedule.upTo(Math.max(0, started + MAX_WAIT_MS - now)))),
                      Effect.catchTag("Busy", () => new OperationInProgress())
                    ))
                  let holdsTurn = place !== "own"
                  const acquire = restore(Effect.flatMap(used?.acquired ?? attempt, (acquired) => acquired ? Effect.void : wait)).pipe(
                    Effect.onExit(taken),
                    // The store failing (503) for the turn's holder: its waiters ask the store themselves.
                    Effect.tapErrorTag("ServiceUnavailable", () =>
                      holdsTurn ? Effect.zipRight(Effect.sync(() => (holdsTurn = false)), scatter(key)) : Effect.void)
                  )
                  // The held keys are set for the effect and set back by the `ensuring` that releases (as `ahead` above).
                  return acquire.pipe(
                    Effect.zipRight(FiberRef.set(held, new Set([...keys, key]))),
                    Effect.zipRight(restore(effect)),
                    // The release is harmless when the lock was never taken: it deletes only a lock holding this token.
                    Effect.ensuring(Effect.zipRight(
                      FiberRef.set(held, keys),
                      backend.release(key, token, ttlMs).pipe(Effect.ensuring(Effect.suspend(() => holdsTurn ? pass(key) : Effect.void)))
                    ))
                  )
                }))
              )
            })
          })
        )).pipe(hotSpan("UserLock.withLock", { attributes: { key } }))
  }
}

const makeMemory = Effect.sync((): UserLockShape => {
  const locks = new Map<string, { token: string; expiresAt: number }>()
  return fromBackend({
    sendAcquire: (key, token, ttlMs) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const held = locks.get(key)
        if (held !== undefined && held.expiresAt > now) return Effect.succeed(false)
        locks.set(key, { token, expiresAt: now + ttlMs })
        return Effect.succeed(true)
      }),
    release: (key, token) =>
      Effect.sync(() => {
        if (locks.get(key)?.token === token) locks.delete(key)
      })
  })
})

const RELEASE_SCRIPT = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`

const makeRedis = Effect.gen(function*() {
  const { client, prefix, script } = yield* RedisConnection
  // Where a failed release is tried again: this layer's runtime (its logger), not the request's fiber.
  const runtime = yield* Effect.runtime<never>()
  const k = (key: string) => `${prefix}lock:${key}`
  const releaseIfHeld = script("lockRelease", RELEASE_SCRIPT)
  return fromBackend({
    sendAcquire: (key, token, ttlMs) =>
      Effect.sync(() => Effect.map(sentNow(() => client.set(k(key), token, "PX", ttlMs, "NX")), (reply) => reply === "OK")),
    // The release is sent and not waited for: nothing the holder does next depends on its reply, and its wait
    // was a round trip of every locked request. Redis runs one connection's commands in order, so this
    // instance's next taking of the key (after `pass`) comes after it; another instance's comes after this
    // answer reached its client, and a taking that still finds the key held polls again (50 ms).
    // Should Redis be unreachable (an outage, a fail-over), the release is tried again in the background until
    // the lock's time to live: a lock whose taking reached the replica but whose release did not would otherwise
    // hold the user's next operations (409) for the whole time to live after a fail-over. The token keeps a late
    // release from freeing anyone else's lock.
    release: (key, token, ttlMs) =>
      Effect.sync(() => {
        releaseIfHeld(k(key), [token]).catch(() =>
          Runtime.runFork(runtime)(Effect.zipRight(
            Effect.logWarning("UserLock: release failed; tried again until the lock's time to live"),
            storeCall(() => releaseIfHeld(k(key), [token])).pipe(
              Effect.retry(Schedule.exponential("100 millis").pipe(Schedule.union(Schedule.spaced("1 second")), Schedule.upTo(ttlMs))),
              Effect.ignore
            )
          ))
        )
      })
  })
})

export class UserLock extends Context.Tag("app/UserLock")<UserLock, UserLockShape>() {
  static readonly memory: Layer.Layer<UserLock> = Layer.effect(this, makeMemory)
  static readonly redis: Layer.Layer<UserLock, never, RedisConnection> = Layer.effect(this, makeRedis)
}
