/**
 * Case battles through the public API (docs/rules.md#battles): every mode with 2, 3 and 4
 * players, winners and settlement checked against the rolls the API reports, every roll verified,
 * leaving and cancelling with refunds, concurrent joins for the last slot, and the ledger afterwards.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, TestClock } from "effect"
import { Randomness } from "../../src/layers/Randomness"
import { Ledger } from "../../src/services/money/Ledger"
import { balanceOf, fundedPlayer, makeCase } from "../support/GameFixtures"
import { expectRowKept } from "../support/KeptRows"
import { makeTestClient, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase, usingRealPostgres } from "../support/TestDatabase"

interface Round {
  readonly id: string
  readonly roundNumber: number
  readonly userId: string
  readonly item: { readonly id: string; readonly valueCents: number }
  readonly roll: number
  readonly nonce: number
  readonly serverSeed: string | null
}
interface Player {
  readonly slot: number
  readonly team: number | null
  readonly user: { readonly id: string; readonly username: string }
  readonly totalValueCents: number
  readonly isWinner: boolean
}
interface Battle {
  readonly id: string
  readonly status: string
  readonly mode: string
  readonly entryPriceCents: number
  readonly players: ReadonlyArray<Player>
  readonly rounds: ReadonlyArray<Round>
}

/** Root is an administrator; sign-ins are not rate limited here (every player signs in, and so does root to fund them). */
const appOptions = {
  config: { adminIdpIds: ["root"], rateLimits: { ...testConfig.rateLimits, auth: { count: 10_000, windowMs: 60_000 }, global: { count: 10_000, windowMs: 60_000 } } }
}

let logins = 0
const players = (client: TestClient, count: number, cents: number) =>
  Effect.forEach(Array.from({ length: count }), () => fundedPlayer(client, `fighter-${++logins}`, cents))

/**
 * The ledger checks for battles (docs/rules.md#ledger-checks): balances equal their movements, and for every
 * battle and user the entries minus refunds are exactly one entry when the user holds a slot of a battle that
 * was not cancelled, else 0.
 */
const ledgerProblems = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const discrepancies = yield* Effect.flatMap(Ledger, (ledger) => ledger.discrepancies).pipe(Effect.provide(Ledger.Default))
  const battles = yield* sql<{ battleId: string; userId: string; net: string }>`
    WITH movements AS (
      SELECT t.reference_id AS battle_id, t.user_id, sum(t.amount_cents) AS net
      FROM transactions t WHERE t.reference_type = 'BATTLE' GROUP BY t.reference_id, t.user_id
    )
    SELECT m.battle_id::text AS battle_id, m.user_id::text AS user_id, m.net::text AS net
    FROM movements m JOIN battles b ON b.id = m.battle_id
    LEFT JOIN battle_players p ON p.battle_id = m.battle_id AND p.user_id = m.user_id
    WHERE m.net <> CASE WHEN p.user_id IS NOT NULL AND b.status <> 'CANCELLED' THEN -b.entry_price_cents ELSE 0 END`
  return { discrepancies, battles }
})
const healthyLedger = { discrepancies: [], battles: [] }

/** The winners (docs/rules.md#battle-winners), computed from the totals the API reports. */
const expectedWinners = (mode: string, all: ReadonlyArray<Player>) => {
  if (mode === "TEAM") {
    const sum = (team: number) => all.filter((p) => p.team === team).reduce((s, p) => s + p.totalValueCents, 0)
    const [one, two] = [sum(1), sum(2)]
    return all.filter((p) => one === two || p.team === (one > two ? 1 : 2)).map((p) => p.user.id)
  }
  const totals = all.map((p) => p.totalValueCents)
  const best = mode === "NORMAL" ? Math.max(...totals) : Math.min(...totals)
  return all.filter((p) => p.totalValueCents === best).map((p) => p.user.id)
}

/** Plays a whole battle: the first player creates, the others join. Returns the finished battle. */
const playBattle = (client: TestClient, mode: string, count: 2 | 3 | 4, caseIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const entry = caseIds.length * 500
    const fighters = yield* players(client, count, entry)
    const created = yield* client.post("/api/battles", { caseIds, mode, maxPlayers: count }, fighters[0]!.auth)
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ status: "WAITING", mode, maxPlayers: count, entryPriceCents: entry, rounds: [] })
    // The creation answers the battle exactly as it is stored.
    expect(created.body).toEqual((yield* client.get(`/api/battles/${created.body.id}`, fighters[0]!.auth)).body)
    // Watching the live drops from before the last join, which records and announces them.
    const stream = yield* client.open("/api/live-drops/stream", { headers: fighters[0]!.auth })
    const reader = stream.body!.getReader()
    const decoder = new TextDecoder()
    let text = ""
    /** The first `n` drops announced on the stream. */
    const announced = (n: number) =>
      Effect.gen(function*() {
        const dropsIn = () => text.split("event: drop\ndata: ").slice(1).map((event) => JSON.parse(event.split("\n")[0]!))
        while (dropsIn().length < n) text += decoder.decode((yield* Effect.promise(() => reader.read())).value)
        yield* Effect.promise(() => reader.cancel())
        return dropsIn().slice(0, n)
      })
    let last = created
    for (const fighter of fighters.slice(1)) {
      last = yield* client.post(`/api/battles/${created.body.id}/join`, undefined, fighter.auth)
      expect(last.status).toBe(200)
    }
    // The join that filled it answers the battle exactly as it is stored.
    expect(last.body).toEqual((yield* client.get(`/api/battles/${created.body.id}`, fighters[0]!.auth)).body)
    return { battle: last.body as Battle, fighters, announced }
  })

