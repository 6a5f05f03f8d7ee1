/**
 * What stands for a foreign key that a migration dropped (sql/0031, sql/0033): a row that the records of plays name
 * is never deleted (directly, or through a parent table, which a statement trigger would not see), renumbered or
 * truncated; each is refused with the key's error code, 23503.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { expect } from "@effect/vitest"
import { Effect } from "effect"

const codeOf = (statement: Effect.Effect<unknown, SqlError>) =>
  Effect.map(Effect.flip(statement), (error) => (error.cause as { code?: string }).code)

/** Checks that row `id` of `table` is kept so; give it a row nothing names, so that no remaining key is what refuses. */
export const expectRowKept = (table: string, id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const parent = sql(`${table}_parent`)
    expect(yield* codeOf(sql`DELETE FROM ${sql(table)} WHERE id = ${id}`)).toBe("23503")
    expect(yield* codeOf(sql`UPDATE ${sql(table)} SET id = DEFAULT WHERE id = ${id}`)).toBe("23503")
    expect(yield* codeOf(sql`TRUNCATE ${sql(table)} CASCADE`)).toBe("23503")
    yield* sql`CREATE TABLE ${parent} (id bigint)`
    yield* sql`ALTER TABLE ${sql(table)} INHERIT ${parent}`
    expect(yield* codeOf(sql`DELETE FROM ${parent} WHERE id = ${id}`)).toBe("23503")
    yield* sql`ALTER TABLE ${sql(table)} NO INHERIT ${parent}`
    yield* sql`DROP TABLE ${parent}`
  })
