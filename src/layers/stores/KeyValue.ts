/**
 * Expiring key-value entries and small sets (e.g. the session ids of a user), in Redis or in memory.
 * A Redis outage is ServiceUnavailable (src/layers/Failures.ts); the in-memory twin never fails.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import type { ServiceUnavailable } from "../../schema/platform/Errors"
import { sentNow, storeCall } from "../Failures"
import { RedisConnection } from "./RedisConnection"

interface KeyValueShape {
  readonly get: (key: string) => Effect.Effect<Option.Option<string>, ServiceUnavailable>
  /**
   * A session's sliding refresh (Sessions) in one command: reads the JSON object at `key` and, when its
   * `expiresAt` is after `stamp.now` and its `deviceId` is absent or `stamp.deviceId`, sets its `lastActivity`
   * to `stamp.now`, its `expiresAt` to `stamp.expiresAt` and the key's time to live to `ttlMs`. The value as it
   * was, and whether it was slid; none when the key is absent. Times are ISO 8601 strings (Date#toISOString).
   * Sent when the outer effect runs, answered when the inner one is awaited: a caller can send it, send other
   * commands in the same round trip, and wait for it later, without a fiber of its own.
   */
  readonly slide: (
    key: string,
    ttlMs: number,
    stamp: SlideStamp
  ) => Effect.Effect<Effect.Effect<Option.Option<Slid>, ServiceUnavailable>>
  readonly set: (key: string, value: string, ttlMs: number) => Effect.Effect<void, ServiceUnavailable>
  /** Sets the key only when it is absent (SET NX); true when this call set it. */
  readonly setIfAbsent: (key: string, value: string, ttlMs: number) => Effect.Effect<boolean, ServiceUnavailable>
  /** Sets the key only when it is there (SET XX), so a write cannot bring back a deleted key; true when set. */
  readonly setIfPresent: (key: string, value: string, ttlMs: number) => Effect.Effect<boolean, ServiceUnavailable>
  /** True when the key existed. */
  readonly delete: (key: string) => Effect.Effect<boolean, ServiceUnavailable>
  /** Restarts the key's time to live; false when the key is absent. */
  readonly touch: (key: string, ttlMs: number) => Effect.Effect<boolean, ServiceUnavailable>
  /** Sets have no time to live unless touched; an emptied set disappears. True when newly added. */
  readonly setAdd: (key: string, member: string) => Effect.Effect<boolean, ServiceUnavailable>
  /** True when the member was there. */
  readonly setRemove: (key: string, member: string) => Effect.Effect<boolean, ServiceUnavailable>
  readonly setMembers: (key: string) => Effect.Effect<ReadonlyArray<string>, ServiceUnavailable>
}

export interface SlideStamp {
  readonly now: string
  readonly expiresAt: string
  readonly deviceId: string | undefined
}

export interface Slid {
  readonly value: string
  readonly slid: boolean
}

/** Redis accepts only positive integer milliseconds. */
export const toTtl = (ttlMs: number): number => Math.max(1, Math.ceil(ttlMs))

interface Entry {
  value: string | Set<string>
  expiresAt: number | undefined
}

const SWEEP_INTERVAL_MS = 60_000

/** Single process; time comes from Effect's Clock so that tests drive expiry with TestClock. */
const makeMemory = Effect.sync((): KeyValueShape => {
  const entries = new Map<string, Entry>()
  let nextSweep = 0

  // Expired entries are dropped when read, and all of them at most once a minute on writes.
  const live = (key: string, now: number): Entry | undefined => {
    const entry = entries.get(key)
    if (entry?.expiresAt !== undefined && entry.expiresAt <= now) {
      entries.delete(key)
      return undefined
    }
    return entry
  }
  const sweep = (now: number) => {
    if (now < nextSweep) return
    nextSweep = now + SWEEP_INTERVAL_MS
    for (const key of entries.keys()) live(key, now)
  }
  const withNow = <A>(f: (now: number) => A): Effect.Effect<A> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => f(now)))
  const wrongType = (key: string) => Effect.dieMessage(`KeyValue: ${key} holds a value of another type`)
  const setAt = (key: string, now: number): Set<string> | undefined | "wrong type" => {
    const entry = live(key, now)
    if (entry === undefined) return undefined
    return typeof entry.value === "string" ? "wrong type" : entry.value
  }

  return {
    get: (key) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const entry = live(key, now)
        if (entry === undefined) return Effect.succeed(Option.none())
        return typeof entry.value === "string" ? Effect.succeed(Option.some(entry.value)) : wrongType(key)
      }),
    slide: (key, ttlMs, stamp) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const entry = live(key, now)
        if (entry === undefined) return Effect.succeed(Option.none())
        const value = entry.value
        if (typeof value !== "string") return wrongType(key)
        const stored = JSON.parse(value) as { expiresAt?: unknown; deviceId?: unknown }
        const slid = typeof stored.expiresAt === "string" && stored.expiresAt > stamp.now &&
          (stored.deviceId === undefined || stored.deviceId === stamp.deviceId)
        if (slid) {
          entry.value = JSON.stringify({ ...stored, lastActivity: stamp.now, expiresAt: stamp.expiresAt })
          entry.expiresAt = now + toTtl(ttlMs)
        }
        return Effect.succeed(Option.some({ value, slid }))
      }),
    set: (key, value, ttlMs) =>
      withNow((now) => {
        sweep(now)
        entries.set(key, { value, expiresAt: now + toTtl(ttlMs) })
      }),
    setIfAbsent: (key, value, ttlMs) =>
      withNow((now) => {
        sweep(now)
        if (live(key, now) !== undefined) return false
        entries.set(key, { value, expiresAt: now + toTtl(ttlMs) })
        return true
      }),
    setIfPresent: (key, value, ttlMs) =>
      withNow((now) => {
        if (live(key, now) === undefined) return false
        entries.set(key, { value, expiresAt: now + toTtl(ttlMs) })
        return true
      }),
    delete: (key) => withNow((now) => live(key, now) !== undefined && entries.delete(key)),
    touch: (key, ttlMs) =>
      withNow((now) => {
        const entry = live(key, now)
        if (entry === undefined) return false
        entry.expiresAt = now + toTtl(ttlMs)
        return true
      }),
    setAdd: (key, member) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        sweep(now)
        const set = setAt(key, now)
        if (set === "wrong type") return wrongType(key)
        if (set === undefined) {
          entries.set(key, { value: new Set([member]), expiresAt: undefined })
          return Effect.succeed(true)
        }
        const added = !set.has(member)
        set.add(member)
        return Effect.succeed(added)
      }),
    setRemove: (key, member) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const set = setAt(key, now)
        if (set === "wrong type") return wrongType(key)
        const removed = set?.delete(member) ?? false
        if (set?.size === 0) entries.delete(key)
        return Effect.succeed(removed)
      }),
    setMembers: (key) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const set = setAt(key, now)
        if (set === "wrong type") return wrongType(key)
        return Effect.succeed(set === undefined ? [] : [...set])
      })
  }
})

