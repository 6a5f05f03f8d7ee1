/**
 * Prepared statements (src/layers/PreparedStatements.ts), both ways the service runs: a statement with
 * parameters is parsed and planned once per connection, the rest go as they are, a connection keeps a
 * bounded number, and a statement whose result changed its columns under it fails once, then runs: a
 * transaction meeting that runs again.
 * Each test holds one connection in a transaction, where PostgreSQL's pg_prepared_statements shows it.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { DatabaseLive } from "../../src/layers/Database"
import { PER_CONNECTION } from "../../src/layers/PreparedStatements"
import { inTransaction } from "../../src/services/platform/SqlRows"
import { EmptyTestDatabase, freshPostgresUrl, usingRealPostgres } from "../support/TestDatabase"

const Prepared = Schema.Struct({ statement: Schema.String, runs: Schema.NumberFromString })
const preparedLike = (sql: SqlClient.SqlClient, marker: string) =>
  Effect.flatMap(
    sql`SELECT statement, (generic_plans + custom_plans)::text AS runs FROM pg_prepared_statements
        WHERE statement LIKE ${`%${marker}%`} AND statement NOT LIKE '%pg_prepared_statements%'`,
    Schema.decodeUnknown(Schema.Array(Prepared))
  )

layer(EmptyTestDatabase, { excludeTestServices: true })("prepared statements", (it) => {
  it.effect("a statement with parameters is prepared once on its connection and run again from there", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { answers, prepared } = yield* sql.withTransaction(Effect.gen(function*() {
        const answers = []
        for (const n of [1, 2, 3]) answers.push(yield* sql<{ sum: number }>`SELECT ${n}::int + 1 AS sum, 'marker_a' AS m`)
        return { answers, prepared: yield* preparedLike(sql, "marker_a") }
      }))
      expect(answers.map(([row]) => row!.sum)).toEqual([2, 3, 4])
      expect(prepared).toEqual([{ statement: "SELECT $1::int + 1 AS sum, 'marker_a' AS m", runs: 3 }])
    }).pipe(Effect.orDie))

  it.effect("a statement without parameters is sent as it is", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const prepared = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT 'marker_b' AS m`
        return yield* preparedLike(sql, "marker_b")
      }))
      expect(prepared).toEqual([])
    }).pipe(Effect.orDie))

  it.effect("a statement whose result changed its columns (a migration under a running instance) fails once, then runs", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { before, failed, after } = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`CREATE TABLE prepared_widgets (id int)`
        yield* sql`INSERT INTO prepared_widgets VALUES (${1})`
        const select = sql<Record<string, unknown>>`SELECT * FROM prepared_widgets WHERE id = ${1}`
        const before = yield* select
        yield* sql`ALTER TABLE prepared_widgets ADD COLUMN label text`
        // In a nested transaction (a savepoint), so that its failure leaves the outer one usable.
        const failed = yield* Effect.flip(sql.withTransaction(select))
        return { before, failed, after: yield* select }
      }))
      expect(before).toEqual([{ id: 1 }])
      expect((failed.cause as { code?: string }).code).toBe("0A000")
      expect(after).toEqual([{ id: 1, label: null }])
    }).pipe(Effect.orDie))
})

// Its own pool: the connection it fills is of no use to other tests.
layer(EmptyTestDatabase, { excludeTestServices: true })("a connection's prepared statements", (it) => {
  it.effect(`a connection keeps at most ${PER_CONNECTION} statements; the rest still run, unprepared`, () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { answers, prepared } = yield* sql.withTransaction(Effect.gen(function*() {
        const answers: Array<number> = []
        for (let i = 0; i < PER_CONNECTION + 5; i++) {
          const [row] = yield* sql<{ n: number }>`SELECT ${i}::int AS n, ${sql.literal(`'marker_c${i}'`)} AS m`
          answers.push(row!.n)
        }
        const [count] = yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM pg_prepared_statements`
        return { answers, prepared: Number(count!.n) }
      }))
      expect(answers).toEqual(Array.from({ length: PER_CONNECTION + 5 }, (_, i) => i))
      expect(prepared).toBeLessThanOrEqual(PER_CONNECTION)
      expect(prepared).toBeGreaterThanOrEqual(PER_CONNECTION - 10)
    }).pipe(Effect.orDie))
})

/** A pool of one connection (PGlite's always is), so that a statement runs where it was prepared. */
const OneConnection = usingRealPostgres
  ? Layer.unwrapScoped(Effect.map(freshPostgresUrl, (url) => DatabaseLive({ _tag: "Postgres", url, maxConnections: 1 })))
    .pipe(Layer.orDie)
  : EmptyTestDatabase

layer(OneConnection, { excludeTestServices: true })("a migration under a running instance", (it) => {
  it.effect("a transaction whose prepared statement's result changed its columns runs again and answers", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE replanned_widgets (id int)`
      yield* sql`INSERT INTO replanned_widgets VALUES (${1})`
      const select = sql<Record<string, unknown>>`SELECT * FROM replanned_widgets WHERE id = ${1}`
      expect(yield* select).toEqual([{ id: 1 }])
      // Another instance's migration, committed.
      yield* sql`ALTER TABLE replanned_widgets ADD COLUMN label text`
      expect(yield* inTransaction(sql)(select)).toEqual([{ id: 1, label: null }])
    }).pipe(Effect.orDie))
})
