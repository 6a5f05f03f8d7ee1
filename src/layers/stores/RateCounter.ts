/**
 * Fixed-window counters for rate limits (docs/rules.md#rate-limit-counting). The window is `floor(now / windowMs)` with
 * `now` from Effect's Clock in both stores, so TestClock drives windows in tests; Redis keys carry the
 * window index and only rely on Redis's own expiry for clean-up.
 */
import { Clock, Context, Effect, Layer } from "effect"
import type { ServiceUnavailable } from "../../schema/platform/Errors"
import { storeCall } from "../Failures"
import { toTtl } from "./KeyValue"
import { RedisConnection } from "./RedisConnection"

export interface RateCount {
  /** Hits in the current window, this one included. */
  readonly count: number
  /** When the current window ends, in ms since the epoch. */
  readonly resetAtMs: number
}

/** One hit on the counter `key` in windows of `windowMs`. */
interface RateHit {
  readonly key: string
  readonly windowMs: number
}

export interface RateCounterShape {
  /** Counts each hit (all of one request's limits in one store call); the counts in the same order. */
  readonly hitAll: (hits: ReadonlyArray<RateHit>) => Effect.Effect<ReadonlyArray<RateCount>, ServiceUnavailable>
}

const windowOf = (now: number, windowMs: number) => {
  const index = Math.floor(now / windowMs)
  return { index, resetAtMs: (index + 1) * windowMs }
}

const SWEEP_INTERVAL_MS = 60_000

const makeMemory = Effect.sync((): RateCounterShape => {
  const counters = new Map<string, { count: number; resetAtMs: number }>()
  let nextSweep = 0
  return {
    hitAll: (hits) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        if (now >= nextSweep) {
          nextSweep = now + SWEEP_INTERVAL_MS
          for (const [k, c] of counters) if (c.resetAtMs <= now) counters.delete(k)
        }
        return hits.map(({ key, windowMs }) => {
          const { index, resetAtMs } = windowOf(now, windowMs)
          const id = `${key}:${windowMs}:${index}`
          const count = (counters.get(id)?.count ?? 0) + 1
          counters.set(id, { count, resetAtMs })
          return { count, resetAtMs }
        })
      })
  }
})

// Each key expires with its window (plus a second for clock skew between instances); set on the first
// hit only, so a window's key never outlives it by more than that. One key per script: one request's
// counters (its address's, its user's) are on different hash slots of a cluster, and the calls of one
// request still leave in one write (auto-pipelining), one per cluster node at most.
const HIT_SCRIPT = `local n = redis.call("INCR", KEYS[1])
if n == 1 then redis.call("PEXPIRE", KEYS[1], ARGV[1]) end
return n`

const makeRedis = Effect.map(RedisConnection, ({ prefix, script }): RateCounterShape => {
  const hit = script("rateHit", HIT_SCRIPT)
  return {
    hitAll: (hits) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const windows = hits.map(({ key, windowMs }) => ({ key, windowMs, ...windowOf(now, windowMs) }))
        return storeCall(() =>
          Promise.all(windows.map(({ index, key, resetAtMs, windowMs }) =>
            hit(`${prefix}rate:${key}:${windowMs}:${index}`, [toTtl(resetAtMs - now + 1000)])
          ))
        ).pipe(Effect.map((counts) => windows.map(({ resetAtMs }, i) => ({ count: Number(counts[i]), resetAtMs }))))
      })
  }
})

export class RateCounter extends Context.Tag("app/RateCounter")<RateCounter, RateCounterShape>() {
  static readonly memory: Layer.Layer<RateCounter> = Layer.effect(this, makeMemory)
  static readonly redis: Layer.Layer<RateCounter, never, RedisConnection> = Layer.effect(this, makeRedis)
}
