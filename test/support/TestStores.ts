/**
 * The stores both ways the service runs (docs/architecture.md#tests): with REDIS_URL, Redis under a key prefix
 * of their own (removed when the layer closes), so runs and tests sharing a Redis never meet; without it, the
 * in-memory twins. Tests of behaviour that must hold across instances and on the real store use this.
 */
import { Effect, Layer, Redacted } from "effect"
import { Redis } from "ioredis"
import { randomUUID } from "node:crypto"
import { singleNode } from "../../src/layers/stores/RedisTarget"
import { type StoreServices, Stores } from "../../src/layers/stores/Stores"

export const usingRealRedis = process.env.REDIS_URL !== undefined

/** Deletes every key under `prefix` from the Redis at `url` (what a test run or a benchmark left). */
export const removeRedisKeys = async (url: string, prefix: string) => {
  const redis = new Redis(url)
  for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 })) {
    if (keys.length > 0) await redis.del(...keys)
  }
  await redis.quit()
}

/** A fresh Redis prefix per build, or fresh in-memory stores. */
export const TestStores: Layer.Layer<StoreServices> = usingRealRedis
  ? Layer.unwrapScoped(
    Effect.gen(function*() {
      const url = process.env.REDIS_URL!
      const prefix = `gp-test:${randomUUID()}:`
      yield* Effect.addFinalizer(() => Effect.promise(() => removeRedisKeys(url, prefix)))
      return Stores.redis(singleNode(Redacted.make(url)), prefix).pipe(Layer.orDie)
    })
  )
  : Stores.memory