/**
 * Waits (busily: the test clock does not move) until another session of this database waits for a lock matching
 * `which`. Inside a transaction pg_stat_activity keeps what it first showed, hence the snapshot cleared each time.
 */
const untilWaiting = (which: Statement.Fragment) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.repeat(
      Effect.zipRight(
        sql`SELECT pg_stat_clear_snapshot()`,
        sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE NOT l.granted AND a.datname = current_database() AND (${which})`
      ),
      { until: ([row]) => row!.n > 0, times: 20_000 }
    ).pipe(Effect.flatMap(([row]) => row!.n > 0 ? Effect.void : Effect.dieMessage("no session came to wait"))))

layer(TestDatabase)("battles", (it) => {
  for (const [mode, count] of [["NORMAL", 2], ["NORMAL", 3], ["NORMAL", 4], ["CRAZY", 2], ["CRAZY", 3], ["CRAZY", 4], ["TEAM", 4]] as const) {
    it.scoped(`${mode} with ${count} players: rolls, winners, settlement, inventory, verification`, () =>
      Effect.gen(function*() {
        const client = yield* makeTestClient(appOptions)
        const receiver = yield* client.post(
          "/api/webhooks",
          { url: "https://receiver.example.com/battles", events: ["battle.finished"], secret: "receiver-secret-0123" },
          { authorization: "Bearer test-admin-token" }
        )
        expect(receiver.status).toBe(201)
        const { kase } = yield* makeCase({ priceCents: 500n })
        const caseIds = [kase.id, kase.id, kase.id].map(String)
        const { announced, battle, fighters } = yield* playBattle(client, mode, count, caseIds)

        expect(battle.status).toBe("FINISHED")
        expect(battle.players.map((p) => p.slot)).toEqual(Array.from({ length: count }, (_, i) => i + 1))
        expect(battle.players.map((p) => p.team)).toEqual(mode === "TEAM" ? [1, 1, 2, 2] : Array(count).fill(null))
        expect(battle.rounds.length).toBe(count * 3)
        for (const player of battle.players) {
          const mine = battle.rounds.filter((r) => r.userId === player.user.id)
          expect(mine.map((r) => r.roundNumber)).toEqual([1, 2, 3])
          expect(player.totalValueCents).toBe(mine.reduce((sum, r) => sum + r.item.valueCents, 0))
        }
        const winners = expectedWinners(mode, battle.players)
        expect(battle.players.filter((p) => p.isWinner).map((p) => p.user.id)).toEqual(winners)
        for (const fighter of fighters) expect(yield* balanceOf(client, fighter.auth)).toBe(0)

        // Settlement: what dropped is split among winners or goes to the pool; nothing reaches a loser.
        const settled = yield* client.get(`/api/battles/${battle.id}/settlements`, fighters[0]!.auth)
        expect(settled.status).toBe(200)
        const totalDropped = battle.rounds.reduce((sum, r) => sum + r.item.valueCents, 0)
        const fairShare = Math.floor(totalDropped / winners.length)
        const records = settled.body.settlements as ReadonlyArray<{ type: string; userId: string | null; item: { id: string; valueCents: number }; roundNumber: number | null }>
        const sum = (type: string) => records.filter((r) => r.type === type).reduce((s, r) => s + r.item.valueCents, 0)
        expect(settled.body.fairSharePerWinner).toBe(fairShare)
        expect(settled.body.summary).toEqual({
          totalDropped,
          removedToPool: sum("REMOVED_TO_POOL"),
          addedFromPool: sum("ADDED_FROM_POOL"),
          winnersCount: winners.length
        })
        expect(sum("DROPPED") + sum("REMOVED_TO_POOL")).toBe(totalDropped)
        for (const record of records) {
          if (record.type === "REMOVED_TO_POOL") {
            expect(record.userId).toBeNull()
            expect(record.item.valueCents).toBeGreaterThan(fairShare)
          } else {
            expect(winners).toContain(record.userId)
          }
          if (record.type === "DROPPED") expect(record.item.valueCents).toBeLessThanOrEqual(fairShare)
          expect(record.roundNumber === null).toBe(record.type === "ADDED_FROM_POOL")
        }
        // Each fighter's inventory holds exactly the items settled to them, from the battle.
        for (const fighter of fighters) {
          const inventory = (yield* client.get("/api/inventory?limit=100", fighter.auth)).body
          const received = records.filter((r) => r.userId === fighter.id).map((r) => r.item.id).sort()
          const held = (inventory.items as ReadonlyArray<{ item: { id: string }; source: string }>)
            .filter((e) => e.source === "BATTLE").map((e) => e.item.id).sort()
          expect(held).toEqual(received)
        }

        // Every roll verifies for a participant; a stranger sees nothing.
        for (const round of battle.rounds) {
          expect(round.serverSeed).toMatch(/^[0-9a-f]{64}$/)
          const verified = yield* client.get(`/api/provably-fair/verify/${round.id}?type=battle-roll`, fighters[count - 1]!.auth)
          expect(verified.status).toBe(200)
          expect(verified.body).toMatchObject({ rollId: round.id, roll: round.roll, calculatedRoll: round.roll, isValid: true })
        }
        const stranger = yield* fundedPlayer(client, `stranger-${++logins}`, 0)
        expect((yield* client.get(`/api/provably-fair/verify/${battle.rounds[0]!.id}?type=battle-roll`, stranger.auth)).status).toBe(404)

        const sql = yield* SqlClient.SqlClient
        const outbox = yield* sql<{ payload: string }>`
          SELECT payload FROM webhook_deliveries WHERE webhook_id = ${receiver.body.id} AND event = 'battle.finished'`
        expect(outbox.map((row) => JSON.parse(row.payload).data)).toEqual([{ battleId: battle.id, winnerIds: winners, totalValueCents: totalDropped }])
        // Every record given to a winner points to its own BATTLE entry of that user and item, and
        // every movement has its audit entry.
        const links = yield* sql<{ id: string; userId: string | null; itemId: string; entryId: string | null; entryUserId: string | null; entryItemId: string | null; entrySource: string | null }>`
          SELECT s.id::text, s.user_id::text, s.item_id::text, s.inventory_item_id::text AS entry_id,
                 e.user_id::text AS entry_user_id, e.item_id::text AS entry_item_id, e.source AS entry_source
          FROM battle_settlements s LEFT JOIN inventory_items e ON e.id = s.inventory_item_id
          WHERE s.battle_id = ${battle.id}`
        expect(links).toHaveLength(records.length)
        for (const link of links) {
          if (link.userId === null) expect(link.entryId).toBeNull()
          else expect(link).toMatchObject({ entryUserId: link.userId, entryItemId: link.itemId, entrySource: "BATTLE" })
        }
        const entryIds = links.flatMap((link) => (link.entryId === null ? [] : [link.entryId]))
        expect(new Set(entryIds).size).toBe(entryIds.length)
        const audited = yield* sql<{ entityId: string }>`
          SELECT entity_id FROM audit_logs WHERE action = 'BATTLE_SETTLEMENT' AND metadata->>'battleId' = ${battle.id}`
        expect(audited.map((a) => a.entityId).sort()).toEqual(links.map((link) => link.id).sort())
        const drops = (yield* client.get("/api/live-drops/recent?limit=50", fighters[0]!.auth)).body.drops as ReadonlyArray<{ source: string; user: { id: string } }>
        const received = records.filter((r) => r.userId !== null).length
        expect(drops.filter((d) => d.source === "BATTLE" && winners.includes(d.user.id)).length).toBe(Math.min(received, 50))
        // Announced as recorded, in one publication after the commit.
        expect(yield* announced(received)).toEqual(drops.filter((d) => d.source === "BATTLE").slice(0, received).reverse())
        expect(yield* ledgerProblems).toEqual(healthyLedger)
      }))
  }

  it.scoped("an item that a waiting battle may roll cannot be deleted, though its case no longer has it (sql/0029)", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { items, kase } = yield* makeCase({ priceCents: 500n })
      const [creator] = yield* players(client, 1, 500)
      const created = yield* client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, creator!.auth)
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM case_items WHERE case_id = ${kase.id}`
      const deleteJackpot = Effect.flip(sql`DELETE FROM items WHERE id = ${items.jackpot!.id}`).pipe(
        Effect.map((error) => (error.cause as { code?: string }).code)
      )
      expect(yield* deleteJackpot).toBe("23503")
      expect((yield* client.post(`/api/battles/${created.body.id}/leave`, undefined, creator!.auth)).body.status).toBe("CANCELLED")
      yield* sql`DELETE FROM items WHERE id = ${items.jackpot!.id}`
      expect(yield* sql`SELECT 1 FROM items WHERE id = ${items.jackpot!.id}`).toEqual([])
    }))

  it.scoped("a battle is never deleted, renumbered or truncated: its seats, rounds, rolls and settlements name it without a key (sql/0033)", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 500n })
      const { battle } = yield* playBattle(client, "NORMAL", 2, [String(kase.id)])
      const sql = yield* SqlClient.SqlClient
      const [bare] = yield* sql<{ id: string }>`
        INSERT INTO battles (creator_id, mode, max_players, entry_price_cents, player_count, server_seed, server_seed_hash, created_at)
        SELECT creator_id, mode, max_players, entry_price_cents, 0, server_seed, server_seed_hash, created_at FROM battles WHERE id = ${battle.id}
        RETURNING id::text AS id`
      yield* expectRowKept("battles", bare!.id)
      const [left] = yield* sql<{ battles: number; seats: number; rounds: number; rolls: number; settlements: number }>`
        SELECT (SELECT count(*) FROM battles WHERE id IN (${bare!.id}, ${battle.id}))::int AS battles,
               (SELECT count(*) FROM battle_players WHERE battle_id = ${battle.id})::int AS seats,
               (SELECT count(*) FROM battle_cases WHERE battle_id = ${battle.id})::int AS rounds,
               (SELECT count(*) FROM battle_rolls WHERE battle_id = ${battle.id})::int AS rolls,
               (SELECT count(*) > 0 FROM battle_settlements WHERE battle_id = ${battle.id})::int AS settlements`
      expect(left).toEqual({ battles: 2, seats: 2, rounds: 1, rolls: 2, settlements: 1 })
    }))

  it.scoped("a tampered roll no longer verifies", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 500n })
      const { battle, fighters } = yield* playBattle(client, "NORMAL", 2, [String(kase.id)])
      const sql = yield* SqlClient.SqlClient
      const round = battle.rounds[0]!
      yield* sql`UPDATE battle_rolls SET roll = ${(round.roll % 10_000_000) + 1} WHERE id = ${round.id}`
      const verified = yield* client.get(`/api/provably-fair/verify/${round.id}?type=battle-roll`, fighters[0]!.auth)
      expect(verified.body.isValid).toBe(false)
      expect(verified.body.calculatedRoll).toBe(round.roll)
    }))

  it.scoped("leaving refunds and frees the slot; the creator leaving cancels and refunds everyone", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 700n })
      const [creator, second, third, late] = yield* players(client, 4, 1_400)
      const created = yield* client.post("/api/battles", { caseIds: [String(kase.id), String(kase.id)], mode: "NORMAL", maxPlayers: 3 }, creator!.auth)
      const id = created.body.id as string
      expect(yield* balanceOf(client, creator!.auth)).toBe(0)
      expect((yield* client.post(`/api/battles/${id}/join`, undefined, second!.auth)).body.players.length).toBe(2)
      expect(yield* client.post(`/api/battles/${id}/join`, undefined, second!.auth))
        .toMatchObject({ status: 409, body: { statusCode: 409, message: "Already joined" } })
      expect(yield* client.post(`/api/battles/${id}/leave`, undefined, third!.auth))
        .toMatchObject({ status: 400, body: { message: "You are not in this battle" } })

      const left = yield* client.post(`/api/battles/${id}/leave`, undefined, second!.auth)
      expect(left.status).toBe(200)
      expect(left.body.players.map((p: Player) => p.user.id)).toEqual([creator!.id])
      expect(yield* balanceOf(client, second!.auth)).toBe(1_400)
      const rejoined = yield* client.post(`/api/battles/${id}/join`, undefined, third!.auth)
      expect(rejoined.body.players.map((p: Player) => [p.slot, p.user.id])).toEqual([[1, creator!.id], [2, third!.id]])

      const cancelled = yield* client.post(`/api/battles/${id}/leave`, undefined, creator!.auth)
      expect(cancelled.body.status).toBe("CANCELLED")
      for (const player of [creator!, second!, third!]) expect(yield* balanceOf(client, player.auth)).toBe(1_400)
      expect(yield* client.post(`/api/battles/${id}/join`, undefined, late!.auth))
        .toMatchObject({ status: 409, body: { message: "Battle is not open" } })
      expect((yield* client.post(`/api/battles/${id}/leave`, undefined, third!.auth)).status).toBe(409)
      expect((yield* client.get(`/api/battles/${id}/settlements`, late!.auth)).body).toEqual({ statusCode: 409, message: "Battle is not finished" })
      expect(yield* balanceOf(client, late!.auth)).toBe(1_400)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("creation is validated; unknown or inactive cases are 404; a join without the money takes no slot", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 500n })
      const { kase: inactive } = yield* makeCase({ priceCents: 500n, isActive: false })
      const [rich, poor] = yield* players(client, 2, 500)
      const id = String(kase.id)
      const post = (body: unknown) => client.post("/api/battles", body, rich!.auth)

      expect((yield* post({ caseIds: [], mode: "NORMAL", maxPlayers: 2 })).body.errors).toEqual([{ field: "caseIds", message: "must name 1 to 25 cases" }])
      expect((yield* post({ caseIds: Array(26).fill(id), mode: "NORMAL", maxPlayers: 2 })).status).toBe(400)
      expect((yield* post({ caseIds: [id], mode: "TEAM", maxPlayers: 2 })).body.errors).toEqual([
        { field: "maxPlayers", message: "must be 4 for a TEAM battle (slots 1-2 against 3-4)" }
      ])
      expect((yield* post({ caseIds: [id], mode: "SOLO", maxPlayers: 5 })).body.errors.map((e: { field: string }) => e.field)).toEqual(["mode", "maxPlayers"])
      expect(yield* post({ caseIds: ["999999"], mode: "NORMAL", maxPlayers: 2 })).toMatchObject({ status: 404, body: { message: "Case not found" } })
      expect((yield* post({ caseIds: [String(inactive.id)], mode: "NORMAL", maxPlayers: 2 })).status).toBe(404)
      expect(yield* post({ caseIds: [id, id], mode: "NORMAL", maxPlayers: 2 })).toMatchObject({ status: 400, body: { message: "Insufficient balance" } })
      expect(yield* balanceOf(client, rich!.auth)).toBe(500)
      // Nothing of the refused creation was written: no battle, no seat.
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT id FROM battles WHERE creator_id = ${rich!.id}`).toEqual([])
      expect(yield* sql`SELECT battle_id FROM battle_players WHERE user_id = ${rich!.id}`).toEqual([])

      const created = yield* post({ caseIds: [id], mode: "NORMAL", maxPlayers: 2 })
      const broke = yield* fundedPlayer(client, `broke-${++logins}`, 499)
      expect(yield* client.post(`/api/battles/${created.body.id}/join`, undefined, broke.auth))
        .toMatchObject({ status: 400, body: { message: "Insufficient balance" } })
      const battle = (yield* client.get(`/api/battles/${created.body.id}`, rich!.auth)).body
      expect(battle).toMatchObject({ status: "WAITING", players: [{ slot: 1, user: { id: rich!.id } }] })
      expect((yield* client.post(`/api/battles/${created.body.id}/join`, undefined, poor!.auth)).body.status).toBe("FINISHED")
      expect((yield* client.get("/api/battles/999999", rich!.auth)).status).toBe(404)
      const finished = (yield* client.get("/api/battles?status=FINISHED", rich!.auth)).body
      expect(finished.battles.map((b: Battle) => b.id)).toContain(created.body.id)
      expect(finished.battles.every((b: Battle) => b.status === "FINISHED")).toBe(true)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("a case repriced or deactivated between a creation's read and its debit: the creation starts over", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // The creation takes the battle's server seed between its two statements: an administrator's changes there,
      // one per attempt.
      let between: Array<Effect.Effect<unknown, unknown>> = []
      const seeded = yield* Effect.provide(Randomness, Randomness.seeded("battle-race"))
      const randomness = Layer.succeed(Randomness, {
        bytes: (length) =>
          Effect.suspend(() => {
            const change = between.shift()
            return Effect.zipRight(change === undefined ? Effect.void : Effect.orDie(change), seeded.bytes(length))
          })
      })
      const client = yield* makeTestClient({ ...appOptions, randomness })
      const { kase } = yield* makeCase({ priceCents: 500n })
      const [player] = yield* players(client, 1, 2_000)
      const post = client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, player!.auth)

      between = [sql`UPDATE cases SET price_cents = 700 WHERE id = ${kase.id}`]
      const repriced = yield* post
      expect(repriced).toMatchObject({ status: 201, body: { entryPriceCents: 700, cases: [{ priceCents: 700 }] } })
      expect(repriced.body).toEqual((yield* client.get(`/api/battles/${repriced.body.id}`, player!.auth)).body)
      expect(yield* balanceOf(client, player!.auth)).toBe(1_300)

      between = [sql`UPDATE cases SET is_active = false WHERE id = ${kase.id}`]
      expect(yield* post).toMatchObject({ status: 404, body: { message: "Case not found" } })
      expect(yield* balanceOf(client, player!.auth)).toBe(1_300)
      expect((yield* sql`SELECT id FROM battles WHERE creator_id = ${player!.id}`).length).toBe(1)

      // A catalog that keeps changing under the creation: after three attempts, 409 and nothing moved.
      yield* sql`UPDATE cases SET is_active = true WHERE id = ${kase.id}`
      between = [800, 900, 1_000].map((price) => sql`UPDATE cases SET price_cents = ${price} WHERE id = ${kase.id}`)
      expect(yield* post).toMatchObject({ status: 409, body: { message: "Please retry" } })
      expect(yield* balanceOf(client, player!.auth)).toBe(1_300)
      expect((yield* sql`SELECT id FROM battles WHERE creator_id = ${player!.id}`).length).toBe(1)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("players opening cases while their battle fills: no nonce is rolled twice, every roll verifies", () =>
    Effect.gen(function*() {
      const lifted = { count: 10_000, windowMs: 60_000 }
      const client = yield* makeTestClient({ config: { ...appOptions.config, rateLimits: { ...appOptions.config.rateLimits, caseOpen: lifted } } })
      const { kase } = yield* makeCase({ priceCents: 100n })
      const battles: Array<{ id: string; auth: Record<string, string> }> = []
      for (let i = 0; i < 6; i++) {
        const [creator, joiner] = yield* players(client, 2, 400)
        const created = yield* client.post("/api/battles", { caseIds: [String(kase.id), String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, creator!.auth)
        battles.push({ id: created.body.id, auth: creator!.auth })
        // The join reads the players' fairness states and writes with them; the openings move them meanwhile.
        const answers = yield* Effect.all([
          client.post(`/api/battles/${created.body.id}/join`, undefined, joiner!.auth),
          ...[creator, joiner].map((p) => client.post(`/api/cases/${kase.id}/open`, undefined, p!.auth))
        ], { concurrency: "unbounded" })
        expect(answers.map((a) => a.status)).toEqual([200, 200, 200])
      }
      const sql = yield* SqlClient.SqlClient
      const used = yield* sql<{ userId: string; nonce: number }>`
        SELECT user_id::text, nonce FROM case_openings
        UNION ALL SELECT user_id::text, nonce FROM battle_rolls WHERE battle_id = ANY(${battles.map((b) => b.id)}::bigint[])`
      expect(used.length).toBe(6 * 2 + 6 * 2 * 2)
      const keys = used.map((u) => `${u.userId}:${u.nonce}`)
      expect(new Set(keys).size).toBe(keys.length)
      for (const { auth, id } of battles) {
        const battle = (yield* client.get(`/api/battles/${id}`, auth)).body as Battle
        expect(battle.status).toBe("FINISHED")
        for (const round of battle.rounds) {
          const verified = yield* client.get(`/api/provably-fair/verify/${round.id}?type=battle-roll`, auth)
          expect(verified.body).toMatchObject({ isValid: true, nonce: round.nonce })
        }
      }
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  // Needs connections of its own beside the app's (PGlite has one).
  it.scoped.skipIf(!usingRealPostgres)("a seat changing hands between the filling join's read and write: the rolls are the seated players'", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 500n })
      const sql = yield* SqlClient.SqlClient
      const [a, b, c, d] = yield* players(client, 4, 1_000)
      const created = yield* client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 3 }, a!.auth)
      const id = created.body.id as string
      expect((yield* client.post(`/api/battles/${id}/join`, undefined, b!.auth)).status).toBe(200)
      // C's join reads A and B, then its write waits for a table only a finishing battle writes; meanwhile B leaves and
      // D takes the seat, so the battle's count is 2 again when the write goes on.
      // The requests run in fibers forked before the transaction, so that they do not run in it.
      const [locked, waiting, swapped] = [yield* Deferred.make<void>(), yield* Deferred.make<void>(), yield* Deferred.make<void>()]
      const filling = yield* Effect.fork(Effect.zipRight(Deferred.await(locked), client.post(`/api/battles/${id}/join`, undefined, c!.auth)))
      const swap = yield* Effect.fork(Effect.gen(function*() {
        yield* Deferred.await(waiting)
        const left = yield* client.post(`/api/battles/${id}/leave`, undefined, b!.auth)
        const joined = yield* client.post(`/api/battles/${id}/join`, undefined, d!.auth)
        yield* Deferred.succeed(swapped, undefined)
        return [left.status, joined.status]
      }))
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`LOCK TABLE battle_settlements IN ACCESS EXCLUSIVE MODE`
        yield* Deferred.succeed(locked, undefined)
        yield* untilWaiting(sql`l.relation = 'battle_settlements'::regclass`)
        yield* Deferred.succeed(waiting, undefined)
        yield* Deferred.await(swapped)
      }))
      expect(yield* Fiber.join(swap)).toEqual([200, 200])
      const answer = yield* Fiber.join(filling)
      expect(answer.status).toBe(200)
      const battle = (yield* client.get(`/api/battles/${id}`, a!.auth)).body as Battle
      expect(answer.body).toEqual(battle)
      expect(battle.status).toBe("FINISHED")
      const seated = [a!.id, c!.id, d!.id].sort()
      expect(battle.players.map((p) => p.user.id).sort()).toEqual(seated)
      expect([...new Set(battle.rounds.map((r) => r.userId))].sort()).toEqual(seated)
      expect(yield* balanceOf(client, b!.auth)).toBe(1_000)
      const received = yield* sql<{ userId: string }>`
        SELECT DISTINCT user_id::text FROM battle_settlements WHERE battle_id = ${id} AND user_id IS NOT NULL`
      for (const row of received) expect(seated).toContain(row.userId)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped.skipIf(!usingRealPostgres)("a filling join under an idempotency key that meets a deadlock runs again: 200, once", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 500n })
      const sql = yield* SqlClient.SqlClient
      const [a, b] = yield* players(client, 2, 500)
      const created = yield* client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, a!.auth)
      const id = created.body.id as string
      // The join's statement takes the battle row, then waits for A's fairness row, held here; asking for the battle
      // row then closes a cycle. PostgreSQL aborts the statement of whichever backend looks for the cycle first, at its
      // deadlock_timeout (1 s); this transaction's is a minute so that it is the join's, whatever the machine's load.
      // Under the key, the join runs in the request's transaction, which must run again (not go the careful way in it).
      const locked = yield* Deferred.make<void>()
      const join = yield* Effect.fork(Effect.zipRight(
        Deferred.await(locked),
        client.post(`/api/battles/${id}/join`, undefined, { ...b!.auth, "idempotency-key": "join-once" })
      ))
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SET LOCAL deadlock_timeout = '1min'`
        yield* sql`SELECT 1 FROM fairness_seeds WHERE user_id = ${a!.id} FOR UPDATE`
        yield* Deferred.succeed(locked, undefined)
        yield* untilWaiting(sql`l.locktype = 'transactionid'`)
        yield* sql`SELECT 1 FROM battles WHERE id = ${id} FOR UPDATE`
      }))
      // The request's transaction runs again after a pause (on the test clock).
      yield* TestClock.adjust("1 second")
      const answer = yield* Fiber.join(join)
      expect(answer.status).toBe(200)
      expect(answer.body.status).toBe("FINISHED")
      expect(answer.body).toEqual((yield* client.get(`/api/battles/${id}`, a!.auth)).body)
      expect(yield* balanceOf(client, b!.auth)).toBe(0)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  for (const { maxPlayers, mode } of [{ maxPlayers: 2, mode: "CRAZY" }, { maxPlayers: 4, mode: "NORMAL" }] as const) {
    const seats = maxPlayers - 1
    it.scoped(`10 concurrent joins of a ${maxPlayers}-player battle: ${seats} of them seated, each once, the last one fills it; nobody else is charged`, () =>
      Effect.gen(function*() {
        const client = yield* makeTestClient(appOptions)
        const { kase } = yield* makeCase({ priceCents: 900n })
        const [creator] = yield* players(client, 1, 900)
        const contenders = yield* players(client, 10, 900)
        const created = yield* client.post("/api/battles", { caseIds: [String(kase.id)], mode, maxPlayers }, creator!.auth)
        const answers = yield* Effect.all(
          contenders.map((c) => client.post(`/api/battles/${created.body.id}/join`, undefined, c.auth)),
          { concurrency: "unbounded" }
        )
        expect(answers.filter((a) => a.status === 200).length).toBe(seats)
        expect(answers.filter((a) => a.status === 409).map((a) => a.body.message)).toEqual(Array(10 - seats).fill("Battle is not open"))
        const battle = (yield* client.get(`/api/battles/${created.body.id}`, creator!.auth)).body as Battle
        expect(battle.status).toBe("FINISHED")
        expect(battle.players.map((p) => p.slot)).toEqual(Array.from({ length: maxPlayers }, (_, i) => i + 1))
        const seated = contenders.filter((_, i) => answers[i]!.status === 200)
        expect(battle.players.map((p) => p.user.id).sort()).toEqual([creator!.id, ...seated.map((c) => c.id)].sort())
        // Each seated player's answer shows the battle with its seat taken.
        for (const [i, answer] of answers.entries()) {
          if (answer.status === 200) expect((answer.body as Battle).players.some((p) => p.user.id === contenders[i]!.id)).toBe(true)
        }
        for (const contender of contenders) {
          expect(yield* balanceOf(client, contender.auth)).toBe(seated.includes(contender) ? 0 : 900)
        }
        expect(yield* ledgerProblems).toEqual(healthyLedger)
      }))
  }

  it.scoped("one player joining a 4-player battle 5 times at once: one seat, charged once; the others 409 Already joined", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 400n })
      const [creator, joiner] = yield* players(client, 2, 2_000)
      const created = yield* client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 4 }, creator!.auth)
      const answers = yield* Effect.all(
        Array.from({ length: 5 }, () => client.post(`/api/battles/${created.body.id}/join`, undefined, joiner!.auth)),
        { concurrency: "unbounded" }
      )
      expect(answers.filter((a) => a.status === 200).length).toBe(1)
      expect(answers.filter((a) => a.status === 409).map((a) => a.body.message)).toEqual(Array(4).fill("Already joined"))
      const battle = (yield* client.get(`/api/battles/${created.body.id}`, creator!.auth)).body as Battle
      expect(battle.status).toBe("WAITING")
      expect(battle.players.map((p) => [p.slot, p.user.id])).toEqual([[1, creator!.id], [2, joiner!.id]])
      expect(yield* balanceOf(client, joiner!.auth)).toBe(1_600)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("a join that leaves the battle waiting answers as GET does", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 300n })
      const [creator, second, third] = yield* players(client, 3, 600)
      const created = yield* client.post("/api/battles", { caseIds: [String(kase.id), String(kase.id)], mode: "TEAM", maxPlayers: 4 }, creator!.auth)
      expect(created.status).toBe(201)
      for (const joiner of [second!, third!]) {
        const joined = yield* client.post(`/api/battles/${created.body.id}/join`, undefined, joiner.auth)
        expect(joined.status).toBe(200)
        expect(joined.body).toEqual((yield* client.get(`/api/battles/${created.body.id}`, joiner.auth)).body)
        expect(yield* balanceOf(client, joiner.auth)).toBe(0)
      }
      const battle = (yield* client.get(`/api/battles/${created.body.id}`, creator!.auth)).body as Battle
      expect(battle.status).toBe("WAITING")
      expect(battle.players.map((p) => [p.slot, p.team])).toEqual([[1, 1], [2, 1], [3, 2]])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))
})

