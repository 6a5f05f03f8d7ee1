/**
 * All the stores at once: backed by Redis when one is configured (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES), else by in-memory twins that hold
 * for one process only (docs/architecture.md#stores). `StoreHealth` answers readiness checks.
 */
import { Context, Effect, Layer } from "effect"
import type { StartupError } from "../AppConfig"
import { ServiceUnavailable } from "../../schema/platform/Errors"
import { Broadcast } from "./Broadcast"
import { KeyValue } from "./KeyValue"
import { RateCounter } from "./RateCounter"
import { RedisConnection } from "./RedisConnection"
import type { RedisTarget } from "./RedisTarget"
import { UserLock } from "./UserLock"

interface StoreHealthShape {
  /** Succeeds when the store answers promptly. */
  readonly check: Effect.Effect<void, ServiceUnavailable>
}

export class StoreHealth extends Context.Tag("app/StoreHealth")<StoreHealth, StoreHealthShape>() {
  static readonly memory: Layer.Layer<StoreHealth> = Layer.succeed(this, { check: Effect.void })
  static readonly redis: Layer.Layer<StoreHealth, never, RedisConnection> = Layer.effect(
    this,
    Effect.map(RedisConnection, ({ client }) => ({
      check: Effect.tryPromise(() => client.ping()).pipe(
        Effect.timeout("1 second"),
        Effect.mapError(() => new ServiceUnavailable({ message: "Service unavailable: redis" })),
        Effect.asVoid,
        Effect.withSpan("StoreHealth.check")
      )
    }))
  )
}

export type StoreServices = KeyValue | UserLock | RateCounter | Broadcast | StoreHealth

export const Stores = {
  memory: Layer.mergeAll(KeyValue.memory, UserLock.memory, RateCounter.memory, Broadcast.memory, StoreHealth.memory),
  redis: (target: RedisTarget, prefix: string): Layer.Layer<StoreServices, StartupError> =>
    Layer.mergeAll(KeyValue.redis, UserLock.redis, RateCounter.redis, Broadcast.redis, StoreHealth.redis).pipe(
      Layer.provide(RedisConnection.layer(target, prefix))
    )
} as const
