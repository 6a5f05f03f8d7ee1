/**
 * A fresh, migrated database for one test file, both ways the service runs (docs/architecture.md#tests):
 * with DATABASE_URL, a new PostgreSQL database created on that server and dropped afterwards;
 * without it, an embedded PGlite started from the run's empty-cluster dump.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { readFile } from "node:fs/promises"
import { inject } from "vitest"
import { DatabaseLive, type DatabasePool } from "../../src/layers/Database"
import { MigrationsLive } from "../../src/layers/Migrations"
import { NodeContext } from "@effect/platform-node"

export const usingRealPostgres = process.env.DATABASE_URL !== undefined

/** A new database on the server of DATABASE_URL; dropped when the scope closes. */
export const freshPostgresUrl = Effect.gen(function*() {
  const adminUrl = new URL(process.env.DATABASE_URL!)
  const name = `gp_test_${randomBytes(6).toString("hex")}`
  const admin = PgClient.layer({ url: Redacted.make(adminUrl.toString()), maxConnections: 1 })
  const run = (statement: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement)).pipe(Effect.provide(admin), Effect.orDie)
  yield* Effect.acquireRelease(
    run(`CREATE DATABASE "${name}"`),
    () => run(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
  )
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return Redacted.make(url.toString())
})

/** An unmigrated database of either kind. */
export const EmptyTestDatabase: Layer.Layer<SqlClient.SqlClient | PgClient.PgClient | DatabasePool> = usingRealPostgres
  ? Layer.unwrapScoped(Effect.map(freshPostgresUrl, (url) => DatabaseLive({ _tag: "Postgres", url, maxConnections: 20 })))
    .pipe(Layer.orDie)
  : Layer.unwrapEffect(
    Effect.promise(() => readFile(inject("pgliteDump"))).pipe(
      Effect.map((dump) => DatabaseLive({ _tag: "PGlite", loadDataDir: new Blob([dump]) }))
    )
  ).pipe(Layer.orDie)

/** A migrated database of either kind. */
export const TestDatabase: Layer.Layer<SqlClient.SqlClient | PgClient.PgClient | DatabasePool> = MigrationsLive.pipe(
  Layer.provide(NodeContext.layer),
  Layer.provideMerge(EmptyTestDatabase)
)