const admin = { authorization: "Bearer test-admin-token" }
const hook = (name: string) => ({ url: `https://${name}.example.com/hooks`, events: ["battle.finished"], secret: `secret-of-${name}-0123` })

/** Two applications over one database, as two instances behind a load balancer, and the same players on each. */
const twoInstances = (count: number) =>
  Effect.gen(function*() {
    const a = yield* makeTestClient({ ...appOptions, randomness: Randomness.seeded("instance-a") })
    const b = yield* makeTestClient({ ...appOptions, randomness: Randomness.seeded("instance-b") })
    const { kase } = yield* makeCase({ priceCents: 500n })
    const names = Array.from({ length: count }, () => `kept-${++logins}`)
    const onA = yield* Effect.forEach(names, (login) => fundedPlayer(a, login, 5_000))
    const onB = yield* Effect.forEach(names, (login) => fundedPlayer(b, login, 0))
    // Each opens a case through A, which then knows their fairness states.
    for (const player of onA) expect((yield* a.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).status).toBe(200)
    return { a, b, kase, onA, onB }
  })

/** A 2-player battle created and filled through `client`; its finished view. */
const duel = (client: TestClient, caseId: string, creator: Record<string, string>, joiner: Record<string, string>) =>
  Effect.gen(function*() {
    const created = yield* client.post("/api/battles", { caseIds: [caseId], mode: "NORMAL", maxPlayers: 2 }, creator)
    expect(created.status).toBe(201)
    const joined = yield* client.post(`/api/battles/${created.body.id}/join`, undefined, joiner)
    expect(joined.status).toBe(200)
    expect(joined.body).toEqual((yield* client.get(`/api/battles/${created.body.id}`, creator)).body)
    return joined.body as Battle
  })