// The fields are found as our own JSON.stringify writes them: a top-level field is `"name":` outside any string
// (inside one, a quote is escaped), and the device is compared as its JSON text, escapes included.
const SLIDE_SCRIPT = `local value = redis.call("GET", KEYS[1])
if not value then return false end
local expiresAt = string.match(value, '"expiresAt":"([^"]*)"')
if expiresAt == nil or expiresAt <= ARGV[1] then return {value, 0} end
if string.find(value, '"deviceId":', 1, true) and not string.find(value, '"deviceId":' .. ARGV[4], 1, true) then
  return {value, 0}
end
local slid = string.gsub(value, '"lastActivity":"[^"]*"', function() return '"lastActivity":"' .. ARGV[1] .. '"' end, 1)
slid = string.gsub(slid, '"expiresAt":"[^"]*"', function() return '"expiresAt":"' .. ARGV[2] .. '"' end, 1)
redis.call("SET", KEYS[1], slid, "PX", ARGV[3])
return {value, 1}`

const makeRedis = Effect.map(RedisConnection, ({ client, prefix, script }): KeyValueShape => {
  const k = (key: string) => `${prefix}kv:${key}`
  const slideScript = script("sessionSlide", SLIDE_SCRIPT)
  // No span per command: a span costs more CPU than the command (docs/decisions.md "Performance of the
  // hot paths"); a request's trace shows its store time inside the service spans.
  const run = storeCall
  return {
    get: (key) => run(() => client.get(k(key))).pipe(Effect.map(Option.fromNullable)),
    slide: (key, ttlMs, { deviceId, expiresAt, now }) =>
      Effect.sync(() =>
        sentNow(() =>
          slideScript(k(key), [now, expiresAt, toTtl(ttlMs), deviceId === undefined ? "null" : JSON.stringify(deviceId)]) as Promise<
            [string, number] | null
          >
        ).pipe(Effect.map((reply) => Option.map(Option.fromNullable(reply), ([value, slid]) => ({ value, slid: slid === 1 }))))
      ),
    set: (key, value, ttlMs) => Effect.asVoid(run(() => client.set(k(key), value, "PX", toTtl(ttlMs)))),
    setIfAbsent: (key, value, ttlMs) =>
      run(() => client.set(k(key), value, "PX", toTtl(ttlMs), "NX")).pipe(
        Effect.map((reply) => reply === "OK")
      ),
    setIfPresent: (key, value, ttlMs) =>
      run(() => client.set(k(key), value, "PX", toTtl(ttlMs), "XX")).pipe(
        Effect.map((reply) => reply === "OK")
      ),
    delete: (key) => run(() => client.del(k(key))).pipe(Effect.map((n) => n > 0)),
    touch: (key, ttlMs) => run(() => client.pexpire(k(key), toTtl(ttlMs))).pipe(Effect.map((n) => n === 1)),
    setAdd: (key, member) => run(() => client.sadd(k(key), member)).pipe(Effect.map((n) => n === 1)),
    setRemove: (key, member) => run(() => client.srem(k(key), member)).pipe(Effect.map((n) => n === 1)),
    setMembers: (key) => run(() => client.smembers(k(key)))
  }
})

export class KeyValue extends Context.Tag("app/KeyValue")<KeyValue, KeyValueShape>() {
  static readonly memory: Layer.Layer<KeyValue> = Layer.effect(this, makeMemory)
  static readonly redis: Layer.Layer<KeyValue, never, RedisConnection> = Layer.effect(this, makeRedis)
}
