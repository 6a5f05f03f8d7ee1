/**
 * The inventory through the public API (docs/rules.md#inventory-and-selling): the list and its filter, selling
 * one entry or all of them through the Ledger (ITEM_SELL), the refusals, and parallel sales of one entry
 * crediting once.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Ledger } from "../../src/services/money/Ledger"
import { balanceOf, fundedPlayer, grantItems, makeCase } from "../support/GameFixtures"
import { makeTestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const appOptions = {
  config: { adminIdpIds: ["root"], rateLimits: { ...testConfig.rateLimits, global: { count: 10_000, windowMs: 60_000 } } }
}

/** Entries of the fixture case's items (100, 5000 and 50000 cents) for the user; returns their ids. */

/**
 * The ledger checks (docs/rules.md#ledger-checks) plus: every sold entry has exactly one ITEM_SELL row of its
 * item's value, and no sale row is orphaned.
 */
const ledgerProblems = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const discrepancies = yield* Effect.flatMap(Ledger, (l) => l.discrepancies).pipe(Effect.provide(Ledger.Default))
  const sales = yield* sql<{ id: string; status: string; credits: number }>`
    SELECT ii.id::text AS id, ii.status, count(t.id)::int AS credits
    FROM inventory_items ii
    LEFT JOIN transactions t ON t.type = 'ITEM_SELL' AND t.reference_id = ii.id AND t.user_id = ii.user_id
    GROUP BY ii.id
    HAVING count(t.id) <> CASE WHEN ii.status = 'SOLD' THEN 1 ELSE 0 END`
  return { discrepancies, sales }
})
const healthy = { discrepancies: [], sales: [] }

