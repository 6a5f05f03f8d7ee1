/**
 * Upgrades through the public API (docs/rules.md#upgrades): odds, every refusal with its
 * status and message, outcomes pinned by the seeded randomness, verification (and tampering), the
 * history's stats, and parallel upgrades of one entry staking it once.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it as plain, layer } from "@effect/vitest"
import { Effect, Either } from "effect"
import { createHash, createHmac } from "node:crypto"
import { Catalog } from "../../src/services/games/Catalog"
import { Ledger } from "../../src/services/money/Ledger"
import { UPGRADE_RULES, upgradeOdds } from "../../src/services/games/Upgrades"
import { fundedPlayer, grantItems } from "../support/GameFixtures"
import { makeTestClient, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const appOptions = {
  config: { adminIdpIds: ["root"], rateLimits: { ...testConfig.rateLimits, global: { count: 10_000, windowMs: 60_000 } } }
}

let seq = 0
/** Catalog items worth these cents (upgradable unless told otherwise). */
const items = (values: ReadonlyArray<number>, isUpgradable = true) =>
  Effect.forEach(values, (value) =>
    Effect.map(
      Catalog.pipe(Effect.flatMap((catalog) =>
        catalog.createItem({ name: `Skin ${++seq}`, rarity: "RESTRICTED", valueCents: BigInt(value), imageUrl: "/s.png", isUpgradable })
      )),
      (item) => String(item.id)
    )).pipe(Effect.provide(Catalog.Default))

/** Puts an entry of `itemId` into the user's inventory, as an opening would; returns the entry id. */
const grant = (userId: string, itemId: string) => Effect.map(grantItems(userId, [itemId]), ([id]) => id!)

const statusOf = (entryId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ status: string }>`SELECT status FROM inventory_items WHERE id = ${entryId}`, (rows) => rows[0]!.status))

const upgrade = (client: TestClient, auth: Record<string, string>, body: Record<string, string>) =>
  client.post("/api/upgrades", body, auth)

const hmacRoll = (serverSeed: string, clientSeed: string, nonce: number) =>
  Number(BigInt(`0x${createHmac("sha256", serverSeed).update(`${clientSeed}:${nonce}`).digest("hex")}`) % 100_000n)

/** What `Randomness.seeded("test")` gives the first four upgrades of a fresh client: [roll, success]. */
const PINNED: ReadonlyArray<[number, boolean]> = [[729, true], [14273, true], [59332, false], [42876, true]]

const refusal = (odds: ReturnType<typeof upgradeOdds>) => Either.isLeft(odds) ? odds.left._tag : undefined

describe("upgrade odds", () => {
  plain("probability = from / to x 0.9, clamped; the refusals in order", () => {
    expect(upgradeOdds(1_000n, 2_000n)).toEqual(Either.right({ probability: 0.45, threshold: 45_000 }))
    expect(upgradeOdds(1_000n, 10_000n)).toEqual(Either.right({ probability: 0.09, threshold: 9_000 }))
    expect(refusal(upgradeOdds(1_000n, 1_000n))).toBe("InvalidUpgrade")
    expect(refusal(upgradeOdds(1_000n, 10_001n))).toBe("MultiplierTooHigh")
    // Without the multiplier limit, a chance below the 1% floor is refused rather than raised.
    const noCap = { ...UPGRADE_RULES, maxMultiplier: Infinity }
    expect(refusal(upgradeOdds(1_000n, 100_000n, noCap))).toBe("ProbabilityTooLow")
    expect(upgradeOdds(1_000n, 90_000n, noCap)).toEqual(Either.right({ probability: 0.01, threshold: 1_000 }))
    // Above the 0.90 ceiling (a rule set with no house edge): clamped.
    expect(upgradeOdds(1_000n, 1_001n, { ...UPGRADE_RULES, houseEdgePercent: 0 })).toEqual(
      Either.right({ probability: 0.9, threshold: 90_000 })
    )
  })
})

