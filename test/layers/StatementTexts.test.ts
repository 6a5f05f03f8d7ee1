/**
 * Statement texts kept by shape (src/layers/StatementTexts.ts), on the service's own SQL client, both ways it runs: a
 * statement compiles to what @effect/sql's PostgreSQL compiler makes of it, on its first execution and on later ones
 * with other values; a statement whose fragments change its shape gets its own text; helpers and custom types compile
 * as before; and the same statement runs with each execution's own parameters.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { expect, layer } from "@effect/vitest"
import { Effect, Schema, String } from "effect"
import { EmptyTestDatabase } from "../support/TestDatabase"

/** The compiler the client would have without the kept texts (the options of src/layers/Database.ts). */
const uncached = PgClient.makeCompiler(String.camelToSnake)
const expectCompiledAsBefore = (statement: Statement.Statement<unknown>) => {
  const compiled = statement.compile()
  expect(compiled).toEqual(uncached.compile(statement, false))
  return compiled
}

layer(EmptyTestDatabase, { excludeTestServices: true })("statement texts kept by shape", (it) => {
  it.effect("a statement compiles as before, the first time and later with other values, to the same text", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const statement = (userId: number, limit: number) =>
        sql`SELECT ${sql("userId")}, ${sql.literal("'x'")} AS x FROM t WHERE a = ${userId} AND ${sql`b < ${limit}`} LIMIT ${limit}`
      const text = 'SELECT "user_id", \'x\' AS x FROM t WHERE a = $1 AND b < $2 LIMIT $3'
      expect(expectCompiledAsBefore(statement(1, 10))).toEqual([text, [1, 10, 10]])
      expect(expectCompiledAsBefore(statement(2, 20))).toEqual([text, [2, 20, 20]])
    }))

  it.effect("fragments that change a statement's shape give it another text", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const statement = (ids: ReadonlyArray<number>, locked: boolean) =>
        sql`SELECT id FROM t WHERE ${sql.or(ids.map((id) => sql`id = ${id}`))} ${sql.literal(locked ? "FOR UPDATE" : "")}`
      expect(expectCompiledAsBefore(statement([1, 2], false))).toEqual(["SELECT id FROM t WHERE (id = $1 OR id = $2) ", [1, 2]])
      expect(expectCompiledAsBefore(statement([1, 2, 3], false))).toEqual([
        "SELECT id FROM t WHERE (id = $1 OR id = $2 OR id = $3) ",
        [1, 2, 3]
      ])
      expect(expectCompiledAsBefore(statement([4, 5], true))).toEqual(["SELECT id FROM t WHERE (id = $1 OR id = $2) FOR UPDATE", [4, 5]])
      expect(expectCompiledAsBefore(statement([6, 7], false))).toEqual(["SELECT id FROM t WHERE (id = $1 OR id = $2) ", [6, 7]])
    }))

  it.effect("helpers, custom types and unsafe texts with parameters compile as before", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const pg = yield* PgClient.PgClient
      for (const ids of [[1, 2], [3, 4, 5]]) {
        expectCompiledAsBefore(sql`SELECT id FROM t WHERE id IN ${sql.in(ids)} AND c = ${ids[0]!}`)
        expectCompiledAsBefore(sql`INSERT INTO t ${sql.insert(ids.map((id) => ({ id, userId: id })))} RETURNING id`)
        expectCompiledAsBefore(sql`UPDATE t SET data = ${pg.json({ ids })} WHERE id = ${ids[0]!}`)
        expectCompiledAsBefore(sql`SELECT ${sql.unsafe("$1::int + 1", [ids[0]!])} AS n, ${ids[1]!} AS m`)
        expectCompiledAsBefore(sql.unsafe("SELECT $1::int AS n", [ids[0]!]))
      }
    }))

  it.effect("the same statement runs with each execution's own parameters", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const Row = Schema.Struct({ doubled: Schema.Number, userName: Schema.String })
      const run = (n: number, name: string) =>
        Effect.flatMap(
          sql`SELECT ${n}::int * 2 AS doubled, ${name}::text AS user_name`,
          Schema.decodeUnknown(Schema.Array(Row))
        )
      const answers = yield* Effect.forEach([[1, "a"], [2, "b"], [3, "c"]] as const, ([n, name]) => run(n, name))
      expect(answers).toEqual([[{ doubled: 2, userName: "a" }], [{ doubled: 4, userName: "b" }], [{ doubled: 6, userName: "c" }]])
      const concurrent = yield* Effect.forEach(Array.from({ length: 20 }, (_, i) => i), (i) => run(i, `u${i}`), {
        concurrency: "unbounded"
      })
      expect(concurrent).toEqual(Array.from({ length: 20 }, (_, i) => [{ doubled: 2 * i, userName: `u${i}` }]))
    }).pipe(Effect.orDie))
})
