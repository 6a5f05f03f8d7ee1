/**
 * Per-user mutual exclusion across instances (docs/rules.md#user-lock): `SET key token NX PX ttl` with a random
 * token, released by compare-and-delete so that a holder whose lock expired never deletes the lock of
 * the next holder. A waiter retries every 50 ms for up to 5 s, then fails with OperationInProgress.
 * Correctness never depends on the lock (docs/rules.md#conditional-debit): it only keeps a user's operations
 * from interleaving.
 *
 * The lock is reentrant within a fiber: an operation that already holds `user:<id>` (an idempotent
 * request holds it around the whole service call) runs a nested `withLock` of that key at once.
 */
import { Cause, Clock, Context, Deferred, Effect, Exit, FiberId, FiberRef, Layer, Option, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { OperationInProgress, type ServiceUnavailable } from "../../schema/Errors"
import { userLockTaken } from "../../services/AppMetrics"
import { storeCall } from "../../services/Failures"
import { toTtl } from "./KeyValue"
import { RedisConnection } from "./RedisConnection"

export interface LockOptions {
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
}

export const DEFAULT_LOCK_TTL_MS = 30_000
/** How long a caller waits for the lock, in line and at the store together. */
const MAX_WAIT_MS = 5_000
const POLL = Schedule.spaced("50 millis")

class Busy {
  readonly _tag = "Busy"
}

/** The primitive each store provides: one attempt to take the lock, and a release by token. */
interface LockBackend {
  readonly tryAcquire: (key: string, token: string, ttlMs: number) => Effect.Effect<boolean, ServiceUnavailable>
  readonly release: (key: string, token: string) => Effect.Effect<void>
}

/** The lock keys the current fiber holds. */
const held = FiberRef.unsafeMake<ReadonlySet<string>>(new Set())

/**
 * A holder's token only has to differ from every other holder's (it is compared on release, never
 * guessed at), so it is this process's random prefix and a counter.
 */
const tokenPrefix = randomBytes(8).toString("hex")
let tokensIssued = 0

/** A caller in line for a key's turn; `granted` and `gone` change only in synchronous code. */
interface Waiter {
  readonly woken: Deferred.Deferred<void>
  granted: boolean
  gone: boolean
}

/** Who of this instance has the key's turn, until when at most (its lock's time to live), and who waits. */
interface Line {
  holderUntil: number
  readonly ttlMs: Map<Waiter, number>
  readonly waiting: Array<Waiter>
}

/**
 * Callers of one key on one instance line up here, first come first served, and only the one whose
 * turn it is asks the store for the lock: under a backlog, every waiter polling the store every 50 ms
 * took the CPU the backlog needed (docs/decisions.md "Stores"). The store's lock still decides who
 * runs; a turn only orders this instance's callers. A turn held past its lock's time to live (a hung
 * holder) no longer holds the others back: they go to the store, whose lock has expired too.
 */
const fromBackend = (backend: LockBackend): UserLockShape => {
  const lines = new Map<string, Line>()

  /** Hands the key's turn to the next caller still waiting, or ends the line. */
  const pass = (key: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.sync(() => {
        const line = lines.get(key)
        if (line === undefined) return
        for (let next = line.waiting.shift(); next !== undefined; next = line.waiting.shift()) {
          const ttlMs = line.ttlMs.get(next)!
          line.ttlMs.delete(next)
          if (next.gone) continue
          next.granted = true
          line.holderUntil = now + ttlMs
          Deferred.unsafeDone(next.woken, Exit.void)
          return
        }
        lines.delete(key)
      }))

  /**
   * The key's turn: "turn" when the caller has it (and must pass it on), "expired" when the holder kept it
   * past its time to live (go to the store without it), or OperationInProgress when `waitMs` ran out.
   * Runs under the caller's uninterruptible mask: `restore` makes only the waiting interruptible.
   */
  const takeTurn = (
    key: string,
    ttlMs: number,
    waitMs: number,
    restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  ): Effect.Effect<"turn" | "expired", OperationInProgress> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const line = lines.get(key)
      if (line === undefined) {
        lines.set(key, { holderUntil: now + ttlMs, ttlMs: new Map(), waiting: [] })
        return Effect.succeed("turn" as const)
      }
      const waiter: Waiter = { woken: Deferred.unsafeMake(FiberId.none), granted: false, gone: false }
      line.waiting.push(waiter)
      line.ttlMs.set(waiter, ttlMs)
      const holderExpires = line.holderUntil - now < waitMs
      return restore(Deferred.await(waiter.woken).pipe(Effect.timeout(Math.max(0, Math.min(waitMs, line.holderUntil - now))))).pipe(
        Effect.exit,
        Effect.flatMap((exit): Effect.Effect<"turn" | "expired", OperationInProgress> => {
          const interrupted = Exit.isFailure(exit) && Exit.isInterrupted(exit)
          // However the wait ended, a turn granted meanwhile is this caller's: to use, or to pass on when
          // the caller was interrupted.
          if (waiter.granted) return interrupted ? Effect.zipRight(pass(key), Effect.interrupt) : Effect.succeed("turn")
          waiter.gone = true
          if (interrupted) return Effect.interrupt
          return holderExpires ? Effect.succeed("expired") : Effect.fail(new OperationInProgress())
        })
      )
    })

  return {
    withLock: (key, effect, options) =>
      Effect.flatMap(FiberRef.get(held), (keys) =>
        keys.has(key)
          ? effect
          : Effect.uninterruptibleMask((restore) =>
            Effect.flatMap(Clock.currentTimeMillis, (started) => {
              const ttlMs = toTtl(options?.ttlMs ?? DEFAULT_LOCK_TTL_MS)
              // Counted once per take: the waits in line and at the store together.
              const taken = <X, Y>(exit: Exit.Exit<X, Y>): Effect.Effect<void> =>
                Effect.flatMap(Clock.currentTimeMillis, (now) =>
                  userLockTaken(
                    now - started,
                    Exit.isFailure(exit) && Option.exists(Cause.failureOption(exit.cause), (e) => e instanceof OperationInProgress)
                  ))
              return takeTurn(key, ttlMs, MAX_WAIT_MS, restore).pipe(
                Effect.onError((cause) => taken(Exit.failCause(cause))),
                Effect.flatMap((place) => {
                  const token = `${tokenPrefix}:${++tokensIssued}`
                  const attempt = backend.tryAcquire(key, token, ttlMs)
                  // Waiting at the store: only when the lock is held elsewhere (another instance, or a
                  // hung holder here), for what is left of MAX_WAIT_MS.
                  const wait = Effect.flatMap(Clock.currentTimeMillis, (now) =>
                    attempt.pipe(
                      Effect.filterOrFail((acquired) => acquired, () => new Busy()),
                      Effect.retry(POLL.pipe(Schedule.upTo(Math.max(0, started + MAX_WAIT_MS - now)))),
                      Effect.catchTag("Busy", () => new OperationInProgress())
                    ))
                  // Harmless when the lock was never taken: it deletes only a lock holding this token.
                  const release = place === "turn"
                    ? Effect.zipRight(backend.release(key, token), pass(key))
                    : backend.release(key, token)
                  return restore(
                    Effect.flatMap(attempt, (acquired) => acquired ? Effect.void : wait).pipe(
                      Effect.onExit(taken),
                      Effect.zipRight(Effect.locally(effect, held, new Set([...keys, key])))
                    )
                  ).pipe(Effect.ensuring(release))
                })
              )
            })
          ).pipe(Effect.withSpan("UserLock.withLock", { attributes: { key }, captureStackTrace: false })))
  }
}

