/**
 * The SQL client (docs/rules.md#embedded-defaults): `@effect/sql-pg` against PostgreSQL when DATABASE_URL is set, else
 * against an embedded PGlite database served on a loopback socket, so the code, the SQL and the
 * migrations are the same both ways.
 *
 * PGlite runs one query at a time, so its client pool is exactly one connection. Rows come back with
 * camelCase keys; BIGINT and NUMERIC stay strings and are decoded by each repository's row schema.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted, String } from "effect"

export type DatabaseSource =
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted; readonly maxConnections?: number }
  | {
    readonly _tag: "PGlite"
    /** Where the data is kept; absent: in memory (tests). */
    readonly dataDir?: string
    /** A dump (PGlite `dumpDataDir`) to start from instead of an empty cluster (tests). */
    readonly loadDataDir?: Blob
  }

const clientOptions = {
  transformResultNames: String.snakeToCamel,
  transformQueryNames: String.camelToSnake,
  applicationName: "game-platform"
} as const

/** Starts PGlite and a loopback socket server in front of it; both are closed with the scope. */
export const pgliteSocket = (options: { readonly dataDir?: string; readonly loadDataDir?: Blob }) =>
  Effect.gen(function*() {
    const db = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const db = new PGlite(options.dataDir, options.loadDataDir ? { loadDataDir: options.loadDataDir } : {})
        await db.waitReady
        return db
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 })
    yield* Effect.acquireRelease(
      Effect.promise(() => server.start()),
      () => Effect.promise(() => server.stop())
    )
    const [host, port] = server.getServerConn().split(":")
    return { db, host: host!, port: Number(port) }
  })

export const DatabaseLive = (
  source: DatabaseSource
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
  source._tag === "Postgres"
    ? PgClient.layer({ ...clientOptions, url: source.url, maxConnections: source.maxConnections ?? 10 })
    : Layer.unwrapScoped(
      Effect.map(pgliteSocket(source), ({ host, port }) =>
        PgClient.layer({
          ...clientOptions,
          host,
          port,
          username: "postgres",
          database: "postgres",
          maxConnections: 1
        }))
    )
