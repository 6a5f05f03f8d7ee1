/**
 * Prepared statements (src/layers/PreparedStatements.ts), both ways the service runs: a statement with
 * parameters is parsed and planned once per connection, the rest go as they are, a connection keeps a
 * bounded number, and a statement whose result changed its columns under it fails once, then runs: a
 * transaction meeting that runs again; and a statement over a list (ids, rows to insert) keeps one text
 * whatever the list's length. Also what the client does with values: times are sent as pg writes them, and
 * a column's JSON comes back untouched (src/layers/Database.ts).
 * Each test holds one connection (in a transaction, or a pool of one), where PostgreSQL's
 * pg_prepared_statements shows what it prepared.
 */
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Schema, TestClock } from "effect"
import pgUtils from "pg/lib/utils.js"
import { DatabaseLive } from "../../src/layers/Database"
import { MigrationsLive } from "../../src/layers/Migrations"
import { PER_CONNECTION } from "../../src/layers/PreparedStatements"
import { inTransaction } from "../../src/services/platform/SqlRows"
import { fundedPlayer } from "../support/GameFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, testConfig } from "../support/TestApp"
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

  it.effect("times go as pg writes them: one instant, the same text wherever the statement names it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [at, other] = [new Date("2026-11-29T13:45:56.926Z"), new Date("2024-02-29T23:59:59.001Z")]
      // `$n::text` answers the parameter's text as it arrived.
      const [row] = yield* sql<Record<string, string>>`
        SELECT ${at}::text AS a, ${other}::text AS b, ${at}::text AS c, ${new Date(at.getTime())}::text AS d,
               ${"plain"}::text AS e, ${at}::timestamptz = ${new Date(at.getTime())}::timestamptz AS same`
      expect(row).toEqual({
        a: pgUtils.prepareValue(at),
        b: pgUtils.prepareValue(other),
        c: pgUtils.prepareValue(at),
        d: pgUtils.prepareValue(at),
        e: "plain",
        same: true
      })
    }).pipe(Effect.orDie))

  it.effect("a column's name is turned to camelCase, the JSON inside it is left as it is", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT ${JSON.stringify({ snake_key: [{ inner_key: 1 }], camelKey: 2 })}::jsonb AS json_column`
      expect(rows).toEqual([{ jsonColumn: { snake_key: [{ inner_key: 1 }], camelKey: 2 } }])
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

/** The migrated database on one connection, so that pg_prepared_statements shows every statement the app prepared. */
const OneConnectionMigrated = MigrationsLive.pipe(Layer.provide(NodeContext.layer), Layer.provideMerge(OneConnection))

const lifted = { count: 100_000, windowMs: 60_000 }
const listApp = {
  config: {
    adminIdpIds: ["root"],
    rateLimits: { ...testConfig.rateLimits, global: lifted, auth: lifted, caseOpen: lifted, withdrawal: lifted }
  }
}

layer(OneConnectionMigrated)("statements over lists", (it) => {
  it.scoped("a statement over a list keeps one text, whatever the list's length: no list fills a connection's statements", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* TestClock.setTime(Date.UTC(2026, 0, 15, 12))
      const client = yield* makeTestClient(listApp)
      const root = yield* signIn(client, "root")
      const created = (response: { status: number; body: any }) => {
        if (response.status !== 201 && response.status !== 200) throw new Error(`${response.status} ${JSON.stringify(response.body)}`)
        return response.body
      }
      const token = { authorization: "Bearer test-admin-token" }
      const webhook = created(yield* client.post(
        "/api/webhooks",
        { url: "https://receiver.example/hook", events: ["battle.finished"], secret: "a-receiver-secret-of-some-length" },
        token
      ))
      const endsAt = new Date(Date.UTC(2026, 0, 16, 12)).toISOString()

      /** Every list-shaped statement of the service once, with lists of n elements (called with n = 1 to 4 in turn). */
      const withLists = (n: number) =>
        Effect.gen(function*() {
          const count = Array.from({ length: n }, (_, i) => i)
          // n items, n cases of them: the items' facts by id, the case's ranges inserted at once.
          const itemIds = yield* Effect.forEach(count, (i) =>
            Effect.map(
              client.post("/api/admin/items", { name: `List item ${n}.${i}`, rarity: "CONSUMER", valueCents: 10, imageUrl: "/i.png" }, root.auth),
              (r) => created(r).id as string
            ))
          const caseIds = yield* Effect.forEach(count, (i) =>
            Effect.map(
              client.post(
                "/api/admin/cases",
                { name: `List case ${n}.${i}`, slug: `list-case-${n}-${i}`, imageUrl: "/c.png", priceCents: 1_000, items: itemIds.map((itemId) => ({ itemId })) },
                root.auth
              ),
              (r) => created(r).id as string
            ))
          // The administrators' case list: the items of a page of cases.
          created(yield* client.get(`/api/admin/cases?limit=${n}`, root.auth))
          // A battle of n cases: their prices by id; its 2n rolls, live drops and settlement at once.
          const [one, two] = yield* Effect.forEach([1, 2], (p) => fundedPlayer(client, `lists-${n}-${p}`, 1_000_000))
          const battle = created(yield* client.post("/api/battles", { caseIds, mode: "NORMAL", maxPlayers: 2 }, one!.auth))
          expect(created(yield* client.post(`/api/battles/${battle.id}/join`, undefined, two!.auth)).status).toBe("FINISHED")
          // A page of battles, of raffles (with the viewer's tickets), of a receiver's deliveries (with their attempts).
          expect(created(yield* client.get(`/api/battles?limit=${n}`, one!.auth)).battles).toHaveLength(n)
          yield* Effect.forEach(count, () =>
            client.post("/api/admin/raffles", { itemId: itemIds[0], ticketPriceCents: 100, maxTickets: 10, endsAt }, root.auth)
              .pipe(Effect.map(created)))
          expect(created(yield* client.get(`/api/raffles?limit=${n}`, one!.auth)).raffles).toHaveLength(n)
          expect(created(yield* client.get(`/api/webhooks/${webhook.id}/deliveries?limit=${n}`, token)).deliveries).toHaveLength(n)
        })

      const preparedTexts = Effect.map(
        sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`,
        (rows) => new Set(rows.map((row) => row.statement))
      )
      // Lists of one may have a text of their own (one battle's view by a scalar, for its generic plan).
      yield* withLists(1)
      yield* withLists(2)
      const once = yield* preparedTexts
      // Far from the connection's bound, or a text beyond it would go unprepared and unseen.
      expect(once.size).toBeLessThan(PER_CONNECTION / 2)
      yield* withLists(3)
      yield* withLists(4)
      const added = [...(yield* preparedTexts)].filter((text) => !once.has(text) && !text.includes("pg_prepared_statements"))
      expect(added).toEqual([])
    }).pipe(Effect.orDie), { timeout: 120_000 })
})
