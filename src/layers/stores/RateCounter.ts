/**
 * Fixed-window counters for rate limits (DECISIONS D16). The window is `floor(now / windowMs)` with
 * `now` from Effect's Clock in both stores, so TestClock drives windows in tests; Redis keys carry the
 * window index and only rely on Redis's own expiry for clean-up.
 */
import { Clock, Context, Effect, Layer } from "effect"
import type { ServiceUnavailable } from "../../schema/Errors"
import { storeCall } from "../../services/Failures"
import { toTtl } from "./KeyValue"
import { RedisConnection } from "./RedisConnection"

export interface RateCount {
  /** Hits in the current window, this one included. */
  readonly count: number
  /** When the current window ends, in ms since the epoch. */
  readonly resetAtMs: number
}

export interface RateCounterShape {
  readonly hit: (key: string, windowMs: number) => Effect.Effect<RateCount, ServiceUnavailable>
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
    hit: (key, windowMs) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        if (now >= nextSweep) {
          nextSweep = now + SWEEP_INTERVAL_MS
          for (const [k, c] of counters) if (c.resetAtMs <= now) counters.delete(k)
        }
        const { index, resetAtMs } = windowOf(now, windowMs)
        const id = `${key}:${windowMs}:${index}`
        const count = (counters.get(id)?.count ?? 0) + 1
        counters.set(id, { count, resetAtMs })
        return { count, resetAtMs }
      })
  }
})

// The key expires with its window (plus a second for clock skew between instances); set on the first
// hit only, so a window's key never outlives it by more than that.
const HIT_SCRIPT = `local n = redis.call("INCR", KEYS[1])
if n == 1 then redis.call("PEXPIRE", KEYS[1], ARGV[1]) end
return n`

const makeRedis = Effect.map(RedisConnection, ({ client, prefix }): RateCounterShape => ({
  hit: (key, windowMs) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const { index, resetAtMs } = windowOf(now, windowMs)
      return storeCall(() =>
        client.eval(HIT_SCRIPT, 1, `${prefix}rate:${key}:${windowMs}:${index}`, toTtl(resetAtMs - now + 1000))
      ).pipe(Effect.map((count) => ({ count: Number(count), resetAtMs })))
    }).pipe(Effect.withSpan("RateCounter.hit"))
}))

export class RateCounter extends Context.Tag("app/RateCounter")<RateCounter, RateCounterShape>() {
  static readonly memory: Layer.Layer<RateCounter> = Layer.effect(this, makeMemory)
  static readonly redis: Layer.Layer<RateCounter, never, RedisConnection> = Layer.effect(this, makeRedis)
}
