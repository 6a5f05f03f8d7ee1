/** Opening cases through the public API (docs/rules.md#openings), with a seeded randomness. */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Ledger } from "../../src/services/money/Ledger"
import { fundedPlayer, makeCase } from "../support/GameFixtures"
import { expectRowKept } from "../support/KeptRows"
import { makeTestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const app = makeTestClient({ config: { adminIdpIds: ["root"] } })

const balanceOf = (client: Effect.Effect.Success<typeof app>, auth: Record<string, string>) =>
  Effect.map(client.get("/api/auth/me", auth), (r) => r.body.balanceCents as number)

const discrepancies = Effect.flatMap(Ledger, (ledger) => ledger.discrepancies).pipe(
  Effect.provide(Ledger.Default)
)

layer(TestDatabase)("opening cases", (it) => {
  it.scoped("an opening debits the price, rolls with the revealed seeds and adds the item", () =>
    Effect.gen(function*() {
      const client = yield* app
      const { items, kase } = yield* makeCase({ priceCents: 500n })
      const player = yield* fundedPlayer(client, "opener", 1_000)
      const seed = (yield* client.get("/api/provably-fair/client-seed", player.auth)).body

      const opened = yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)
      expect(opened.status).toBe(200)
      expect(opened.body).toEqual({
        openingId: expect.stringMatching(/^[1-9][0-9]*$/),
        item: { id: expect.any(String), name: expect.any(String), rarity: expect.any(String), valueCents: expect.any(Number), imageUrl: expect.any(String) },
        roll: expect.any(Number),
        serverSeedHash: seed.nextServerSeedHash,
        nextServerSeedHash: expect.stringMatching(/^[0-9a-f]{64}$/),
        isFlip: false
      })
      // The seeded randomness pins the roll and so the item.
      expect(opened.body.roll).toBe(2900730)
      expect(opened.body.item.id).toBe(String(items.common!.id))
      expect(yield* balanceOf(client, player.auth)).toBe(500)

      const verified = (yield* client.get(`/api/cases/openings/${opened.body.openingId}/verify`, player.auth)).body
      expect(verified).toMatchObject({
        openingId: opened.body.openingId,
        serverSeedHash: opened.body.serverSeedHash,
        clientSeed: seed.clientSeed,
        nonce: seed.nonce + 1,
        roll: opened.body.roll,
        calculatedRoll: opened.body.roll,
        isValid: true
      })
      const generic = yield* client.get(`/api/provably-fair/verify/${opened.body.openingId}?type=opening`, player.auth)
      expect(generic.body).toEqual(verified)

      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ referenceType: string; referenceId: string; amountCents: string }>`
        SELECT reference_type, reference_id, amount_cents FROM transactions WHERE user_id = ${player.id} AND type = 'CASE_OPEN'`
      expect(row).toEqual({ referenceType: "CASE", referenceId: String(kase.id), amountCents: "-500" })
      const inventory = yield* sql<{ itemId: string; source: string; status: string }>`
        SELECT item_id, source, status FROM inventory_items WHERE user_id = ${player.id}`
      expect(inventory).toEqual([{ itemId: opened.body.item.id, source: "CASE_OPEN", status: "AVAILABLE" }])
      expect(yield* discrepancies).toEqual([])
    }))

  it.scoped("verification: a tampered record is invalid; another user gets 404", () =>
    Effect.gen(function*() {
      const client = yield* app
      const { kase } = yield* makeCase()
      const player = yield* fundedPlayer(client, "verifier", 500)
      const stranger = yield* fundedPlayer(client, "stranger", 0)
      const opened = (yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).body
      const path = `/api/cases/openings/${opened.openingId}/verify`
      expect((yield* client.get(path, stranger.auth)).body).toEqual({ statusCode: 404, message: "Opening not found" })
      const admin = yield* fundedPlayer(client, "root", 0)
      expect((yield* client.get(path, admin.auth)).body.isValid).toBe(true)

      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE case_openings SET roll = roll % 10000000 + 1 WHERE id = ${opened.openingId}`
      expect((yield* client.get(path, player.auth)).body.isValid).toBe(false)
      yield* sql`UPDATE case_openings SET roll = ${opened.roll}, server_seed = md5('x') || md5('y') WHERE id = ${opened.openingId}`
      expect((yield* client.get(path, player.auth)).body.isValid).toBe(false)
    }))

  it.scoped("a case or an item that an opening names cannot be deleted, renumbered or truncated; one that no play names can be deleted (sql/0029)", () =>
    Effect.gen(function*() {
      const client = yield* app
      const sql = yield* SqlClient.SqlClient
      const opened = yield* makeCase()
      const untouched = yield* makeCase()
      const player = yield* fundedPlayer(client, "named", 500)
      const won = (yield* client.post(`/api/cases/${opened.kase.id}/open`, undefined, player.auth)).body.item.id as string
      const codeOf = (statement: Effect.Effect<unknown, SqlError>) =>
        Effect.map(Effect.flip(statement), (error) => (error.cause as { code?: string }).code)
      // As a foreign key would refuse it: the opening's record, entry and live drop name the case and the item.
      expect(yield* codeOf(sql`DELETE FROM cases WHERE id = ${opened.kase.id}`)).toBe("23503")
      yield* sql`DELETE FROM case_items WHERE case_id = ${opened.kase.id}`
      expect(yield* codeOf(sql`DELETE FROM items WHERE id = ${won}`)).toBe("23503")
      expect(yield* codeOf(sql`UPDATE items SET id = DEFAULT WHERE id = ${won}`)).toBe("23503")
      expect(yield* codeOf(sql`TRUNCATE cases CASCADE`)).toBe("23503")
      const unnamed = Object.values(opened.items).map((item) => String(item.id)).filter((id) => id !== won)
      // A delete's check needs a snapshot of its own statement: under an earlier one it could miss plays since.
      expect(yield* codeOf(sql.withTransaction(Effect.zipRight(
        sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`,
        sql`DELETE FROM items WHERE id IN ${sql.in(unnamed)}`
      )))).toBe("0A000")
      yield* sql`DELETE FROM items WHERE id IN ${sql.in(unnamed)}`
      yield* sql`DELETE FROM cases WHERE id = ${untouched.kase.id}`
      yield* sql`DELETE FROM items WHERE id IN ${sql.in(Object.values(untouched.items).map((item) => String(item.id)))}`
      const left = yield* sql<{ n: number }>`
        SELECT (SELECT count(*) FROM cases WHERE id IN (${opened.kase.id}, ${untouched.kase.id}))::int
             + (SELECT count(*) FROM items WHERE id IN ${sql.in([won, ...unnamed])})::int AS n`
      expect(left).toEqual([{ n: 2 }])
    }))

  it.scoped("a player is never deleted, renumbered or truncated: the ledger and the records of plays name players without a key (sql/0031)", () =>
    Effect.gen(function*() {
      const client = yield* app
      const sql = yield* SqlClient.SqlClient
      const kase = yield* makeCase()
      const player = yield* fundedPlayer(client, "kept", 500)
      expect((yield* client.post(`/api/cases/${kase.kase.id}/open`, undefined, player.auth)).status).toBe(200)
      const [bare] = yield* sql<{ id: string }>`INSERT INTO users (idp_id, username) VALUES ('bare', 'bare') RETURNING id::text AS id`
      yield* expectRowKept("users", bare!.id)
      const left = yield* sql<{ users: number; movements: number; openings: number }>`
        SELECT (SELECT count(*) FROM users WHERE id IN (${bare!.id}, ${player.id}))::int AS users,
               (SELECT count(*) FROM transactions WHERE user_id = ${player.id})::int AS movements,
               (SELECT count(*) FROM case_openings WHERE user_id = ${player.id})::int AS openings`
      expect(left).toEqual([{ users: 2, movements: 2, openings: 1 }])
    }))

  it.scoped("an inventory entry is never deleted, renumbered or truncated: the records of plays name entries without a key (sql/0033)", () =>
    Effect.gen(function*() {
      const client = yield* app
      const sql = yield* SqlClient.SqlClient
      const kase = yield* makeCase()
      const player = yield* fundedPlayer(client, "entries", 500)
      const opened = (yield* client.post(`/api/cases/${kase.kase.id}/open`, undefined, player.auth)).body
      const [bare] = yield* sql<{ id: string }>`
        INSERT INTO inventory_items (user_id, item_id, source, acquired_at, updated_at)
        VALUES (${player.id}, ${opened.item.id}, 'CASE_OPEN', now(), now()) RETURNING id::text AS id`
      yield* expectRowKept("inventory_items", bare!.id)
      const left = yield* sql<{ entries: number; openings: number }>`
        SELECT (SELECT count(*) FROM inventory_items WHERE user_id = ${player.id})::int AS entries,
               (SELECT count(*) FROM case_openings o JOIN inventory_items e ON e.id = o.inventory_item_id
                WHERE o.user_id = ${player.id})::int AS openings`
      expect(left).toEqual([{ entries: 2, openings: 1 }])
    }))

  it.scoped("errors: unknown or inactive case 404, insufficient balance 400; neither consumes a nonce or money", () =>
    Effect.gen(function*() {
      const client = yield* app
      const { kase } = yield* makeCase({ priceCents: 800n })
      const inactive = yield* makeCase({ isActive: false })
      const player = yield* fundedPlayer(client, "poor", 700)
      const before = (yield* client.get("/api/provably-fair/client-seed", player.auth)).body.nonce
      for (const id of ["999999", String(inactive.kase.id)]) {
        const response = yield* client.post(`/api/cases/${id}/open`, undefined, player.auth)
        expect(response.status).toBe(404)
        expect(response.body).toEqual({ statusCode: 404, message: "Case not found" })
      }
      const poor = yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)
      expect(poor.status).toBe(400)
      expect(poor.body).toEqual({ statusCode: 400, message: "Insufficient balance" })
      expect((yield* client.get("/api/provably-fair/client-seed", player.auth)).body.nonce).toBe(before)
      expect(yield* balanceOf(client, player.auth)).toBe(700)
      const bad = yield* client.post("/api/cases/abc/open", undefined, player.auth)
      expect(bad.status).toBe(400)
      expect(bad.body.errors[0].field).toBe("id")
      expect((yield* client.post(`/api/cases/${kase.id}/open`)).status).toBe(401)
    }))

  it.scoped("a roll outside every range is 500 Invalid roll and rolls the whole opening back", () =>
    Effect.gen(function*() {
      const client = yield* app
      const { kase } = yield* makeCase({ priceCents: 100n })
      const player = yield* fundedPlayer(client, "unlucky", 100)
      const sql = yield* SqlClient.SqlClient
      // Corrupt the ranges behind the validation's back: nothing covers any roll any more.
      yield* sql`UPDATE case_items SET range_start = 10000000, range_end = 10000000 WHERE case_id = ${kase.id}`
      const response = yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)
      expect(response.status).toBe(500)
      expect(response.body).toEqual({ statusCode: 500, message: "Invalid roll" })
      expect(yield* balanceOf(client, player.auth)).toBe(100)
      const [count] = yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM case_openings WHERE user_id = ${player.id}`
      expect(count!.n).toBe("0")
    }))

  it.scoped("FLIP: a second roll with the next nonce, both items shown, the better one kept, all verifiable", () =>
    Effect.gen(function*() {
      const client = yield* app
      const { kase } = yield* makeCase({ priceCents: 100n, flipChance: 0.5 })
      const player = yield* fundedPlayer(client, "flipper", 2_000)
      let flip: any
      for (let i = 0; i < 20 && flip === undefined; i++) {
        const opened = (yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).body
        if (opened.isFlip) flip = opened
      }
      expect(flip).toBeDefined()
      expect(flip.flipItems).toHaveLength(2)
      expect(flip.flipRoll).toEqual(expect.any(Number))
      const [a, b] = flip.flipItems
      expect(flip.item).toEqual(b.valueCents > a.valueCents ? b : a)
      const verified = (yield* client.get(`/api/cases/openings/${flip.openingId}/verify`, player.auth)).body
      expect(verified).toMatchObject({ isFlip: true, flipRoll: flip.flipRoll, calculatedFlipRoll: flip.flipRoll, isValid: true })
      expect(verified.flipNonce).toBe(verified.nonce + 1)
      expect(verified.flipClientSeed).toBe(verified.clientSeed)
      const stats = (yield* client.get("/api/users/me/stats/cases", player.auth)).body
      expect(stats.flipCount).toBeGreaterThanOrEqual(1)
    }))

  it.scoped("history, user statistics, case statistics and the live-drop feed follow the openings", () =>
    Effect.gen(function*() {
      const client = yield* app
      const { kase } = yield* makeCase({ priceCents: 200n })
      const player = yield* fundedPlayer(client, "collector", 1_000)
      const other = yield* fundedPlayer(client, "collector-2", 200)
      const results = []
      for (let i = 0; i < 3; i++) results.push((yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).body)
      yield* client.post(`/api/cases/${kase.id}/open`, undefined, other.auth)

      const history = (yield* client.get("/api/cases/openings?limit=2", player.auth)).body
      expect(history.total).toBe(3)
      expect(history.openings).toHaveLength(2)
      expect(history.openings[0]).toMatchObject({
        id: results[2].openingId,
        case: { id: String(kase.id), name: kase.name },
        item: results[2].item,
        roll: results[2].roll,
        isFlip: false,
        pricePaidCents: 200,
        itemValueCents: results[2].item.valueCents,
        profit: results[2].item.valueCents - 200
      })

      for (const result of results) {
        const verified = (yield* client.get(`/api/cases/openings/${result.openingId}/verify`, player.auth)).body
        expect(verified).toMatchObject({ roll: result.roll, calculatedRoll: result.roll, isValid: true })
      }
      const won = results.reduce((sum, r) => sum + r.item.valueCents, 0)
      const best = results.reduce((a, b) => (b.item.valueCents > a.item.valueCents ? b : a))
      const stats = (yield* client.get("/api/users/me/stats/cases", player.auth)).body
      expect(stats).toMatchObject({
        totalOpened: 3,
        totalSpent: 600,
        totalWon: won,
        profit: won - 600,
        favoriteCase: kase.name,
        flipCount: 0
      })
      expect(stats.bestDrop.item.valueCents).toBe(best.item.valueCents)

      const caseStats = (yield* client.get(`/api/cases/${kase.id}/stats`, player.auth)).body
      expect(caseStats).toMatchObject({ totalOpened: 4, uniqueOpeners: 2, totalVolume: 800 })
      expect(caseStats.dropDistribution.reduce((n: number, d: { count: number }) => n + d.count, 0)).toBe(4)
      expect(caseStats.dropDistribution.reduce((n: number, d: { percentage: number }) => n + d.percentage, 0)).toBeCloseTo(100, 1)
      expect((yield* client.get("/api/cases/999999/stats", player.auth)).status).toBe(404)

      const recent = (yield* client.get("/api/live-drops/recent?limit=2", player.auth)).body.drops
      expect(recent).toHaveLength(2)
      expect(recent[0]).toMatchObject({ user: { username: "collector-2" }, source: "CASE_OPEN", caseName: kase.name })
      expect((yield* client.get("/api/live-drops/recent?limit=51", player.auth)).status).toBe(400)
    }))

  it.scoped("the live-drop stream delivers each new drop as a Server-Sent Event", () =>
    Effect.gen(function*() {
      const client = yield* app
      const { kase } = yield* makeCase({ priceCents: 100n })
      const player = yield* fundedPlayer(client, "watcher", 100)
      const response = yield* client.open("/api/live-drops/stream", { headers: player.auth })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toMatch(/text\/event-stream/)
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      let text = decoder.decode((yield* Effect.promise(() => reader.read())).value)
      expect(text).toContain(": connected")
      const opened = (yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).body
      while (!text.includes("event: drop")) text += decoder.decode((yield* Effect.promise(() => reader.read())).value)
      const data = JSON.parse(text.split("event: drop\ndata: ")[1]!.split("\n")[0]!)
      expect(data).toMatchObject({ user: { username: "watcher" }, item: opened.item, source: "CASE_OPEN" })
      yield* Effect.promise(() => reader.cancel())
      expect((yield* client.get("/api/live-drops/stream")).status).toBe(401)
    }))

  it.scoped("administrators can emit a drop; others cannot", () =>
    Effect.gen(function*() {
      const client = yield* app
      const { items } = yield* makeCase()
      const player = yield* fundedPlayer(client, "lucky-one", 0)
      const admin = yield* fundedPlayer(client, "root", 0)
      const body = { userId: player.id, itemId: String(items.jackpot!.id), source: "RAFFLE" }
      expect((yield* client.post("/api/live-drops/emit", body, player.auth)).status).toBe(403)
      const emitted = yield* client.post("/api/live-drops/emit", body, admin.auth)
      expect(emitted.body).toMatchObject({ user: { id: player.id, username: "lucky-one" }, source: "RAFFLE", caseName: null })
      expect((yield* client.post("/api/live-drops/emit", { ...body, itemId: "999999" }, admin.auth)).body).toEqual({
        statusCode: 404,
        message: "Item not found"
      })
    }))
})

layer(Layer.merge(TestDatabase, Ledger.Default.pipe(Layer.provide(TestDatabase))), { excludeTestServices: true })(
  "opening cases in parallel",
  (it) => {
    it.scoped("parallel openings by one user whose balance covers exactly 5: exactly 5 succeed, balance 0", () =>
      Effect.gen(function*() {
        // The case-opening rate limit (5 a minute) would answer for the money; lift it here.
        const client = yield* makeTestClient({
          config: { adminIdpIds: ["root"], rateLimits: { ...testConfig.rateLimits, caseOpen: { count: 1000, windowMs: 60_000 } } }
        })
        const { kase } = yield* makeCase({ priceCents: 300n })
        const player = yield* fundedPlayer(client, "parallel", 1_500)
        const responses = yield* Effect.all(
          Array.from({ length: 12 }, () => client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)),
          { concurrency: "unbounded" }
        )
        const statuses = responses.map((r) => r.status)
        expect(statuses.filter((s) => s === 200)).toHaveLength(5)
        expect(statuses.filter((s) => s !== 200).every((s) => s === 400 || s === 409)).toBe(true)
        expect(yield* balanceOf(client, player.auth)).toBe(0)
        const sql = yield* SqlClient.SqlClient
        const [counts] = yield* sql<{ openings: string; entries: string; nonce: string }>`
          SELECT (SELECT count(*) FROM case_openings WHERE user_id = ${player.id})::text AS openings,
                 (SELECT count(*) FROM inventory_items WHERE user_id = ${player.id})::text AS entries,
                 (SELECT nonce FROM fairness_seeds WHERE user_id = ${player.id})::text AS nonce`
        expect(counts).toEqual({ openings: "5", entries: "5", nonce: "5" })
        for (const opened of responses.filter((r) => r.status === 200)) {
          const path = `/api/cases/openings/${opened.body.openingId}/verify`
          expect((yield* client.get(path, player.auth)).body.isValid).toBe(true)
        }
        expect(yield* (yield* Ledger).discrepancies).toEqual([])
      }))

    it.scoped("parallel openings by several users keep user and case statistics exact", () =>
      Effect.gen(function*() {
        const lifted = { count: 1000, windowMs: 60_000 }
        const client = yield* makeTestClient({
          config: { adminIdpIds: ["root"], rateLimits: { ...testConfig.rateLimits, caseOpen: lifted, auth: lifted } }
        })
        const { kase } = yield* makeCase({ priceCents: 100n })
        const players = yield* Effect.all(
          Array.from({ length: 4 }, (_, i) => fundedPlayer(client, `stats-${i}`, 600)),
          { concurrency: 1 }
        )
        // 4 users x 8 attempts against balances that cover 6 each.
        const responses = yield* Effect.all(
          players.flatMap((player) =>
            Array.from({ length: 8 }, () =>
              Effect.map(client.post(`/api/cases/${kase.id}/open`, undefined, player.auth), (r) => ({ player, r })))
          ),
          { concurrency: "unbounded" }
        )
        for (const player of players) {
          const won = responses.filter(({ player: p, r }) => p === player && r.status === 200)
          expect(won).toHaveLength(6)
          const wonValue = won.reduce((sum, { r }) => sum + r.body.item.valueCents, 0)
          const stats = (yield* client.get("/api/users/me/stats/cases", player.auth)).body
          expect(stats).toMatchObject({ totalOpened: 6, totalSpent: 600, totalWon: wonValue, profit: wonValue - 600 })
        }
        const caseStats = (yield* client.get(`/api/cases/${kase.id}/stats`, players[0]!.auth)).body
        expect(caseStats).toMatchObject({ totalOpened: 24, uniqueOpeners: 4, totalVolume: 2400 })
        expect(caseStats.dropDistribution.reduce((n: number, d: { count: number }) => n + d.count, 0)).toBe(24)
        expect(yield* (yield* Ledger).discrepancies).toEqual([])
      }))
  }
)
