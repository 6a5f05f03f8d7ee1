/**
 * Reading rows and running transactions in the domain services, under one error policy
 * (src/layers/Failures.ts): an unavailable database is the typed ServiceUnavailable (503); a row
 * that does not decode, or any other database error, is a defect (500, logged), never a domain error.
 */
import type { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, FiberRef, Option, ParseResult, Schedule, Schema } from "effect"
import { PleaseRetry, ServiceUnavailable } from "../../schema/platform/Errors"
import type { PageRequest } from "../../schema/platform/Pagination"
import { unavailableOrDie } from "../../layers/Failures"

/** A statement as the SQL client runs it; `E`: what the caller made of some of its errors (`onUniqueViolation`). */
export type Statement<E = never> = Effect.Effect<ReadonlyArray<unknown>, SqlError | E>

/** What a statement can fail with besides the caller's own errors. */
type Infrastructure = SqlError | ParseResult.ParseError

const isInfrastructure = (error: unknown): error is Infrastructure => error instanceof SqlError || ParseResult.isParseError(error)

/** The policy on `effect`'s database errors: ServiceUnavailable for an outage, a defect otherwise. */
export const orUnavailable = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, Infrastructure> | ServiceUnavailable, R> =>
  Effect.catchIf(effect, isInfrastructure, unavailableOrDie) as Effect.Effect<A, Exclude<E, Infrastructure> | ServiceUnavailable, R>

/** Runs a statement whose rows are not needed. */
export const execute = <E = never>(statement: Statement<E>): Effect.Effect<void, Exclude<E, Infrastructure> | ServiceUnavailable> =>
  Effect.asVoid(orUnavailable(statement))

/**
 * The decoder of an array of `schema`'s rows, built once per schema: building it (and the parser the
 * schema compiles to) for every statement cost the hot paths ~2 % of their CPU.
 */
const rowDecoders = new WeakMap<Schema.Schema.Any, (rows: unknown) => Effect.Effect<ReadonlyArray<unknown>, ParseResult.ParseError>>()
const rowDecoder = <A, I>(schema: Schema.Schema<A, I>) => {
  let decode = rowDecoders.get(schema)
  if (decode === undefined) {
    decode = Schema.decodeUnknown(Schema.Array(schema))
    rowDecoders.set(schema, decode)
  }
  return decode as (rows: unknown) => Effect.Effect<ReadonlyArray<A>, ParseResult.ParseError>
}

/**
 * How many rows `statement` answered, when they need no reading: what an `UPDATE ... RETURNING id` changed,
 * what a `SELECT 1 ...` found.
 */
export const rowCountOf = <E = never>(statement: Statement<E>): Effect.Effect<number, Exclude<E, Infrastructure> | ServiceUnavailable> =>
  Effect.map(orUnavailable(statement), (rows) => rows.length)

/** The rows of `statement`, decoded with `schema`. */
export const rowsOf = <A, I, E = never>(
  schema: Schema.Schema<A, I>,
  statement: Statement<E>
): Effect.Effect<ReadonlyArray<A>, Exclude<E, Infrastructure> | ServiceUnavailable> =>
  orUnavailable(Effect.flatMap(statement, rowDecoder(schema)))

/** The first row of `statement`, decoded with `schema`; undefined when there is none. */
export const firstOf = <A, I, E = never>(
  schema: Schema.Schema<A, I>,
  statement: Statement<E>
): Effect.Effect<A | undefined, Exclude<E, Infrastructure> | ServiceUnavailable> => Effect.map(rowsOf(schema, statement), (rows) => rows[0])

/**
 * The row of a statement that always returns one (an INSERT ... RETURNING, an aggregate), decoded with
 * `schema`; none is a bug, a defect.
 */
export const singleOf = <A, I, E = never>(
  schema: Schema.Schema<A, I>,
  statement: Statement<E>
): Effect.Effect<A, Exclude<E, Infrastructure> | ServiceUnavailable> =>
  Effect.flatMap(rowsOf(schema, statement), (rows) => {
    const row = rows[0]
    return row === undefined ? Effect.dieMessage("A statement that always returns a row returned none") : Effect.succeed(row)
  })

const NumberRow = Schema.Struct({ n: Schema.NumberFromString })

/**
 * The number `n` of a statement answering one, as PostgreSQL's text or bigint: `SELECT count(*) AS n ...`,
 * `SELECT COALESCE(sum(...), 0)::text AS n ...`.
 */
export const numberOf = (statement: Statement): Effect.Effect<number, ServiceUnavailable> =>
  Effect.map(singleOf(NumberRow, statement), (row) => row.n)

/** The LIMIT and OFFSET of a page of a list. */
interface PageWindow {
  readonly limit: number
  readonly offset: number
}

export const windowOf = (request: PageRequest): PageWindow => ({ limit: request.limit, offset: (request.page - 1) * request.limit })

/** A page of a list (docs/rules.md#pagination). */
export interface PageOf<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
  readonly page: number
}

/**
 * A page of a list: the rows `select` reads in the page's window, decoded with `schema`, then the
 * total `count` answers (`SELECT count(*) AS n ...` over the same rows).
 */
export const pageOf = <A, I>(
  schema: Schema.Schema<A, I>,
  request: PageRequest,
  select: (window: PageWindow) => Statement,
  count: Statement
): Effect.Effect<PageOf<A>, ServiceUnavailable> =>
  Effect.flatMap(rowsOf(schema, select(windowOf(request))), (items) =>
    Effect.map(numberOf(count), (total) => ({ items, total, page: request.page })))