const makeMemory = Effect.sync((): UserLockShape => {
  const locks = new Map<string, { token: string; expiresAt: number }>()
  return fromBackend({
    tryAcquire: (key, token, ttlMs) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const held = locks.get(key)
        if (held !== undefined && held.expiresAt > now) return false
        locks.set(key, { token, expiresAt: now + ttlMs })
        return true
      }),
    release: (key, token) =>
      Effect.sync(() => {
        if (locks.get(key)?.token === token) locks.delete(key)
      })
  })
})

const RELEASE_SCRIPT = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`

const makeRedis = Effect.map(RedisConnection, ({ client, prefix, script }) => {
  const k = (key: string) => `${prefix}lock:${key}`
  const releaseIfHeld = script("lockRelease", RELEASE_SCRIPT)
  return fromBackend({
    tryAcquire: (key, token, ttlMs) =>
      storeCall(() => client.set(k(key), token, "PX", ttlMs, "NX")).pipe(Effect.map((reply) => reply === "OK")),
    // Should Redis be gone, the lock expires by its time to live.
    release: (key, token) => Effect.ignore(storeCall(() => releaseIfHeld([k(key)], [token])))
  })
})

export class UserLock extends Context.Tag("app/UserLock")<UserLock, UserLockShape>() {
  static readonly memory: Layer.Layer<UserLock> = Layer.effect(this, makeMemory)
  static readonly redis: Layer.Layer<UserLock, never, RedisConnection> = Layer.effect(this, makeRedis)
}
