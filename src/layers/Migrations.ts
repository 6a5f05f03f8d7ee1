/**
 * Schema migrations: the plain `.sql` files of `sql/`, named `NNNN_name.sql`, applied in order at
 * start-up and recorded in `schema_migrations`, each at most once.
 *
 * Two instances may start at once: the whole run holds a transaction-scoped advisory lock, so the
 * second waits for the first and then finds nothing left to do.
 *
 * `MIGRATE_ON_START=false` leaves them to the operator (`npm run cli -- migrate`, docs/operations.md#upgrades): the
 * start then refuses while any is pending. `npm run cli -- migrate status` shows what is applied and pending.
 */
import { FileSystem, Path } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import { NodeContext } from "@effect/platform-node"
import { StartupError } from "./AppConfig"
import { Effect, Layer, Schema } from "effect"
import { createHash } from "node:crypto"
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

/** A migration file of `sql/` as it is on disk now. */
export interface MigrationFile {
  readonly id: number
  /** Without the number and `.sql`: what the migrations table records. */
  readonly name: string
  readonly file: string
  readonly text: string
  /** SHA-256 of the file's bytes, hexadecimal. */
  readonly sha256: string
}

/** The files of `sql/` named `NNNN_name.sql`, in order. */
export const readMigrationFiles = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const names = (yield* fs.readDirectory(migrationsDirectory)).filter((name) => /^\d{4}_[\w-]+\.sql$/.test(name))
  const files: Array<MigrationFile> = []
  for (const file of names.sort()) {
    const bytes = yield* fs.readFile(path.join(migrationsDirectory, file))
    files.push({
      id: Number(file.slice(0, 4)),
      name: file.slice(5, -".sql".length),
      file,
      text: new TextDecoder().decode(bytes),
      sha256: createHash("sha256").update(bytes).digest("hex")
    })
  }
  return files
})

/** Reads `sql/` into `{ "0001_name": <effect running that file> }`. */
export const loadSqlFiles = Effect.map(readMigrationFiles, (files) => {
  const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {}
  for (const { file, text } of files) {
    // No parameters: pg sends it as a simple query, so a file may hold many statements.
    migrations[file.replace(/\.sql$/, "")] = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(text))
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

const AppliedRow = Schema.Struct({ migrationId: Schema.Number, name: Schema.String, createdAt: Schema.DateFromSelf })

/**
 * What is applied (from the migrations table, with each file's checksum as it is on disk now) and what is
 * pending (files numbered above the last applied one: the migrator applies exactly those). The table records
 * no checksum of what it applied, so a file edited since cannot be told from here: `checksumsStored` is false.
 */
export const migrationStatus = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const files = yield* readMigrationFiles
  const [{ present }] = yield* sql<{ present: boolean }>`SELECT to_regclass(${MIGRATIONS_TABLE}) IS NOT NULL AS present`
  const rows = present
    ? yield* Schema.decodeUnknown(Schema.Array(AppliedRow))(
      yield* sql`SELECT migration_id, name, created_at FROM ${sql(MIGRATIONS_TABLE)} ORDER BY migration_id`
    ).pipe(Effect.orDie)
    : []
  const latest = rows.reduce((max, row) => Math.max(max, row.migrationId), 0)
  const applied = rows.map((row) => {
    const file = files.find((f) => f.id === row.migrationId)
    return {
      id: row.migrationId,
      name: row.name,
      appliedAt: row.createdAt,
      /** The file on disk now; null when it is gone. */
      file: file?.file ?? null,
      sha256: file?.sha256 ?? null,
      /** The file on disk is named otherwise than what was applied. */
      renamed: file !== undefined && file.name !== row.name
    }
  })
  const pending = files.filter((f) => f.id > latest).map(({ file, id, name, sha256 }) => ({ id, name, file, sha256 }))
  return { checksumsStored: false as const, applied, pending }
}).pipe(Effect.withSpan("Migrations.status"))

/** The start refused (MIGRATE_ON_START=false): the pending migrations named, and the command that applies them. */
export const pendingRefusal = (pending: ReadonlyArray<{ readonly file: string }>) =>
  `${pending.length} pending migration${pending.length === 1 ? "" : "s"} (${pending.map((p) => p.file).join(", ")}) ` +
  "and MIGRATE_ON_START=false: run `npm run cli -- migrate` first"

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

/**
 * What opening the database does about migrations: apply the pending ones (`npm start`'s default), refuse with a
 * StartupError while any is pending (MIGRATE_ON_START=false), or nothing (`npm run cli -- migrate`, which does it
 * itself).
 */
export type MigrationsOnOpen = "apply" | "require-none-pending" | "leave"

export const migrationsOnOpen = (policy: MigrationsOnOpen): Layer.Layer<never, StartupError, SqlClient.SqlClient> =>
  policy === "apply"
    ? MigrationsLive.pipe(Layer.provide(NodeContext.layer))
    : policy === "leave"
    ? Layer.empty
    : Layer.effectDiscard(
      Effect.flatMap(migrationStatus, ({ pending }) =>
        pending.length === 0 ? Effect.void : Effect.fail(new StartupError({ message: pendingRefusal(pending) }))).pipe(
          Effect.catchAll((error) =>
            error instanceof StartupError
              ? Effect.fail(error)
              : Effect.fail(new StartupError({ message: `Cannot read the migrations: ${error.message}` }))
          ),
          Effect.provide(NodeContext.layer)
        )
    )
