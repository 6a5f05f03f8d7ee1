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
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Redacted, String } from "effect"
import pg from "pg"
import { preparingClient } from "./PreparedStatements"
import { cacheStatementTexts } from "./StatementTexts"

type DatabaseSource =
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted; readonly maxConnections?: number }
  | {
    readonly _tag: "PGlite"
    /** Where the data is kept; absent: in memory (tests). */
    readonly dataDir?: string
    /** A dump (PGlite `dumpDataDir`) to start from instead of an empty cluster (tests). */
    readonly loadDataDir?: Blob
  }

/**
 * Columns' names are turned to camelCase; the JSON inside a column is left as it is (`transformJson: false`): every
 * JSON the statements build or store already has camelCase keys, and the client walking every row's JSON to copy
 * it with the same keys cost ~25 KB and a copy of every object per battle step (docs/decisions.md "JSON columns").
 */
const clientOptions = {
  transformResultNames: String.snakeToCamel,
  transformQueryNames: String.camelToSnake,
  transformJson: false
} as const

/** The connection pool's state right now (for the metrics). */
interface DatabasePoolState {
  readonly max: number
  /** Connections open, idle or serving a query. */
  readonly open: number
  readonly idle: number
  /** Queries waiting for a connection. */
  readonly waiting: number
}

export class DatabasePool extends Context.Tag("app/DatabasePool")<DatabasePool, {
  readonly state: () => DatabasePoolState
}>() {}

const CONNECT_TIMEOUT = Duration.seconds(5)

/**
 * The `pg` pool, made here (as `PgClient.layer` would) so that its state can be read: connected once
 * before the service starts (within 5 s), ended with the scope.
 */
const pgPool = (options: pg.PoolConfig & { readonly max: number }) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        // Idle connections are kept for 5 minutes (pg's default is 10 s): after every lull longer than
        // that, the next burst of requests waited for new connections (~125 openings over 100 ms at the
        // start of bench:vs-pgbench's open loop). TCP keep-alive finds connections a network dropped.
        const pool = new pg.Pool({
          idleTimeoutMillis: 300_000,
          keepAlive: true,
          ...options,
          application_name: "game-platform",
          Client: preparingClient()
        })
        // A connection that fails while idle is dropped by the pool; the next query opens another.
        pool.on("error", () => {})
        await pool.query("SELECT 1").catch(async (cause) => {
          await pool.end()
          throw cause
        })
        return pool
      },
      catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
    }).pipe(
      Effect.timeoutFail({
        duration: CONNECT_TIMEOUT,
        onTimeout: () => new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
      })
    ),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
  )

const clientOn = (options: pg.PoolConfig & { readonly max: number }) =>
  Layer.unwrapScoped(
    Effect.map(pgPool(options), (pool) =>
      Layer.merge(
        PgClient.layerFromPool({ ...clientOptions, acquire: Effect.succeed(pool) }).pipe(
          Layer.tap((context) => Effect.sync(() => cacheStatementTexts(Context.get(context, SqlClient.SqlClient))))
        ),
        Layer.succeed(DatabasePool, {
          state: () => ({ max: options.max, open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount })
        })
      ))
  )

/** Starts PGlite and a loopback socket server in front of it; both are closed with the scope. */
const pgliteSocket = Effect.fnUntraced(function*(options: { readonly dataDir?: string; readonly loadDataDir?: Blob }) {
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
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient | DatabasePool, SqlError> =>
  source._tag === "Postgres"
    ? clientOn({ connectionString: Redacted.value(source.url), max: source.maxConnections ?? 10 })
    : Layer.unwrapScoped(
      Effect.map(pgliteSocket(source), ({ host, port }) =>
        clientOn({ host, port, user: "postgres", database: "postgres", max: 1 }))
    )
