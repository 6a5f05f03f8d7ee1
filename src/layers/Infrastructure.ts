/**
 * The infrastructure of the service: the database and the stores, chosen from the configuration
 * (docs/rules.md#embedded-defaults): PostgreSQL or PGlite in DATA_DIR (held by one process,
 * docs/rules.md#embedded-database-owner), Redis or in-memory stores; with
 * randomness, the process lifecycle and the metrics export.
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { AppConfig, StartupError } from "./AppConfig"
import { DatabaseLive } from "./Database"
import { DatabaseInUse, type DatabaseOpener, DataDirLockFailed, holdDataDir } from "./DataDirLock"
import { Lifecycle } from "./Lifecycle"
import { type MigrationsOnOpen, migrationsOnOpen } from "./Migrations"
import { MetricsExport } from "./Observability"
import { Randomness } from "./Randomness"
import { Stores } from "./stores/Stores"
import { targetVariable } from "./stores/RedisTarget"

/** The database the configuration names, as a layer; for the embedded one, DATA_DIR made and held first. */
const chooseDatabase = Effect.fnUntraced(function*(opener: DatabaseOpener) {
  const config = yield* AppConfig
  if (Option.isSome(config.databaseUrl)) {
    yield* Effect.logInfo("Database: PostgreSQL (DATABASE_URL)")
    return DatabaseLive({ _tag: "Postgres", url: config.databaseUrl.value })
  }
  // PGlite creates its own directory, but not the missing parents of DATA_DIR.
  yield* Effect.try({
    try: () => mkdirSync(config.dataDir, { recursive: true }),
    catch: (cause) => new StartupError({ message: `Cannot create DATA_DIR ${config.dataDir}: ${String(cause)}` })
  })
  // Released when this scope closes: after the database, which is opened (later) within it.
  yield* holdDataDir(config.dataDir, opener)
  yield* Effect.logInfo(`Database: embedded PGlite in ${join(config.dataDir, "pglite")}`)
  return DatabaseLive({ _tag: "PGlite", dataDir: join(config.dataDir, "pglite") })
})

/**
 * The database, migrated before anything else uses it (with MIGRATE_ON_START=false: refused while a migration is
 * pending; `migrations: "leave"` for the CLI's own `migrate`). The embedded one is opened by one process at a
 * time (src/layers/DataDirLock.ts): `opener` holds DATA_DIR's lock until the database is closed, and
 * another live holder stops the start with DatabaseInUse before anything is opened. A PostgreSQL
 * server serves many clients: no lock.
 */
export const databaseFromConfig = (opener: DatabaseOpener, migrations?: MigrationsOnOpen) =>
  Layer.unwrapScoped(
    chooseDatabase(opener).pipe(
      Effect.flatMap((database) =>
        Effect.map(AppConfig, (config) =>
          migrationsOnOpen(migrations ?? (config.migrateOnStart ? "apply" : "require-none-pending")).pipe(
            Layer.provideMerge(database),
            Layer.provide(NodeContext.layer)
          ))
      )
    )
  ).pipe(
    // An unreachable database or a failed migration stops the start with one line saying why.
    Layer.mapError((error) => {
      if (error instanceof StartupError || error instanceof DatabaseInUse) return error
      if (error instanceof DataDirLockFailed) return new StartupError({ message: error.message })
      const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ""
      return new StartupError({ message: `Database: ${error.message}${cause}` })
    })
  )

/** The service's database: another process holding the embedded one is a refusal to start, in one line. */
export const DatabaseFromConfig = databaseFromConfig({ _tag: "Service" }).pipe(
  Layer.mapError((error) => error instanceof DatabaseInUse ? new StartupError({ message: error.message }) : error)
)

/** Redis-backed stores, or their in-memory twins (one process only). */
export const StoresFromConfig = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    return yield* Option.match(config.redis, {
      onNone: () =>
        Effect.as(
          Effect.logWarning("Redis: none configured (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES); using in-memory stores (single process only)"),
          Stores.memory
        ),
      onSome: (target) =>
        Effect.as(Effect.logInfo(`Redis: ${targetVariable(target)}`), Stores.redis(target, config.redisKeyPrefix))
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