layer(TestDatabase)("inventory", (it) => {
  it.scoped("lists entries with their items, filters by status, and sums what is available", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { items } = yield* makeCase()
      const player = yield* fundedPlayer(client, "collector", 0)
      const [common, rare, jackpot] = yield* grantItems(player.id, [items.common!.id, items.rare!.id, items.jackpot!.id])

      const all = yield* client.get("/api/inventory", player.auth)
      expect(all.status).toBe(200)
      expect(all.body.total).toBe(3)
      expect(all.body.totalValueCents).toBe(55_100)
      expect(all.body.items.map((e: { id: string }) => e.id).sort()).toEqual([common, rare, jackpot].sort())
      expect(all.body.items.find((e: { id: string }) => e.id === rare)).toEqual({
        id: rare,
        item: { id: String(items.rare!.id), name: expect.stringMatching(/^Rare /), rarity: "COVERT", valueCents: 5_000, imageUrl: expect.any(String) },
        status: "AVAILABLE",
        source: "CASE_OPEN",
        acquiredAt: expect.any(String)
      })
      yield* client.post(`/api/inventory/${common}/sell`, undefined, player.auth)
      const available = (yield* client.get("/api/inventory?status=AVAILABLE", player.auth)).body
      expect(available.items.map((e: { id: string }) => e.id).sort()).toEqual([rare, jackpot].sort())
      expect(available.totalValueCents).toBe(55_000)
      const sold = (yield* client.get("/api/inventory?status=SOLD", player.auth)).body
      expect(sold.items.map((e: { id: string; status: string }) => [e.id, e.status])).toEqual([[common, "SOLD"]])
      expect(sold.totalValueCents).toBe(55_000)
      expect((yield* client.get("/api/inventory?status=LOST", player.auth)).status).toBe(400)
      expect((yield* client.get("/api/inventory?limit=0", player.auth)).status).toBe(400)
      expect((yield* client.get("/api/inventory")).status).toBe(401)
    }))

  it.scoped("selling credits the item's value once; a sold, foreign or unknown entry is not available", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { items } = yield* makeCase()
      const player = yield* fundedPlayer(client, "seller", 0)
      const other = yield* fundedPlayer(client, "neighbour", 0)
      const [mine] = yield* grantItems(player.id, [items.rare!.id])
      const [theirs] = yield* grantItems(other.id, [items.jackpot!.id])

      const sale = yield* client.post(`/api/inventory/${mine}/sell`, undefined, player.auth)
      expect(sale.status).toBe(200)
      expect(sale.body).toEqual({ soldItemId: mine, creditedCents: 5_000, balanceCents: 5_000 })
      const notAvailable = { statusCode: 400, message: "Item not available" }
      expect(yield* client.post(`/api/inventory/${mine}/sell`, undefined, player.auth)).toMatchObject({ status: 400, body: notAvailable })
      expect(yield* client.post(`/api/inventory/${theirs}/sell`, undefined, player.auth)).toMatchObject({ status: 400, body: notAvailable })
      expect(yield* client.post("/api/inventory/999999/sell", undefined, player.auth)).toMatchObject({ status: 400, body: notAvailable })
      expect((yield* client.post("/api/inventory/abc/sell", undefined, player.auth)).status).toBe(400)
      expect(yield* balanceOf(client, player.auth)).toBe(5_000)
      expect(yield* balanceOf(client, other.auth)).toBe(0)

      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT type, amount_cents, counterparty FROM transactions WHERE user_id = ${player.id}`)
        .toEqual([{ type: "ITEM_SELL", amountCents: "5000", counterparty: "HOUSE" }])
      expect(yield* ledgerProblems).toEqual(healthy)
    }))

  it.scoped("sell-all sells every available entry, one movement each; with nothing left it sells nothing", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { items } = yield* makeCase()
      const player = yield* fundedPlayer(client, "liquidator", 250)
      const entries = yield* grantItems(player.id, [items.common!.id, items.common!.id, items.rare!.id])
      yield* client.post(`/api/inventory/${entries[0]}/sell`, undefined, player.auth)

      const all = yield* client.post("/api/inventory/sell-all", undefined, player.auth)
      expect(all.status).toBe(200)
      expect(all.body).toEqual({ soldCount: 2, creditedCents: 5_100, balanceCents: 250 + 100 + 5_100 })
      expect(yield* client.post("/api/inventory/sell-all", undefined, player.auth))
        .toMatchObject({ status: 200, body: { soldCount: 0, creditedCents: 0, balanceCents: 5_450 } })
      expect(yield* balanceOf(client, player.auth)).toBe(5_450)
      expect(yield* ledgerProblems).toEqual(healthy)
    }))
})

layer(TestDatabase, { excludeTestServices: true })("inventory in parallel", (it) => {
  it.scoped("20 parallel sales of one entry credit it once; sell-all racing single sales credits each entry once", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { items } = yield* makeCase()
      const player = yield* fundedPlayer(client, "rush", 0)
      const [entry] = yield* grantItems(player.id, [items.jackpot!.id])
      const sales = yield* Effect.all(
        Array.from({ length: 20 }, () => client.post(`/api/inventory/${entry}/sell`, undefined, player.auth)),
        { concurrency: "unbounded" }
      )
      expect(sales.filter((s) => s.status === 200).length).toBe(1)
      expect(sales.filter((s) => s.status === 400).length).toBe(19)
      expect(yield* balanceOf(client, player.auth)).toBe(50_000)

      const more = yield* grantItems(player.id, Array(10).fill(items.rare!.id))
      const mixed = yield* Effect.all(
        [
          client.post("/api/inventory/sell-all", undefined, player.auth),
          client.post("/api/inventory/sell-all", undefined, player.auth),
          ...more.map((id) => client.post(`/api/inventory/${id}/sell`, undefined, player.auth))
        ],
        { concurrency: "unbounded" }
      )
      expect(mixed.every((r) => r.status === 200 || r.status === 400)).toBe(true)
      expect(yield* balanceOf(client, player.auth)).toBe(50_000 + 10 * 5_000)
      expect(yield* ledgerProblems).toEqual(healthy)
    }))
})
