import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { readdirSync } from "node:fs"
import { loadSqlFiles, migrationsDirectory, runMigrations } from "../../src/layers/Migrations"
import { caseRoll, flipTriggered, raffleTicket, ticketSeedsDigest, upgradeRoll } from "../../src/services/games/ProvablyFair"
import { signIn } from "../support/SignIn"
import { makeTestClient, testConfig } from "../support/TestApp"
import { EmptyTestDatabase } from "../support/TestDatabase"

const files = readdirSync(migrationsDirectory).filter((f) => f.endsWith(".sql")).sort()

layer(Layer.merge(EmptyTestDatabase, NodeContext.layer))("Migrations", (it) => {
  it.effect("two instances starting at once apply every migration exactly once, and a restart applies none", () =>
    Effect.gen(function*() {
      const [first, second] = yield* Effect.all([runMigrations, runMigrations], { concurrency: 2 })
      const applied = [...first, ...second].map(([id, name]) => `${String(id).padStart(4, "0")}_${name}.sql`)
      expect(applied).toEqual(files)

      const sql = yield* SqlClient.SqlClient
      const recorded = yield* sql<{ migrationId: number }>`SELECT migration_id FROM schema_migrations ORDER BY 1`
      expect(recorded.map((r) => r.migrationId)).toEqual(files.map((f) => Number(f.slice(0, 4))))

      expect(yield* runMigrations).toEqual([])
      const tables = yield* sql<{ tablename: string }>`
        SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`
      expect(tables.map((t) => t.tablename)).toEqual(
        expect.arrayContaining(["case_items", "cases", "items", "schema_migrations", "transactions", "users"])
      )
    }))
})

const hex = (label: string) => createHash("sha256").update(label).digest("hex")

