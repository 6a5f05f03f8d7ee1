import { describe, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { Redis } from "ioredis"
import { randomUUID } from "node:crypto"
import { singleNode } from "../../src/layers/stores/RedisTarget"
import { Stores } from "../../src/layers/stores/Stores"
import { storeContract } from "./contract"

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
  const StoresLive = Layer.scopedDiscard(Effect.addFinalizer(() => removeKeys(url!))).pipe(
    Layer.provideMerge(Stores.redis(singleNode(Redacted.make(url!)), prefix))
  )
  layer(StoresLive, { excludeTestServices: true })((it) => {
    // Redis keeps its own time: let real time pass.
    storeContract(it, { advance: (ms) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms))) })
  })
})
