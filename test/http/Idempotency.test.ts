/**
 * `Idempotency-Key` on every money-moving POST (docs/rules.md#idempotency-keys): a repeat, in sequence or in
 * parallel, answers the first response and moves no money again; a different request with the same key is 422; keys are
 * per user and last 24 hours; a failed attempt stores nothing; a restarted service still replays.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { Stores } from "../../src/layers/stores/Stores"
import { Catalog } from "../../src/services/games/Catalog"
import { Idempotency } from "../../src/services/platform/Idempotency"
import { Ledger } from "../../src/services/money/Ledger"
import { balanceOf, fundedPlayer, grantItems, makeCase } from "../support/GameFixtures"
import { makeTestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const appOptions = {
  config: {
    adminIdpIds: ["root"],
    rateLimits: {
      ...testConfig.rateLimits,
      auth: { count: 100_000, windowMs: 60_000 },
      global: { count: 100_000, windowMs: 60_000 },
      caseOpen: { count: 100_000, windowMs: 60_000 },
      withdrawal: { count: 100_000, windowMs: 60_000 }
    }
  }
}

const withKey = (auth: Record<string, string>, key: string) => ({ ...auth, "idempotency-key": key })

const ledgerHealthy = Effect.flatMap(Ledger, (ledger) => ledger.discrepancies).pipe(
  Effect.provide(Ledger.Default),
  Effect.map((discrepancies) => expect(discrepancies).toEqual([]))
)

const count = (table: string, userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)} WHERE user_id = ${userId}`, (r) => r[0]!.n))

let seq = 0
const upgradable = (values: ReadonlyArray<number>) =>
  Effect.forEach(values, (value) =>
    Effect.map(
      Effect.flatMap(Catalog, (c) =>
        c.createItem({ name: `Idem skin ${++seq}`, rarity: "RESTRICTED", valueCents: BigInt(value), imageUrl: "/i.png", isUpgradable: true })),
      (item) => String(item.id)
    )).pipe(Effect.provide(Catalog.Default))

layer(TestDatabase)("idempotency keys", (it) => {
  it.scoped("every money-moving POST: a repeat answers the first response, marked replayed, and moves nothing", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase, items } = yield* makeCase({ priceCents: 100n })
      const [from, to] = yield* upgradable([1_000, 2_000])
      const player = yield* fundedPlayer(client, "repeater", 100_000)
      const other = yield* fundedPlayer(client, "opponent", 10_000)
      const admin = yield* fundedPlayer(client, "root", 0)
      const [sellable] = yield* grantItems(player.id, [items.common!.id])
      yield* grantItems(player.id, [from!, items.rare!.id])
      const battle = (yield* client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, other.auth)).body
      const raffle = (yield* client.post(
        "/api/admin/raffles",
        { itemId: String(items.jackpot!.id), ticketPriceCents: 10, maxTickets: 100, endsAt: new Date(Date.UTC(2100, 0)).toISOString() },
        admin.auth
      )).body
      const pix = { paymentMethod: "PIX", paymentDetails: { pixKeyType: "EMAIL", pixKey: "repeater@example.com" } }

      const requests: ReadonlyArray<[string, unknown, number]> = [
        [`/api/cases/${kase.id}/open`, undefined, 200],
        ["/api/upgrades", { fromItemId: from, toItemId: to }, 200],
        [`/api/inventory/${sellable}/sell`, undefined, 200],
        ["/api/battles", { caseIds: [String(kase.id)], mode: "CRAZY", maxPlayers: 2 }, 201],
        [`/api/battles/${battle.id}/join`, undefined, 200],
        [`/api/raffles/${raffle.id}/tickets`, { count: 3 }, 200],
        ["/api/payment/deposit/initiate", { amountCents: 5_000, method: "PIX" }, 201],
        ["/api/withdrawals/request", { amountCents: 1_000, ...pix }, 201],
        ["/api/inventory/sell-all", undefined, 200]
      ]
      for (const [i, [path, body, status]] of requests.entries()) {
        const key = `key-${i}`
        const first = yield* client.post(path, body, withKey(player.auth, key))
        expect({ path, status: first.status }).toEqual({ path, status })
        expect(first.headers.get("idempotent-replayed")).toBeNull()
        const balance = yield* balanceOf(client, player.auth)
        const again = yield* client.post(path, body, withKey(player.auth, key))
        expect({ path, status: again.status, body: again.body }).toEqual({ path, status, body: first.body })
        expect(again.headers.get("idempotent-replayed")).toBe("true")
        expect(yield* balanceOf(client, player.auth)).toBe(balance)
      }
      // Exactly one of each record, whatever the repeats.
      expect(yield* count("case_openings", player.id)).toBe(1)
      expect(yield* count("upgrades", player.id)).toBe(1)
      expect(yield* count("withdrawals", player.id)).toBe(1)
      expect(yield* count("deposits", player.id)).toBe(1)
      expect(yield* count("raffle_tickets", player.id)).toBe(1)
      const sql = yield* SqlClient.SqlClient
      const movements = yield* sql<{ type: string; n: number }>`
        SELECT type, count(*)::int AS n FROM transactions WHERE user_id = ${player.id} GROUP BY type ORDER BY type`
      expect(movements).toEqual([
        { type: "ADMIN_ADJUSTMENT", n: 1 },
        { type: "BATTLE_ENTRY", n: 2 },
        { type: "CASE_OPEN", n: 1 },
        { type: "ITEM_SELL", n: expect.any(Number) },
        { type: "RAFFLE_TICKET", n: 1 },
        { type: "WITHDRAWAL", n: 1 }
      ])
      yield* ledgerHealthy
    }))

  it.scoped("the same key with a different request is 422; another user's key is theirs; a bad key is 400", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 100n })
      const other = yield* makeCase({ priceCents: 200n })
      const alice = yield* fundedPlayer(client, "alice-key", 1_000)
      const bob = yield* fundedPlayer(client, "bob-key", 1_000)

      expect((yield* client.post(`/api/cases/${kase.id}/open`, undefined, withKey(alice.auth, "shared"))).status).toBe(200)
      const reused = yield* client.post(`/api/cases/${other.kase.id}/open`, undefined, withKey(alice.auth, "shared"))
      expect(reused.status).toBe(422)
      expect(reused.body).toEqual({ statusCode: 422, message: "Idempotency-Key was already used for a different request" })
      const withdraw = yield* client.post(
        "/api/withdrawals/request",
        { amountCents: 1_000, paymentMethod: "PIX", paymentDetails: { pixKeyType: "EMAIL", pixKey: "a@example.com" } },
        withKey(alice.auth, "shared")
      )
      expect(withdraw.status).toBe(422)
      expect(yield* balanceOf(client, alice.auth)).toBe(900)

      // Bob's "shared" is his own key: his opening happens.
      const bobs = yield* client.post(`/api/cases/${kase.id}/open`, undefined, withKey(bob.auth, "shared"))
      expect(bobs.status).toBe(200)
      expect(bobs.headers.get("idempotent-replayed")).toBeNull()
      expect(yield* balanceOf(client, bob.auth)).toBe(900)

      for (const key of ["", "x".repeat(65), "has space", "tab\there"]) {
        const refused = yield* client.request(`/api/cases/${kase.id}/open`, { method: "POST", headers: withKey(alice.auth, key) })
        expect({ key, status: refused.status }).toEqual({ key, status: 400 })
        expect(refused.body.errors.map((e: { field: string }) => e.field)).toEqual(["idempotency-key"])
      }
      expect(yield* balanceOf(client, alice.auth)).toBe(900)
      yield* ledgerHealthy
    }))

  it.scoped("a refused first attempt stores nothing: the retry runs; after 24 hours a key is new again", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 500n })
      const player = yield* fundedPlayer(client, "late-funds", 100)
      const admin = yield* fundedPlayer(client, "root", 0)
      const open = () => client.post(`/api/cases/${kase.id}/open`, undefined, withKey(player.auth, "retry-me"))
      expect((yield* open()).body).toEqual({ statusCode: 400, message: "Insufficient balance" })
      yield* client.post(`/api/admin/users/${player.id}/adjust-balance`, { amountCents: 1_000, reason: "top up" }, admin.auth)
      const first = yield* open()
      expect(first.status).toBe(200)
      expect(yield* balanceOf(client, player.auth)).toBe(600)

      yield* TestClock.adjust("23 hours")
      expect((yield* open()).body).toEqual(first.body)
      yield* TestClock.adjust("1 hour")
      const fresh = yield* open()
      expect(fresh.status).toBe(200)
      expect(fresh.body.openingId).not.toBe(first.body.openingId)
      expect(yield* balanceOf(client, player.auth)).toBe(100)
      yield* ledgerHealthy

      // The cleanup job forgets keys once they are 24 hours old.
      const idempotency = yield* Effect.provide(Idempotency, Idempotency.Default.pipe(Layer.provide(Stores.memory)))
      yield* TestClock.adjust("23 hours")
      yield* idempotency.forgetExpired()
      expect(yield* count("idempotency_keys", player.id)).toBe(1)
      yield* TestClock.adjust("1 hour")
      expect(yield* idempotency.forgetExpired()).toBeGreaterThanOrEqual(1)
      expect(yield* count("idempotency_keys", player.id)).toBe(0)
    }))

  it.scoped("a restarted service answers a key it stored before", () =>
    Effect.gen(function*() {
      const before = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 100n })
      const player = yield* fundedPlayer(before, "survivor", 1_000)
      const first = yield* before.post(`/api/cases/${kase.id}/open`, undefined, withKey(player.auth, "across-restart"))
      // A new application over the same database, as after a crash (sessions come with the new stores).
      const after = yield* makeTestClient(appOptions)
      const again = yield* fundedPlayer(after, "survivor", 0)
      const replay = yield* after.post(`/api/cases/${kase.id}/open`, undefined, withKey(again.auth, "across-restart"))
      expect(replay.status).toBe(200)
      expect(replay.body).toEqual(first.body)
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(yield* balanceOf(after, again.auth)).toBe(900)
    }))

  it.scoped("a replay publishes nothing: one live drop for one opening, however often it is repeated", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 100n })
      const sentinel = yield* makeCase({ priceCents: 100n })
      const player = yield* fundedPlayer(client, "listener", 1_000)
      const response = yield* client.open("/api/live-drops/stream", { headers: player.auth })
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      let text = decoder.decode((yield* Effect.promise(() => reader.read())).value)
      for (let i = 0; i < 3; i++) {
        expect((yield* client.post(`/api/cases/${kase.id}/open`, undefined, withKey(player.auth, "quiet"))).status).toBe(200)
      }
      // A last, different opening marks the end of what the repeats could have published.
      yield* client.post(`/api/cases/${sentinel.kase.id}/open`, undefined, player.auth)
      while (!text.includes(sentinel.kase.name)) text += decoder.decode((yield* Effect.promise(() => reader.read())).value)
      yield* Effect.promise(() => reader.cancel())
      const drops = text.split("event: drop\ndata: ").slice(1).map((chunk) => JSON.parse(chunk.split("\n")[0]!).caseName)
      expect(drops).toEqual([kase.name, sentinel.kase.name])
    }))
})

layer(TestDatabase)("idempotency keys, documented", (it) => {
  it.scoped("the OpenAPI document lists Idempotency-Key on every money-moving POST, and 422", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const paths = (yield* client.get("/api/docs-json")).body.paths
      for (
        const path of [
          "/api/cases/{id}/open",
          "/api/upgrades",
          "/api/inventory/{id}/sell",
          "/api/inventory/sell-all",
          "/api/battles",
          "/api/battles/{id}/join",
          "/api/raffles/{id}/tickets",
          "/api/payment/deposit/initiate",
          "/api/deposits/initiate",
          "/api/withdrawals/request"
        ]
      ) {
        const operation = paths[path].post
        expect({ path, header: operation.parameters.find((p: { name: string }) => p.name === "idempotency-key")?.in })
          .toEqual({ path, header: "header" })
        expect(Object.keys(operation.responses)).toContain("422")
      }
    }))
})

// Real clock: the parallel requests queue on the user's lock in real time.
layer(TestDatabase, { excludeTestServices: true })("idempotency keys in parallel", (it) => {
  it.scoped("the same key sent 8 times at once opens once; every answer is the first one's", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 100n })
      const player = yield* fundedPlayer(client, "impatient", 1_000)
      const answers = yield* Effect.all(
        Array.from({ length: 8 }, () => client.post(`/api/cases/${kase.id}/open`, undefined, withKey(player.auth, "at-once"))),
        { concurrency: "unbounded" }
      )
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200))
      expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1)
      expect(answers.filter((a) => a.headers.get("idempotent-replayed") === "true").length).toBe(7)
      expect(yield* balanceOf(client, player.auth)).toBe(900)
      expect(yield* count("case_openings", player.id)).toBe(1)

      // Different keys at once are different requests: each opens.
      const distinct = yield* Effect.all(
        Array.from({ length: 5 }, (_, i) => client.post(`/api/cases/${kase.id}/open`, undefined, withKey(player.auth, `own-${i}`))),
        { concurrency: "unbounded" }
      )
      expect(distinct.map((a) => a.status)).toEqual(Array(5).fill(200))
      expect(yield* balanceOf(client, player.auth)).toBe(400)
      yield* ledgerHealthy
    }))
})