/** A list read newest first: `select` is `SELECT <columns> FROM <table> <alias>`, joins allowed. */
export interface NewestFirst {
  readonly table: string
  readonly alias: string
  readonly select: Fragment
}

/**
 * A page of the rows of `rows.table`, newest (highest id) first, whose columns named in `where` have
 * the values given there (a column given `undefined` is not filtered); the total counts `rows.table` alone.
 */
export const newestPage = <A, I>(
  sql: SqlClient.SqlClient,
  schema: Schema.Schema<A, I>,
  rows: NewestFirst,
  request: PageRequest,
  where: Readonly<Record<string, string | bigint | undefined>>
): Effect.Effect<PageOf<A>, ServiceUnavailable> => {
  const filters = Object.entries(where).filter((entry): entry is [string, string | bigint] => entry[1] !== undefined)
  const alias = sql(rows.alias)
  const qualified = sql.and(filters.map(([column, value]) => sql`${alias}.${sql(column)} = ${value}`))
  const plain = sql.and(filters.map(([column, value]) => sql`${sql(column)} = ${value}`))
  return pageOf(
    schema,
    request,
    ({ limit, offset }) => sql`${rows.select} WHERE ${qualified} ORDER BY ${alias}.id DESC LIMIT ${limit} OFFSET ${offset}`,
    sql`SELECT count(*) AS n FROM ${sql(rows.table)} WHERE ${plain}`
  )
}

/** How often a transaction that met a serialization failure or a deadlock runs again. */
const CONFLICT_RETRIES = Schedule.exponential("20 millis").pipe(Schedule.jittered, Schedule.intersect(Schedule.recurs(3)))

/**
 * `effect` in one database transaction; the domain errors it fails with roll it back and stay typed.
 * Publications made inside it (`afterCommit`) wait for its commit. The outermost transaction runs
 * again after a serialization failure or a deadlock (up to 3 times), then answers PleaseRetry (409);
 * a nested one (a savepoint) leaves that to the outermost.
 */
export const inTransaction = (sql: SqlClient.SqlClient) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, Infrastructure> | ServiceUnavailable | PleaseRetry, R> =>
  Effect.flatMap(FiberRef.get(heldPublications), (outer) =>
    outer !== undefined
      ? orUnavailable(sql.withTransaction(effect))
      : publishingAfterCommit(orUnavailable(sql.withTransaction(effect))).pipe(
        Effect.retry({ schedule: CONFLICT_RETRIES, while: isConflict }),
        Effect.catchIf(isConflict, () =>
          Effect.zipRight(Effect.logWarning("A transaction kept meeting conflicts; giving up"), Effect.fail(new PleaseRetry())))
      ))

const isConflict = (error: unknown): boolean => error instanceof ServiceUnavailable && error.conflict

/**
 * A one-statement write (an upgrade's, a battle join's) that met a conflict (a deadlock, a serialization failure)
 * wrote nothing: outside a transaction it answers none, for the caller's careful way; inside one (an idempotent
 * request's), that transaction is aborted, so the conflict stays and the outermost `inTransaction` runs it all again.
 */
export const noneOnConflict = <A, E, R>(write: Effect.Effect<Option.Option<A>, E, R>): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.flatMap(FiberRef.get(heldPublications), (outer) =>
    outer !== undefined ? write : Effect.catchIf(write, isConflict, () => Effect.succeed(Option.none<A>())))

/** A unique index refused the write (PostgreSQL 23505). */
const isUniqueViolation = (error: unknown): boolean => {
  const cause: unknown = error instanceof SqlError ? error.cause : undefined
  return typeof cause === "object" && cause !== null && (cause as { readonly code?: unknown }).code === "23505"
}

/**
 * `effect`, where a unique index refusing a write (PostgreSQL 23505) is answered by `onViolation`; its
 * other errors are left to the policy (`orUnavailable`, `inTransaction`).
 */
export const onUniqueViolation = <B, E2, R2>(onViolation: () => Effect.Effect<B, E2, R2>) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A | B, E | E2, R | R2> =>
  Effect.catchIf(effect, isUniqueViolation, onViolation)

/**
 * Publications that must only follow a commit (balance pushes, notifications, live drops) are made
 * right away, unless they are made inside a transaction (`inTransaction`, e.g. the one an idempotent
 * request holds around a whole service call): then they wait until it has committed, and are dropped
 * if it rolls back.
 */
const heldPublications = FiberRef.unsafeMake<Array<Effect.Effect<void>> | undefined>(undefined)

/**
 * Publishes now, or once the transaction held around the caller commits. A publication is best
 * effort: the change it announces is committed, so its failure (Redis down) is logged, not answered.
 */
export const afterCommit = <E>(publish: Effect.Effect<void, E>): Effect.Effect<void> => {
  const attempt = publish.pipe(Effect.catchAllCause((cause) => Effect.logWarning("A publication after a commit failed", cause)))
  return Effect.flatMap(FiberRef.get(heldPublications), (held) => held === undefined ? attempt : Effect.sync(() => void held.push(attempt)))
}

/** Runs `transaction` (which commits when it succeeds), then the publications made inside it. */
const publishingAfterCommit = <A, E, R>(transaction: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const held: Array<Effect.Effect<void>> = []
    return Effect.locally(transaction, heldPublications, held).pipe(
      Effect.tap(() => Effect.forEach(held, (publish) => publish, { discard: true }))
    )
  })
