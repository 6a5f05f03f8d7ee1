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
import { Clock, Context, Effect, FiberRef, Layer, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { OperationInProgress, type ServiceUnavailable } from "../../schema/Errors"
import { userLockWait } from "../../services/AppMetrics"
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
const RETRY = Schedule.spaced("50 millis").pipe(Schedule.upTo("5 seconds"))

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

const fromBackend = (backend: LockBackend): UserLockShape => ({
  withLock: (key, effect, options) =>
    Effect.flatMap(FiberRef.get(held), (keys) =>
      keys.has(key)
        ? effect
        : Effect.suspend(() => {
          const token = `${tokenPrefix}:${++tokensIssued}`
          const attempt = backend.tryAcquire(key, token, toTtl(options?.ttlMs ?? DEFAULT_LOCK_TTL_MS))
          // Waiting (only when the first attempt finds the lock taken) stays interruptible. The release
          // is harmless when the lock was never taken: it deletes only a lock holding this token.
          const wait = attempt.pipe(
            Effect.filterOrFail((acquired) => acquired, () => new Busy()),
            Effect.retry(RETRY),
            Effect.catchTag("Busy", () => new OperationInProgress())
          )
          return Effect.flatMap(attempt, (acquired) => acquired ? Effect.void : wait).pipe(
            userLockWait,
            Effect.zipRight(Effect.locally(effect, held, new Set([...keys, key]))),
            Effect.ensuring(backend.release(key, token)),
            Effect.withSpan("UserLock.withLock", { attributes: { key }, captureStackTrace: false })
          )
        }))
})

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