layer(TestDatabase)("upgrades", (it) => {
  it.scoped("the probability endpoint and every refusal with its status and message", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const [from, double, tenfold, tooFar, same] = yield* items([1_000, 2_000, 10_000, 10_001, 1_000])
      const [locked] = yield* items([3_000], false)
      const player = yield* fundedPlayer(client, "upgrader", 0)
      const entry = yield* grant(player.id, from!)

      const odds = yield* client.get(`/api/upgrades/probability?fromItemId=${from}&toItemId=${double}`, player.auth)
      expect(odds.status).toBe(200)
      expect(odds.body).toEqual({
        fromItem: { id: from, name: expect.any(String), valueCents: 1000 },
        toItem: { id: double, name: expect.any(String), valueCents: 2000 },
        probability: 0.45,
        probabilityPercent: "45.00"
      })
      expect((yield* client.get(`/api/upgrades/probability?fromItemId=${from}&toItemId=${tenfold}`, player.auth)).body.probabilityPercent).toBe("9.00")
      expect((yield* client.get(`/api/upgrades/probability?fromItemId=999999&toItemId=${double}`, player.auth)).body)
        .toEqual({ statusCode: 404, message: "Item not found" })
      expect((yield* client.get(`/api/upgrades/probability?fromItemId=x&toItemId=${double}`, player.auth)).body.errors)
        .toEqual([{ field: "fromItemId", message: "must be a positive integer id" }])

      const refusals: ReadonlyArray<[Record<string, string>, number, string]> = [
        [{ fromItemId: from!, toItemId: same! }, 400, "Target item must have higher value"],
        [{ fromItemId: from!, toItemId: tooFar! }, 400, "Maximum multiplier is 10x"],
        [{ fromItemId: from!, toItemId: locked! }, 400, "Item not upgradable"],
        [{ fromItemId: from!, toItemId: "999999" }, 400, "Item not upgradable"],
        [{ fromItemId: double!, toItemId: tenfold! }, 400, "Item not available for upgrade"],
        [{ fromItemId: from!, toItemId: double!, inventoryItemId: "999999" }, 400, "Item not available for upgrade"]
      ]
      for (const [body, status, message] of refusals) {
        const refused = yield* upgrade(client, player.auth, body)
        expect({ body, answer: refused.body }).toEqual({ body, answer: { statusCode: status, message } })
        expect(refused.status).toBe(status)
      }
      for (const [path, answer] of [
        [`fromItemId=${from}&toItemId=${same}`, "Target item must have higher value"],
        [`fromItemId=${from}&toItemId=${tooFar}`, "Maximum multiplier is 10x"],
        [`fromItemId=${from}&toItemId=${locked}`, "Item not upgradable"]
      ] as const) {
        expect((yield* client.get(`/api/upgrades/probability?${path}`, player.auth)).body).toEqual({ statusCode: 400, message: answer })
      }
      // A refused upgrade stakes nothing and consumes no nonce (docs/rules.md#nonce).
      expect(yield* statusOf(entry)).toBe("AVAILABLE")
      expect((yield* client.get("/api/provably-fair/client-seed", player.auth)).body.nonce).toBe(0)

      const malformed = yield* client.post("/api/upgrades", { fromItemId: 5 }, player.auth)
      expect(malformed.status).toBe(400)
      expect(malformed.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(["fromItemId", "toItemId"])
      expect((yield* client.post("/api/upgrades", { fromItemId: from, toItemId: double })).status).toBe(401)
    }))

  it.scoped("outcomes are pinned by the seeded randomness, verify, and show in the history with exact stats", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const [from, target] = yield* items([1_000, 2_000])
      const player = yield* fundedPlayer(client, "pinned", 0)
      const other = yield* fundedPlayer(client, "onlooker", 0)
      const entries = [yield* grant(player.id, from!), yield* grant(player.id, from!), yield* grant(player.id, from!), yield* grant(player.id, from!)]

      const results = []
      for (const entry of entries) {
        const answer = yield* upgrade(client, player.auth, { fromItemId: from!, toItemId: target!, inventoryItemId: entry })
        expect(answer.status).toBe(200)
        results.push(answer.body)
        expect(yield* statusOf(entry)).toBe("UPGRADED")
      }
      // The seeded stream fixes every roll; 45% odds: roll < 45000 wins.
      expect(results.map((r) => [r.roll, r.success])).toEqual(PINNED)
      for (const result of results) {
        expect(result).toMatchObject({ probability: 0.45, fromItem: { id: from }, toItem: result.success ? { id: target } : null })
        const verified = yield* client.get(`/api/upgrades/${result.upgradeId}/verify`, player.auth)
        expect(verified.body).toMatchObject({ roll: result.roll, calculatedRoll: result.roll, threshold: 45_000, success: result.success, isValid: true })
        expect(createHash("sha256").update(verified.body.serverSeed).digest("hex")).toBe(result.serverSeedHash)
        expect(hmacRoll(verified.body.serverSeed, verified.body.clientSeed, verified.body.nonce)).toBe(result.roll)
        expect((yield* client.get(`/api/provably-fair/verify/${result.upgradeId}?type=upgrade`, player.auth)).body.isValid).toBe(true)
        expect((yield* client.get(`/api/upgrades/${result.upgradeId}/verify`, other.auth)).body).toEqual({ statusCode: 404, message: "Upgrade not found" })
      }
      expect(results.map((r) => r.upgradeId)).toEqual([...new Set(results.map((r) => r.upgradeId))])

      const wins = results.filter((r) => r.success).length
      const inventory = (yield* client.get("/api/inventory?status=AVAILABLE", player.auth)).body
      expect(inventory.items.map((e: { item: { id: string }; source: string }) => [e.item.id, e.source]))
        .toEqual(Array(wins).fill([target, "UPGRADE"]))

      const history = (yield* client.get("/api/upgrades/history", player.auth)).body
      expect(history.upgrades.map((u: { id: string }) => u.id)).toEqual(results.map((r) => r.upgradeId).reverse())
      expect(history.stats).toEqual({
        totalUpgrades: 4,
        successCount: wins,
        successRate: wins * 25,
        totalValueWon: wins * 2_000,
        totalValueLost: (4 - wins) * 1_000,
        netProfit: wins * 2_000 - 4 * 1_000
      })
      expect(history.total).toBe(4)

      // Tampering with a recorded upgrade is detected.
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE upgrades SET success = NOT success WHERE id = ${results[0]!.upgradeId}`
      expect((yield* client.get(`/api/upgrades/${results[0]!.upgradeId}/verify`, player.auth)).body.isValid).toBe(false)
      yield* sql`UPDATE upgrades SET success = NOT success, server_seed = ${"0".repeat(64)} WHERE id = ${results[1]!.upgradeId}`
      expect((yield* client.get(`/api/upgrades/${results[1]!.upgradeId}/verify`, player.auth)).body.isValid).toBe(false)
    }))

  it.scoped("an upgrade goes by the catalog as it is now, and a won upgrade's live drop is the one recorded", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const [from, target] = yield* items([1_000, 2_000])
      const player = yield* fundedPlayer(client, "edited", 0)
      const [first, second, third] = [yield* grant(player.id, from!), yield* grant(player.id, from!), yield* grant(player.id, from!)]
      const stream = yield* client.open("/api/live-drops/stream", { headers: player.auth })
      const reader = stream.body!.getReader()
      const decoder = new TextDecoder()
      let text = decoder.decode((yield* Effect.promise(() => reader.read())).value)
      expect(text).toContain(": connected")

      // PINNED[0]: roll 729 wins at 45 %.
      const won = (yield* upgrade(client, player.auth, { fromItemId: from!, toItemId: target!, inventoryItemId: first })).body
      expect(won).toMatchObject({ success: true, probability: 0.45, roll: PINNED[0]![0] })
      while (!text.includes("event: drop")) text += decoder.decode((yield* Effect.promise(() => reader.read())).value)
      const announced = JSON.parse(text.split("event: drop\ndata: ")[1]!.split("\n")[0]!)
      const [recorded] = (yield* client.get("/api/live-drops/recent?limit=1", player.auth)).body.drops
      expect(announced).toEqual(recorded)
      expect(announced).toMatchObject({ user: { id: player.id, username: "edited" }, item: { id: target, valueCents: 2000 }, source: "UPGRADE" })
      yield* Effect.promise(() => reader.cancel())

      // An administrator's edits between two upgrades of this instance count at once: the target now worth 4000
      // (22.5 %), then not upgradable at all.
      const catalog = yield* Effect.provide(Catalog, Catalog.Default)
      yield* catalog.updateItem(BigInt(target!) as never, { valueCents: 4_000n })
      const repriced = (yield* upgrade(client, player.auth, { fromItemId: from!, toItemId: target!, inventoryItemId: second })).body
      expect(repriced).toMatchObject({ probability: 0.225, success: repriced.roll < 22_500 })
      expect((yield* client.get(`/api/upgrades/${repriced.upgradeId}/verify`, player.auth)).body).toMatchObject({ threshold: 22_500, isValid: true })
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ toValueCents: string; threshold: number }>`
        SELECT to_value_cents::text, threshold FROM upgrades WHERE id = ${repriced.upgradeId}`
      expect(row).toEqual({ toValueCents: "4000", threshold: 22_500 })
      yield* catalog.updateItem(BigInt(target!) as never, { isUpgradable: false })
      expect((yield* upgrade(client, player.auth, { fromItemId: from!, toItemId: target!, inventoryItemId: third })).body)
        .toEqual({ statusCode: 400, message: "Item not upgradable" })
      expect(yield* statusOf(third)).toBe("AVAILABLE")
    }))
})

layer(TestDatabase, { excludeTestServices: true })("upgrades in parallel", (it) => {
  it.scoped("10 parallel upgrades of one entry stake it exactly once", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const [from, target] = yield* items([1_000, 2_000])
      const player = yield* fundedPlayer(client, "racer", 0)
      const entry = yield* grant(player.id, from!)
      const answers = yield* Effect.all(
        Array.from({ length: 10 }, () => upgrade(client, player.auth, { fromItemId: from!, toItemId: target! })),
        { concurrency: "unbounded" }
      )
      expect(answers.filter((a) => a.status === 200).length).toBe(1)
      expect(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.body.message]))
        .toEqual(Array(9).fill([400, "Item not available for upgrade"]))
      expect(yield* statusOf(entry)).toBe("UPGRADED")
      const sql = yield* SqlClient.SqlClient
      expect((yield* sql`SELECT id FROM upgrades WHERE inventory_item_id = ${entry}`).length).toBe(1)
      expect((yield* client.get("/api/provably-fair/client-seed", player.auth)).body.nonce).toBe(1)
      const discrepancies = yield* Effect.flatMap(Ledger, (l) => l.discrepancies).pipe(Effect.provide(Ledger.Default))
      expect(discrepancies).toEqual([])
    }))
})

