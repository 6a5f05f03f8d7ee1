/**
 * The infrastructure of the service: the database and the stores, chosen from the configuration
 * (docs/rules.md#embedded-defaults): PostgreSQL or PGlite in DATA_DIR, Redis or in-memory stores; with
 * randomness, the process lifecycle and the metrics export.
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { AppConfig, StartupError } from "./AppConfig"
import { DatabaseLive } from "./Database"
import { Lifecycle } from "./Lifecycle"
import { MigrationsLive } from "./Migrations"
import { MetricsExport } from "./Observability"
import { Randomness } from "./Randomness"
import { Stores } from "./stores/Stores"

/** The database, migrated before anything else uses it. */
export const DatabaseFromConfig = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isNone(config.databaseUrl)) {
      // PGlite creates its own directory, but not the missing parents of DATA_DIR.
      yield* Effect.try({
        try: () => mkdirSync(config.dataDir, { recursive: true }),
        catch: (cause) => new StartupError({ message: `Cannot create DATA_DIR ${config.dataDir}: ${String(cause)}` })
      })
    }
    const database = Option.match(config.databaseUrl, {
      onNone: () => DatabaseLive({ _tag: "PGlite", dataDir: join(config.dataDir, "pglite") }),
      onSome: (url) => DatabaseLive({ _tag: "Postgres", url })
    })
    yield* Option.match(config.databaseUrl, {
      onNone: () => Effect.logInfo(`Database: embedded PGlite in ${join(config.dataDir, "pglite")}`),
      onSome: () => Effect.logInfo("Database: PostgreSQL (DATABASE_URL)")
    })
    return MigrationsLive.pipe(Layer.provideMerge(database), Layer.provide(NodeContext.layer))
  })
).pipe(
  // An unreachable database or a failed migration stops the start with one line saying why.
  Layer.mapError((error) => {
    if (error instanceof StartupError) return error
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ""
    return new StartupError({ message: `Database: ${error.message}${cause}` })
  })
)

/** Redis-backed stores, or their in-memory twins (one process only). */
const StoresFromConfig = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    return yield* Option.match(config.redisUrl, {
      onNone: () =>
        Effect.as(
          Effect.logWarning("Redis: REDIS_URL is not set; using in-memory stores (single process only)"),
          Stores.memory
        ),
      onSome: (url) => Effect.as(Effect.logInfo("Redis: REDIS_URL"), Stores.redis(url, config.redisKeyPrefix))
    })
  })
)

export const Infrastructure = Layer.mergeAll(
  DatabaseFromConfig,
  StoresFromConfig,
  Randomness.live,
  Lifecycle.live,
  MetricsExport.prometheus
)
