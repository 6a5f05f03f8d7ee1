/**
 * Schema migrations: the plain `.sql` files of `sql/`, named `NNNN_name.sql`, applied in order at
 * start-up and recorded in `schema_migrations`, each at most once.
 *
 * Two instances may start at once: the whole run holds a transaction-scoped advisory lock, so the
 * second waits for the first and then finds nothing left to do.
 */
import { FileSystem, Path } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import { Effect, Layer } from "effect"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const MIGRATIONS_TABLE = "schema_migrations"
/** Arbitrary constant naming this service's migration lock among advisory locks. */
const MIGRATION_LOCK_KEY = 727_001

/**
 * The project's `sql/` folder: found from this module up, so that it is the same folder whether the
 * service runs from src/ (tsx, tests) or from its bundle in dist/.
 */
export const migrationsDirectory = ((): string => {
  for (let dir = new URL(".", import.meta.url); ; dir = new URL("..", dir)) {
    const candidate = fileURLToPath(new URL("sql/", dir))
    if (existsSync(join(candidate, "0001_users_and_ledger.sql"))) return candidate
    if (dir.pathname === "/") throw new Error(`No sql/ folder above ${import.meta.url}`)
  }
})()

/** Reads `sql/` into `{ "0001_name": <effect running that file> }`. */
export const loadSqlFiles = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const names = (yield* fs.readDirectory(migrationsDirectory)).filter((name) => /^\d{4}_[\w-]+\.sql$/.test(name))
  const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {}
  for (const name of names.sort()) {
    const text = yield* fs.readFileString(path.join(migrationsDirectory, name))
    // No parameters: pg sends it as a simple query, so a file may hold many statements.
    migrations[name.replace(/\.sql$/, "")] = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
  }
  return migrations
})

const migrate = Migrator.make({})

/** Applies every pending migration; returns the ones applied by this call. */
export const runMigrations = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const migrations = yield* loadSqlFiles
  return yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`
    // The migrator probes for its table with a query that fails when absent, which would abort this
    // transaction; creating it here (same shape) keeps the probe successful.
    yield* sql`CREATE TABLE IF NOT EXISTS ${sql(MIGRATIONS_TABLE)} (
      migration_id integer PRIMARY KEY,
      created_at timestamptz NOT NULL DEFAULT now(),
      name text NOT NULL
    )`
    return yield* migrate({ loader: Migrator.fromRecord(migrations), table: MIGRATIONS_TABLE })
  }))
}).pipe(Effect.withSpan("Migrations.run"))

/** Runs the migrations when the layer is built, logging what was applied. */
export const MigrationsLive = Layer.effectDiscard(
  runMigrations.pipe(
    Effect.tap((applied) =>
      applied.length > 0
        ? Effect.logInfo(`Applied migrations: ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`)
        : Effect.logDebug("Database schema is up to date")
    ),
    Effect.orDie
  )
)
