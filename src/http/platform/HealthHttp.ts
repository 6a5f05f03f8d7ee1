/**
 * Liveness always answers; readiness checks the database and Redis, each within a second, and is 503
 * once shutdown has begun.
 */
import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Option } from "effect"
import { AppConfig } from "../../layers/AppConfig"
import { Lifecycle } from "../../layers/Lifecycle"
import { StoreHealth } from "../../layers/stores/Stores"
import { ServiceUnavailable } from "../../schema/platform/Errors"
import { Api } from "../Api"
import { buildOnly } from "./RequestContext"

const CHECK_TIMEOUT = Duration.seconds(1)

export const HealthLive = HttpApiBuilder.group(Api, "health", Effect.fnUntraced(function*(handlers) {
  const sql = yield* SqlClient.SqlClient
  const stores = yield* StoreHealth
  const lifecycle = yield* Lifecycle
  const config = yield* AppConfig
  const redisKind = Option.isSome(config.redis) ? "up" as const : "in-memory" as const
  // docs/rules.md#jurisdiction: named when one applies, absent under NONE.
  const jurisdiction = config.jurisdiction === "BR" ? { jurisdiction: "BR" as const } : {}

  const database = sql`SELECT 1`.pipe(
    Effect.timeout(CHECK_TIMEOUT),
    Effect.mapError(() => new ServiceUnavailable({ message: "Service unavailable: database" }))
  )
  const redis = stores.check.pipe(
    Effect.timeout(CHECK_TIMEOUT),
    Effect.mapError(() => new ServiceUnavailable({ message: "Service unavailable: redis" }))
  )

  return handlers
    .handle("health", () => Effect.succeed({ status: "ok" as const, ...jurisdiction }))
    .handle("ready", () =>
      Effect.flatMap(lifecycle.draining, (draining) =>
        draining
          ? Effect.fail(new ServiceUnavailable({ message: "Service unavailable: shutting down" }))
          : database.pipe(
            Effect.zipRight(redis),
            Effect.map(() => ({
              status: "ready" as const,
              checks: { database: "up" as const, redis: redisKind },
              ...jurisdiction
            }))
          )))
})).pipe(buildOnly([AppConfig, SqlClient.SqlClient, StoreHealth, Lifecycle]))