/**
 * A battle's next join on the instance that created it goes with no read, from what that instance keeps: the battle,
 * the players' fairness states, the receivers of `battle.finished` (docs/decisions.md "Battles kept for their
 * joins"). Whatever changed elsewhere since, the join is made as the battle, the states, the receivers and the
 * catalog are now.
 */
layer(TestDatabase)("battles kept by an instance", (it) => {
  it.scoped("a receiver registered since the instance last read them gets the battles it finishes", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { a, kase, onA } = yield* twoInstances(2)
      const first = (yield* a.post("/api/webhooks", hook("first"), admin)).body.id as string
      // A battle through A: A reads the receivers with its join, and remembers them.
      yield* duel(a, String(kase.id), onA[0]!.auth, onA[1]!.auth)
      const second = (yield* a.post("/api/webhooks", hook("second"), admin)).body.id as string
      const battle = yield* duel(a, String(kase.id), onA[0]!.auth, onA[1]!.auth)
      const receivers = yield* sql<{ webhookId: string }>`
        SELECT webhook_id::text FROM webhook_deliveries
        WHERE event = 'battle.finished' AND payload::jsonb -> 'data' ->> 'battleId' = ${battle.id} ORDER BY webhook_id`
      expect(receivers.map((r) => r.webhookId)).toEqual([first, second])
    }))

  for (const maxPlayers of [2, 3] as const) {
    it.scoped(`a case renamed after a ${maxPlayers}-player battle was kept: the join answers as GET does`, () =>
      Effect.gen(function*() {
        const { a, kase, onA } = yield* twoInstances(2)
        const admin = yield* fundedPlayer(a, "root", 0)
        yield* duel(a, String(kase.id), onA[0]!.auth, onA[1]!.auth)
        const created = yield* a.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers }, onA[0]!.auth)
        const renamed = yield* a.request(`/api/admin/cases/${kase.id}`, {
          method: "PUT",
          headers: { ...admin.auth, "content-type": "application/json" },
          body: JSON.stringify({ name: "Renamed case" })
        })
        expect(renamed.status).toBe(200)
        const joined = yield* a.post(`/api/battles/${created.body.id}/join`, undefined, onA[1]!.auth)
        expect(joined.status).toBe(200)
        const battle = (yield* a.get(`/api/battles/${created.body.id}`, onA[0]!.auth)).body
        expect(battle.cases.map((c: { name: string }) => c.name)).toEqual(["Renamed case"])
        expect(joined.body).toEqual(battle)
      }))
  }

  it.scoped("a client seed set through another instance is the one a kept battle rolls with", () =>
    Effect.gen(function*() {
      const { a, b, kase, onA, onB } = yield* twoInstances(2)
      yield* duel(a, String(kase.id), onA[0]!.auth, onA[1]!.auth)
      const changed = yield* b.request("/api/provably-fair/client-seed", {
        method: "PUT",
        headers: { ...onB[0]!.auth, "content-type": "application/json" },
        body: JSON.stringify({ clientSeed: "set-through-b" })
      })
      expect(changed.status).toBe(200)
      const battle = yield* duel(a, String(kase.id), onA[0]!.auth, onA[1]!.auth)
      const creatorRolls = battle.rounds.filter((r) => r.userId === onA[0]!.id)
      expect(creatorRolls.length).toBe(1)
      for (const round of creatorRolls) {
        const verified = yield* a.get(`/api/provably-fair/verify/${round.id}?type=battle-roll`, onA[0]!.auth)
        expect(verified.body).toMatchObject({ clientSeed: "set-through-b", isValid: true })
      }
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("a seat changing hands through another instance: the kept battle is filled by the players seated now", () =>
    Effect.gen(function*() {
      const { a, b, kase, onA, onB } = yield* twoInstances(4)
      const [creator, leaver, newcomer, filler] = [0, 1, 2, 3]
      // A remembers the receivers (none) with a first battle's join.
      yield* duel(a, String(kase.id), onA[creator]!.auth, onA[filler]!.auth)
      const created = yield* a.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 3 }, onA[creator]!.auth)
      const id = created.body.id as string
      expect((yield* a.post(`/api/battles/${id}/join`, undefined, onA[leaver]!.auth)).status).toBe(200)
      // Through B: the second player leaves and another takes the seat, so the count is as A keeps it.
      expect((yield* b.post(`/api/battles/${id}/leave`, undefined, onB[leaver]!.auth)).status).toBe(200)
      expect((yield* b.post(`/api/battles/${id}/join`, undefined, onB[newcomer]!.auth)).status).toBe(200)
      const filled = yield* a.post(`/api/battles/${id}/join`, undefined, onA[filler]!.auth)
      expect(filled.status).toBe(200)
      const battle = (yield* a.get(`/api/battles/${id}`, onA[creator]!.auth)).body as Battle
      expect(filled.body).toEqual(battle)
      const seated = [creator, newcomer, filler].map((i) => onA[i]!.id).sort()
      expect(battle.players.map((p) => p.user.id).sort()).toEqual(seated)
      expect([...new Set(battle.rounds.map((r) => r.userId))].sort()).toEqual(seated)
      expect(yield* balanceOf(a, onA[leaver]!.auth)).toBe(5_000 - 500)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))
})

