/**
 * Reading rows and running transactions in the domain services. A failing database or a row that
 * does not decode is a defect (D3: logged, answered 500), never a domain error.
 */
import type { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, FiberRef, Schema } from "effect"

/** A statement as the SQL client runs it. */
export type Statement = Effect.Effect<ReadonlyArray<unknown>, SqlError>

/** The rows of `statement`, decoded with `schema`. */
export const rowsOf = <A, I>(schema: Schema.Schema<A, I>, statement: Statement): Effect.Effect<ReadonlyArray<A>> =>
  statement.pipe(Effect.flatMap(Schema.decodeUnknown(Schema.Array(schema))), Effect.orDie)

/** The first row of `statement`, decoded with `schema`; undefined when there is none. */
export const firstOf = <A, I>(schema: Schema.Schema<A, I>, statement: Statement): Effect.Effect<A | undefined> =>
  Effect.map(rowsOf(schema, statement), (rows) => rows[0])

/** `effect` in one database transaction; the domain errors it fails with roll it back and stay typed. */
export const inTransaction = (sql: SqlClient.SqlClient) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError>, R> =>
  sql.withTransaction(effect).pipe(
    Effect.catchAll((error) => error instanceof SqlError ? Effect.die(error) : Effect.fail(error as Exclude<E, SqlError>))
  )

/** A unique index refused the write (PostgreSQL 23505). */
export const isUniqueViolation = (error: SqlError): boolean => {
  const cause: unknown = error.cause
  return typeof cause === "object" && cause !== null && (cause as { readonly code?: unknown }).code === "23505"
}

/**
 * Publications that must only follow a commit (balance pushes, notifications, live drops) are made
 * right away, unless a caller holds a transaction open around the service (`publishingAfterCommit`):
 * then they wait until that transaction has committed, and are dropped if it rolls back.
 */
const heldPublications = FiberRef.unsafeMake<Array<Effect.Effect<void>> | undefined>(undefined)

/** Publishes now, or once the transaction held around the caller commits. */
export const afterCommit = (publish: Effect.Effect<void>): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(heldPublications), (held) => held === undefined ? publish : Effect.sync(() => void held.push(publish)))

/** Runs `transaction` (which commits when it succeeds), then the publications made inside it. */
export const publishingAfterCommit = <A, E, R>(transaction: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const held: Array<Effect.Effect<void>> = []
    return Effect.locally(transaction, heldPublications, held).pipe(
      Effect.tap(() => Effect.forEach(held, (publish) => publish, { discard: true }))
    )
  })