/** Data as the service wrote it before seeds were committed (migrations up to 0011). */
const legacyData = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [alice] = yield* sql<{ id: string }>`
    INSERT INTO users (idp_id, username, balance_cents) VALUES ('legacy-alice', 'alice', 10000) RETURNING id::text AS id`
  const [bob] = yield* sql<{ id: string }>`
    INSERT INTO users (idp_id, username, balance_cents) VALUES ('legacy-bob', 'bob', 10000) RETURNING id::text AS id`
  yield* sql`INSERT INTO fairness_seeds (user_id, client_seed, nonce, updated_at) VALUES (${alice!.id}, 'alice-client', 9, now())`
  const [cheap, dear] = yield* sql<{ id: string }>`
    INSERT INTO items (name, rarity, value_cents, image_url) VALUES ('Cheap', 'CONSUMER', 100, '/c.png'), ('Dear', 'COVERT', 5000, '/d.png')
    RETURNING id::text AS id`
  const [kase] = yield* sql<{ id: string }>`
    INSERT INTO cases (name, slug, image_url, price_cents, category, flip_chance)
    VALUES ('Legacy', 'legacy', '/l.png', 500, 'CHEAP', 0.5) RETURNING id::text AS id`
  yield* sql`INSERT INTO case_items (case_id, item_id, drop_chance, range_start, range_end)
             VALUES (${kase!.id}, ${cheap!.id}, 0.9, 1, 9000000), (${kase!.id}, ${dear!.id}, 0.1, 9000001, 10000000)`
  const itemOf = (roll: number) => roll <= 9_000_000 ? { id: cheap!.id, start: 1, end: 9_000_000, value: 100 } : { id: dear!.id, start: 9_000_001, end: 10_000_000, value: 5_000 }
  const entry = (itemId: string) =>
    Effect.map(sql<{ id: string }>`
      INSERT INTO inventory_items (user_id, item_id, source, acquired_at, updated_at)
      VALUES (${alice!.id}, ${itemId}, 'CASE_OPEN', now(), now()) RETURNING id::text AS id`, (rows) => rows[0]!.id)

  // An opening without FLIP (nonce 1), and one with FLIP whose second roll had a seed of its own (nonces 2, 3).
  /** A seed whose roll at `nonce` triggers FLIP (or not) in this case, as the record must say. */
  const seedWhere = (name: string, nonce: number, flips: boolean) => {
    let label = 0
    while (flipTriggered(hex(`${name}-${label}`), "alice-client", nonce, 0.5) !== flips) label++
    return hex(`${name}-${label}`)
  }
  const plainSeed = seedWhere("legacy-plain", 1, false)
  const plainRoll = caseRoll(plainSeed, "alice-client", 1)
  const plainItem = itemOf(plainRoll)
  const flipMain = seedWhere("legacy-flip", 2, true)
  const flipOwn = hex("legacy-flip-own-seed")
  const [first, second] = [itemOf(caseRoll(flipMain, "alice-client", 2)), itemOf(caseRoll(flipOwn, "alice-client", 3))]
  const won = second.value > first.value ? second : first
  const [plain] = yield* sql<{ id: string }>`
    INSERT INTO case_openings (case_id, user_id, item_id, inventory_item_id, server_seed, server_seed_hash, client_seed, nonce,
      roll, roll_item_id, roll_range_start, roll_range_end, price_paid_cents, item_value_cents, profit, created_at)
    VALUES (${kase!.id}, ${alice!.id}, ${plainItem.id}, ${yield* entry(plainItem.id)}, ${plainSeed}, ${hex(plainSeed)},
      'alice-client', 1, ${plainRoll}, ${plainItem.id}, ${plainItem.start}, ${plainItem.end}, 500, ${plainItem.value},
      ${plainItem.value - 500}, now())
    RETURNING id::text AS id`
  const [flip] = yield* sql<{ id: string }>`
    INSERT INTO case_openings (case_id, user_id, item_id, inventory_item_id, server_seed, server_seed_hash, client_seed, nonce,
      roll, roll_item_id, roll_range_start, roll_range_end, is_flip, flip_server_seed, flip_client_seed, flip_nonce, flip_roll,
      flip_item_id, flip_range_start, flip_range_end, price_paid_cents, item_value_cents, profit, created_at)
    VALUES (${kase!.id}, ${alice!.id}, ${won.id}, ${yield* entry(won.id)}, ${flipMain}, ${hex(flipMain)}, 'alice-client', 2,
      ${caseRoll(flipMain, "alice-client", 2)}, ${first.id}, ${first.start}, ${first.end}, true, ${flipOwn}, 'alice-client', 3,
      ${caseRoll(flipOwn, "alice-client", 3)}, ${second.id}, ${second.start}, ${second.end}, 500, ${won.value}, ${won.value - 500}, now())
    RETURNING id::text AS id`

  // An upgrade (nonce 4) recorded at 45% odds.
  const upgradeSeed = hex("legacy-upgrade")
  const upgradeRollValue = upgradeRoll(upgradeSeed, "alice-client", 4)
  const [upgrade] = yield* sql<{ id: string }>`
    INSERT INTO upgrades (user_id, inventory_item_id, from_item_id, to_item_id, from_value_cents, to_value_cents, probability,
      threshold, roll, success, server_seed, server_seed_hash, client_seed, nonce, created_at)
    VALUES (${alice!.id}, ${yield* entry(cheap!.id)}, ${cheap!.id}, ${dear!.id}, 1000, 2000, 0.45, 45000, ${upgradeRollValue},
      ${upgradeRollValue < 45_000}, ${upgradeSeed}, ${hex(upgradeSeed)}, 'alice-client', 4, now())
    RETURNING id::text AS id`

  // A finished battle whose roll had a seed of its own (alice's nonce 5).
  const battle = (status: string, fairShare: number | null, finished: boolean) =>
    Effect.map(sql<{ id: string }>`
      INSERT INTO battles (creator_id, mode, max_players, status, entry_price_cents, player_count, fair_share_cents, winners_count,
                           created_at, finished_at)
      VALUES (${alice!.id}, 'NORMAL', 2, ${status}, 500, ${finished ? 2 : 1}, ${fairShare}, ${finished ? 1 : null}, now(),
              ${finished ? new Date() : null})
      RETURNING id::text AS id`, (rows) => rows[0]!.id)
  const finishedBattle = yield* battle("FINISHED", 0, true)
  yield* sql`INSERT INTO battle_cases (battle_id, round_number, case_id, price_cents) VALUES (${finishedBattle}, 1, ${kase!.id}, 500)`
  yield* sql`INSERT INTO battle_players (battle_id, slot, user_id, joined_at)
             VALUES (${finishedBattle}, 1, ${alice!.id}, now()), (${finishedBattle}, 2, ${bob!.id}, now())`
  const rollSeed = hex("legacy-battle-roll")
  const battleRoll = caseRoll(rollSeed, "alice-client", 5)
  const rolled = itemOf(battleRoll)
  const [roll] = yield* sql<{ id: string }>`
    INSERT INTO battle_rolls (battle_id, round_number, user_id, case_id, item_id, value_cents, server_seed, server_seed_hash,
                              client_seed, nonce, roll, range_start, range_end, created_at)
    VALUES (${finishedBattle}, 1, ${alice!.id}, ${kase!.id}, ${rolled.id}, ${rolled.value}, ${rollSeed}, ${hex(rollSeed)},
            'alice-client', 5, ${battleRoll}, ${rolled.start}, ${rolled.end}, now())
    RETURNING id::text AS id`

  // A battle still waiting for its second player.
  const waitingBattle = yield* battle("WAITING", null, false)
  yield* sql`INSERT INTO battle_cases (battle_id, round_number, case_id, price_cents) VALUES (${waitingBattle}, 1, ${kase!.id}, 500)`
  yield* sql`INSERT INTO battle_players (battle_id, slot, user_id, joined_at) VALUES (${waitingBattle}, 1, ${alice!.id}, now())`

  // A raffle with alice's 2 tickets out of 3.
  const raffleSeed = hex("legacy-raffle")
  const [raffle] = yield* sql<{ id: string }>`
    INSERT INTO raffles (item_id, ticket_price_cents, max_tickets, tickets_sold, ends_at, server_seed, server_seed_hash, created_at)
    VALUES (${dear!.id}, 10, 3, 2, '2100-01-01', ${raffleSeed}, ${hex(raffleSeed)}, now()) RETURNING id::text AS id`
  yield* sql`INSERT INTO raffle_tickets (raffle_id, first_ticket, last_ticket, user_id, created_at)
             VALUES (${raffle!.id}, 1, 2, ${alice!.id}, now())`
  return {
    alice: alice!.id,
    bob: bob!.id,
    plainOpening: plain!.id,
    flipOpening: flip!.id,
    upgrade: upgrade!.id,
    finishedBattle,
    battleRoll: roll!.id,
    waitingBattle,
    raffle: raffle!.id,
    raffleSeedHash: hex(raffleSeed)
  }
})