// Its own database: the battle row it rewrites no longer matches its creator's entry (the ledger checks above).
layer(TestDatabase)("battles kept by an instance, a restored database", (it) => {
  it.scoped("a kept battle's row rewritten behind the instance's back (a restored database): debited and rolled as stored", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { a, kase, onA } = yield* twoInstances(2)
      yield* duel(a, String(kase.id), onA[0]!.auth, onA[1]!.auth)
      const created = yield* a.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, onA[0]!.auth)
      const before = yield* balanceOf(a, onA[1]!.auth)
      yield* sql`
        UPDATE battles SET entry_price_cents = 600, server_seed = 'restored-seed',
                           server_seed_hash = encode(sha256(convert_to('restored-seed', 'UTF8')), 'hex')
        WHERE id = ${created.body.id}`
      const joined = yield* a.post(`/api/battles/${created.body.id}/join`, undefined, onA[1]!.auth)
      expect(joined.status).toBe(200)
      expect(yield* balanceOf(a, onA[1]!.auth)).toBe(before - 600)
      for (const round of (joined.body as Battle).rounds) {
        const verified = yield* a.get(`/api/provably-fair/verify/${round.id}?type=battle-roll`, onA[0]!.auth)
        expect(verified.body).toMatchObject({ serverSeed: "restored-seed", isValid: true })
      }
    }))
})
