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

/** One hit on the counter `name` of `subject` (a user, an address) in windows of `windowMs`. */
interface RateHit {
  readonly subject: string
  readonly name: string
  readonly windowMs: number
}

const counterKey = ({ name, subject, windowMs }: RateHit, index: number) =>
  // The subject in braces: a Redis Cluster hash tag, which puts all of a subject's counters on one slot.
  `{${subject}}:${name}:${windowMs}:${index}`

export interface RateCounterShape {
  /** Counts each hit (all of one request's limits in one store call, one script per subject); the counts in the same order. */
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
        return hits.map((hit) => {
          const { index, resetAtMs } = windowOf(now, hit.windowMs)
          const id = counterKey(hit, index)
          const count = (counters.get(id)?.count ?? 0) + 1
          counters.set(id, { count, resetAtMs })
          return { count, resetAtMs }
        })
      })
  }
})

// Each key expires with its window (plus a second for clock skew between instances); set on the first
// hit only, so a window's key never outlives it by more than that. One script per subject: a subject's
// counters share a hash slot (counterKey), while one request's address and user may be on two nodes of a
// cluster; the calls of one request still leave in one write (RedisConnection), one per cluster node at most.
const HITS_SCRIPT = `local counts = {}
for i, key in ipairs(KEYS) do
  local n = redis.call("INCR", key)
  if n == 1 then redis.call("PEXPIRE", key, ARGV[i]) end
  counts[i] = n
end
return counts`

/** The most keys one script call counts (a request has one or two limits per subject); more go in several calls. */
const MAX_KEYS_PER_CALL = 4

const makeRedis = Effect.map(RedisConnection, ({ prefix, script }): RateCounterShape => {
  // One command per key count (each with its keys first, for a cluster's routing), all defined at the start.
  const hitsOf = Array.from({ length: MAX_KEYS_PER_CALL }, (_, i) => script(`rateHits${i + 1}`, HITS_SCRIPT, i + 1))
  return {
    hitAll: (hits) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const windows = hits.map((hit) => ({ hit, ...windowOf(now, hit.windowMs) }))
        // The hits' indexes, by subject, at most MAX_KEYS_PER_CALL together.
        const groups: Array<Array<number>> = []
        const open = new Map<string, Array<number>>()
        windows.forEach(({ hit }, i) => {
          const group = open.get(hit.subject)
          if (group !== undefined && group.length < MAX_KEYS_PER_CALL) return void group.push(i)
          open.set(hit.subject, groups[groups.push([i]) - 1]!)
        })
        return storeCall(() =>
          Promise.all(groups.map((group) =>
            hitsOf[group.length - 1]!(
              group.map((i) => `${prefix}rate:${counterKey(windows[i]!.hit, windows[i]!.index)}`),
              group.map((i) => toTtl(windows[i]!.resetAtMs - now + 1000))
            ) as Promise<ReadonlyArray<number>>
          ))
        ).pipe(Effect.map((counted) => {
          const counts = new Array<number>(windows.length)
          groups.forEach((group, g) => group.forEach((i, k) => (counts[i] = Number(counted[g]![k]))))
          return windows.map(({ resetAtMs }, i) => ({ count: counts[i]!, resetAtMs }))
        }))
      })
  }
})

export class RateCounter extends Context.Tag("app/RateCounter")<RateCounter, RateCounterShape>() {
  static readonly memory: Layer.Layer<RateCounter> = Layer.effect(this, makeMemory)
  static readonly redis: Layer.Layer<RateCounter, never, RedisConnection> = Layer.effect(this, makeRedis)
}