layer(Layer.merge(EmptyTestDatabase, NodeContext.layer))("Migrations: committed seeds on existing data", (it) => {
  it.scoped("existing users get a committed seed; past rolls verify as recorded; waiting battles and open raffles use the new scheme", () =>
    Effect.gen(function*() {
      const all = yield* loadSqlFiles
      const before = Object.fromEntries(Object.entries(all).filter(([name]) => name < "0012"))
      yield* Migrator.make({})({ loader: Migrator.fromRecord(before), table: "schema_migrations" })
      const legacy = yield* legacyData
      expect((yield* runMigrations).map(([id]) => id)).toContain(12)

      const sql = yield* SqlClient.SqlClient
      const states = yield* sql<{ userId: string; clientSeed: string; nonce: string; nextServerSeed: string; nextServerSeedHash: string }>`
        SELECT user_id::text AS user_id, client_seed, nonce, next_server_seed, next_server_seed_hash FROM fairness_seeds ORDER BY user_id`
      expect(states.map((s) => [s.userId, s.nonce])).toEqual([[legacy.alice, "9"], [legacy.bob, "0"]])
      expect(states[0]!.clientSeed).toBe("alice-client")
      for (const s of states) {
        expect(s.nextServerSeed).toMatch(/^[0-9a-f]{64}$/)
        expect(hex(s.nextServerSeed)).toBe(s.nextServerSeedHash)
      }
      expect(states[0]!.nextServerSeed).not.toBe(states[1]!.nextServerSeed)

      const client = yield* makeTestClient({ config: { rateLimits: { ...testConfig.rateLimits, global: { count: 10_000, windowMs: 60_000 } } } })
      const alice = yield* signIn(client, "legacy-alice")
      const bob = yield* signIn(client, "legacy-bob")
      expect((yield* client.get("/api/provably-fair/client-seed", alice.auth)).body).toEqual({
        clientSeed: "alice-client",
        nonce: 9,
        nextServerSeedHash: states[0]!.nextServerSeedHash
      })
      // Past rolls verify as they were recorded, a FLIP with its own second seed included.
      const plain = (yield* client.get(`/api/cases/openings/${legacy.plainOpening}/verify`, alice.auth)).body
      expect(plain).toMatchObject({ flipChance: 0.5, isFlip: false, isValid: true })
      const flip = (yield* client.get(`/api/cases/openings/${legacy.flipOpening}/verify`, alice.auth)).body
      expect(flip).toMatchObject({ isFlip: true, flipNonce: 3, isValid: true })
      expect(flip.flipServerSeed).not.toBe(flip.serverSeed)
      expect((yield* client.get(`/api/upgrades/${legacy.upgrade}/verify`, alice.auth)).body.isValid).toBe(true)
      expect((yield* client.get(`/api/provably-fair/verify/${legacy.battleRoll}?type=battle-roll`, alice.auth)).body.isValid).toBe(true)
      const finished = (yield* client.get(`/api/battles/${legacy.finishedBattle}`, alice.auth)).body
      expect(finished).toMatchObject({ status: "FINISHED", serverSeedHash: null, serverSeed: null })
      expect(finished.rounds[0].serverSeed).toBe(hex("legacy-battle-roll"))

      // The waiting battle committed a seed before its rolls; bob's join rolls it.
      const waiting = (yield* client.get(`/api/battles/${legacy.waitingBattle}`, bob.auth)).body
      expect(waiting).toMatchObject({ status: "WAITING", serverSeedHash: expect.stringMatching(/^[0-9a-f]{64}$/), serverSeed: null })
      const joined = (yield* client.post(`/api/battles/${legacy.waitingBattle}/join`, undefined, bob.auth)).body
      expect(joined.status).toBe("FINISHED")
      expect(hex(joined.serverSeed)).toBe(waiting.serverSeedHash)
      for (const round of joined.rounds) expect(round.roll).toBe(caseRoll(joined.serverSeed, round.clientSeed, round.nonce))

      // The open raffle's old tickets carry alice's client seed; the draw uses the new formula.
      const sold = (yield* client.post(`/api/raffles/${legacy.raffle}/tickets`, { count: 1 }, bob.auth)).body.raffle
      expect(sold.status).toBe("DRAWN")
      expect(sold.ticketSeeds).toEqual([
        { firstTicket: 1, lastTicket: 2, clientSeed: "alice-client" },
        { firstTicket: 3, lastTicket: 3, clientSeed: expect.stringMatching(/^[0-9a-f]{32}$/) }
      ])
      expect(hex(sold.serverSeed)).toBe(legacy.raffleSeedHash)
      const digest = ticketSeedsDigest(sold.ticketSeeds)
      expect(sold.ticketSeedsDigest).toBe(digest)
      expect(sold.winningTicket).toBe(raffleTicket(sold.serverSeed, BigInt(legacy.raffle), 3, digest))
    }))
})
