/**
 * Responsible gaming (docs/responsible-gaming.md, D23) through the public API: limits on money lost and time played
 * with their windows in America/Sao_Paulo and the 24-hour wait for a raise, the refusals of game actions (nothing
 * moved), the 80 % warnings, self-exclusion, and under JURISDICTION=BR limits required before playing. The race at a
 * limit's edge runs against the real database when DATABASE_URL is set.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import type { Jurisdiction } from "../../src/layers/AppConfig"
import { Catalog } from "../../src/services/games/Catalog"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { migrationsDirectory } from "../../src/layers/Migrations"
import { Raffles } from "../../src/services/raffles/Raffles"
import { cpfOf } from "../support/Cpf"
import { balanceOf, fundedPlayer, grantItems, makeCase } from "../support/GameFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { healthyLedger, ledgerProblems, withdrawal } from "../support/WithdrawalFixtures"

/** Thursday 26 November 2026, 09:00 in São Paulo (UTC-3). */
const THURSDAY_NOON_UTC = Date.parse("2026-11-26T12:00:00Z")
const HOUR = 3_600_000
const DAY = 24 * HOUR

const app = (jurisdiction: Jurisdiction = "NONE") =>
  makeTestClient({
    config: {
      jurisdiction,
      adminIdpIds: ["root"],
      rateLimits: {
        ...testConfig.rateLimits,
        global: { count: 10_000, windowMs: 60_000 },
        caseOpen: { count: 10_000, windowMs: 60_000 }
      }
    }
  })

const open = (client: TestClient, caseId: unknown, auth: Record<string, string>) =>
  client.post(`/api/cases/${caseId}/open`, undefined, auth)

const setLimits = (client: TestClient, auth: Record<string, string>, limits: Record<string, number | null>) =>
  Effect.map(client.put("/api/users/me/limits", limits, auth), (response) => {
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return response.body
  })

const limitsOf = (client: TestClient, auth: Record<string, string>) =>
  Effect.map(client.get("/api/users/me/limits", auth), (response) => response.body)

const iso = (ms: number) => new Date(ms).toISOString()

layer(TestDatabase)("responsible gaming: limits", (it) => {
  it.scoped("a lower or first limit applies at once; a raise or removal waits 24 hours, listed; a lower value cancels it", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(THURSDAY_NOON_UTC)
      const client = yield* app()
      const { auth } = yield* signIn(client, "limits-setter")
      expect(yield* limitsOf(client, auth)).toEqual({
        dailyLossCents: null,
        weeklyLossCents: null,
        monthlyLossCents: null,
        dailyPlayMinutes: null,
        usage: { lossTodayCents: 0, lossWeekCents: 0, lossMonthCents: 0, playMinutesToday: 0 },
        pending: []
      })

      const first = yield* setLimits(client, auth, { dailyLossCents: 10_000, dailyPlayMinutes: 60 })
      expect(first).toMatchObject({ dailyLossCents: 10_000, dailyPlayMinutes: 60, weeklyLossCents: null, pending: [] })

      // A raise and a removal wait; the limits in force stay.
      const raised = yield* setLimits(client, auth, { dailyLossCents: 50_000, dailyPlayMinutes: null })
      expect(raised).toMatchObject({ dailyLossCents: 10_000, dailyPlayMinutes: 60 })
      expect(raised.pending).toEqual([
        { field: "dailyLossCents", value: 50_000, effectiveAt: iso(THURSDAY_NOON_UTC + DAY) },
        { field: "dailyPlayMinutes", value: null, effectiveAt: iso(THURSDAY_NOON_UTC + DAY) }
      ])

      // A lower value than the one in force applies at once and cancels the pending raise.
      yield* TestClock.adjust(HOUR)
      const lowered = yield* setLimits(client, auth, { dailyLossCents: 8_000 })
      expect(lowered).toMatchObject({ dailyLossCents: 8_000, dailyPlayMinutes: 60 })
      expect(lowered.pending).toEqual([{ field: "dailyPlayMinutes", value: null, effectiveAt: iso(THURSDAY_NOON_UTC + DAY) }])

      // One millisecond before the 24 hours the old value holds; then the new one, with nothing pending.
      yield* TestClock.setTime(THURSDAY_NOON_UTC + DAY - 1)
      expect((yield* limitsOf(client, auth)).dailyPlayMinutes).toBe(60)
      yield* TestClock.adjust(1)
      expect(yield* limitsOf(client, auth)).toMatchObject({ dailyLossCents: 8_000, dailyPlayMinutes: null, pending: [] })

      // The value in force sent again cancels a pending raise.
      yield* setLimits(client, auth, { weeklyLossCents: 20_000 })
      expect((yield* setLimits(client, auth, { weeklyLossCents: 30_000 })).pending).toHaveLength(1)
      expect((yield* setLimits(client, auth, { weeklyLossCents: 20_000 })).pending).toEqual([])
    }))

  it.scoped("bad limits are 400 with every field named; nothing changes", () =>
    Effect.gen(function*() {
      const client = yield* app()
      const { auth } = yield* signIn(client, "limits-bad")
      const bad = yield* client.put(
        "/api/users/me/limits",
        { dailyLossCents: -1, weeklyLossCents: 1.5, monthlyLossCents: "100", dailyPlayMinutes: 1441 },
        auth
      )
      expect(bad.status).toBe(400)
      expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
        "dailyLossCents",
        "dailyPlayMinutes",
        "monthlyLossCents",
        "weeklyLossCents"
      ])
      expect((yield* client.put("/api/users/me/limits", { hourlyLossCents: 5 }, auth)).status).toBe(400)
      for (const body of ["[]", "null", '"x"']) {
        const refused = yield* client.put("/api/users/me/limits", body, auth)
        expect(refused.status).toBe(400)
        expect(JSON.stringify(refused.body)).not.toContain("Expected {")
      }
      expect((yield* limitsOf(client, auth)).dailyLossCents).toBeNull()
    }))

  it.scoped("a loss limit stops the action that would pass it, moving nothing; a sale gives room back; windows end at São Paulo's midnight, Monday and the 1st", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(THURSDAY_NOON_UTC)
      const client = yield* app()
      const { kase } = yield* makeCase({ priceCents: 500n })
      const player = yield* fundedPlayer(client, "loss-limited", 100_000)
      yield* setLimits(client, player.auth, { dailyLossCents: 1_000, weeklyLossCents: 2_000, monthlyLossCents: 2_500 })

      expect((yield* open(client, kase.id, player.auth)).status).toBe(200)
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200)
      const refused = yield* open(client, kase.id, player.auth)
      expect(refused.status).toBe(403)
      // Friday 00:00 in São Paulo is 03:00 UTC.
      expect(refused.body).toEqual({
        statusCode: 403,
        error: "LOSS_LIMIT_REACHED",
        message: "This would take your losses over the limit you set",
        resetsAt: "2026-11-27T03:00:00.000Z"
      })
      expect(yield* balanceOf(client, player.auth)).toBe(99_000)
      expect((yield* limitsOf(client, player.auth)).usage).toEqual({
        lossTodayCents: 1_000,
        lossWeekCents: 1_000,
        lossMonthCents: 1_000,
        playMinutesToday: 1
      })

      // Friday 00:00 in São Paulo: a new day, the same week.
      yield* TestClock.setTime(Date.parse("2026-11-27T02:59:59Z"))
      expect((yield* limitsOf(client, player.auth)).usage.lossTodayCents).toBe(1_000)
      yield* TestClock.setTime(Date.parse("2026-11-27T03:00:00Z"))
      expect((yield* limitsOf(client, player.auth)).usage).toMatchObject({ lossTodayCents: 0, lossWeekCents: 1_000 })
      for (let i = 0; i < 2; i++) expect((yield* open(client, kase.id, player.auth)).status).toBe(200)
      // Both the day and the week are full: playing is possible again when both have passed, Monday 00:00.
      const both = yield* open(client, kase.id, player.auth)
      expect(both.body).toMatchObject({ error: "LOSS_LIMIT_REACHED", resetsAt: "2026-11-30T03:00:00.000Z" })
      yield* TestClock.setTime(Date.parse("2026-11-28T12:00:00Z"))
      expect((yield* open(client, kase.id, player.auth)).body).toMatchObject({ resetsAt: "2026-11-30T03:00:00.000Z" })

      // Monday 30 November: a new week, but November has lost 2000 of its 2500.
      yield* TestClock.setTime(Date.parse("2026-11-30T12:00:00Z"))
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200)
      const monthly = yield* open(client, kase.id, player.auth)
      expect(monthly.body).toMatchObject({ error: "LOSS_LIMIT_REACHED", resetsAt: "2026-12-01T03:00:00.000Z" })

      // Selling an item won earlier credits money back only in the windows it was won in: one worth 5000 won on
      // Thursday lowers November's loss, not this week's or today's.
      const { items } = yield* makeCase()
      const [thursdays] = yield* grantItems(player.id, [items.rare!.id], new Date(THURSDAY_NOON_UTC))
      expect((yield* client.post(`/api/inventory/${thursdays}/sell`, undefined, player.auth)).status).toBe(200)
      expect((yield* limitsOf(client, player.auth)).usage)
        .toMatchObject({ lossTodayCents: 500, lossWeekCents: 500, lossMonthCents: -2_500 })
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200)
      expect((yield* open(client, kase.id, player.auth)).body).toMatchObject({ error: "LOSS_LIMIT_REACHED" }) // the day: 1000
      // An item won before every current window: sold like any other, and no window's loss moves.
      const [old] = yield* grantItems(player.id, [items.rare!.id], new Date(THURSDAY_NOON_UTC - 60 * DAY))
      const usage = (yield* limitsOf(client, player.auth)).usage
      expect((yield* client.post(`/api/inventory/${old}/sell`, undefined, player.auth)).status).toBe(200)
      expect((yield* limitsOf(client, player.auth)).usage).toEqual(usage)
      // One won today gives room in all three.
      const [entry] = yield* grantItems(player.id, [items.rare!.id], new Date(yield* Clock.currentTimeMillis))
      expect((yield* client.post(`/api/inventory/${entry}/sell`, undefined, player.auth)).status).toBe(200)
      expect((yield* limitsOf(client, player.auth)).usage)
        .toMatchObject({ lossTodayCents: -4_000, lossWeekCents: -4_000, lossMonthCents: -7_000 })
      const sql = yield* SqlClient.SqlClient
      const [tally] = yield* sql<{ day: string; month: string }>`
        SELECT loss_day_cents::text AS day, loss_month_cents::text AS month FROM users WHERE id = ${player.id}`
      expect(tally).toEqual({ day: "-4000", month: "-7000" })
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200)
      yield* TestClock.setTime(Date.parse("2026-12-01T03:00:00Z"))
      expect((yield* limitsOf(client, player.auth)).usage).toMatchObject({ lossTodayCents: 0, lossMonthCents: 0 })

      // The same refusals for the other game actions, nothing moved.
      yield* setLimits(client, player.auth, { dailyLossCents: 400 })
      const before = yield* balanceOf(client, player.auth)
      const battle = yield* client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, player.auth)
      expect(battle.body).toMatchObject({ statusCode: 403, error: "LOSS_LIMIT_REACHED" })
      expect(yield* balanceOf(client, player.auth)).toBe(before)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("a battle entry refunded after midnight gives room back in the day it was paid, not in the new one", () =>
    Effect.gen(function*() {
      // Thursday 23:58 in São Paulo.
      yield* TestClock.setTime(Date.parse("2026-11-27T02:58:00Z"))
      const client = yield* app()
      const { kase } = yield* makeCase({ priceCents: 600n })
      const player = yield* fundedPlayer(client, "refunded-at-midnight", 100_000)
      yield* setLimits(client, player.auth, { dailyLossCents: 1_000 })
      const battle = yield* client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, player.auth)
      expect(battle.status).toBe(201)
      yield* TestClock.setTime(Date.parse("2026-11-27T03:00:00Z"))
      expect((yield* client.post(`/api/battles/${battle.body.id}/leave`, undefined, player.auth)).status).toBe(200)
      expect((yield* limitsOf(client, player.auth)).usage)
        .toMatchObject({ lossTodayCents: 0, lossWeekCents: 0, lossMonthCents: 0 })
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200)
      expect((yield* open(client, kase.id, player.auth)).body).toMatchObject({ error: "LOSS_LIMIT_REACHED" })
      expect(yield* balanceOf(client, player.auth)).toBe(99_400)
    }))

  it.scoped("an upgrade's, a battle's or a raffle's item is given back in the windows of the money stake it comes from", () =>
    Effect.gen(function*() {
      // Thursday 23:58 in São Paulo.
      yield* TestClock.setTime(Date.parse("2026-11-27T02:58:00Z"))
      const client = yield* app()
      const { items, kase } = yield* makeCase({ priceCents: 500n })
      const player = yield* fundedPlayer(client, "restaked", 100_000)
      const other = yield* fundedPlayer(client, "restaked-other", 100_000)
      const admin = yield* signIn(client, "root")
      yield* setLimits(client, player.auth, { dailyLossCents: 1_000, weeklyLossCents: 100_000, monthlyLossCents: 100_000 })
      const available = (itemId: unknown) =>
        Effect.map(client.get("/api/inventory?status=AVAILABLE", player.auth), (r) =>
          r.body.items.filter((entry: { item: { id: string } }) => entry.item.id === String(itemId)).map((entry: { id: string }) => entry.id))
      const sell = (entryId: string) =>
        Effect.map(client.post(`/api/inventory/${entryId}/sell`, undefined, player.auth), (r) => expect(r.status).toBe(200))

      // Before midnight: a battle entry (500) and a raffle ticket (400), 900 of the day's 1000.
      const battle = yield* client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, player.auth)
      expect(battle.status).toBe(201)
      const item = (name: string, valueCents: bigint) =>
        Effect.flatMap(Catalog, (catalog) => catalog.createItem({ name, rarity: "COVERT", valueCents, imageUrl: "/i/restaked.png", isUpgradable: true }))
          .pipe(Effect.provide(Catalog.Default))
      const prize = yield* item("Raffled", 50_000n)
      const raffle = yield* client.post(
        "/api/admin/raffles",
        { itemId: String(prize.id), ticketPriceCents: 400, maxTickets: 10, endsAt: iso(Date.parse("2026-11-27T03:00:00Z")) },
        admin.auth
      )
      expect((yield* client.post(`/api/raffles/${raffle.body.id}/tickets`, { count: 1 }, player.auth)).status).toBe(200)
      // Friday 00:01: the battle filled and the raffle drawn, each winning for the player what Thursday's money staked.
      yield* TestClock.setTime(Date.parse("2026-11-27T03:01:00Z"))
      const filled = yield* client.post(`/api/battles/${battle.body.id}/join`, undefined, other.auth)
      expect(filled.body.status).toBe("FINISHED")
      expect(filled.body.players.find((p: { user: { id: string } }) => p.user.id === player.id)).toMatchObject({ isWinner: true })
      expect(yield* (yield* client.service(Raffles)).drawDue()).toBeGreaterThan(0)
      const raffled = (yield* client.get(`/api/raffles/${raffle.body.id}`, player.auth)).body
      expect(raffled).toMatchObject({ status: "DRAWN", winner: { id: player.id } })
      expect((yield* limitsOf(client, player.auth)).usage).toMatchObject({ lossTodayCents: 0, lossWeekCents: 900 })

      // Their sales count on Thursday (this week), not today.
      const battlePrizes = [...(yield* available(items.common!.id)), ...(yield* available(items.rare!.id)), ...(yield* available(items.jackpot!.id))]
      expect(battlePrizes.length).toBeGreaterThan(0)
      expect(yield* available(prize.id)).toHaveLength(1)
      for (const id of [...battlePrizes, ...(yield* available(prize.id))]) yield* sell(id)
      const sold = (yield* limitsOf(client, player.auth)).usage
      expect(sold.lossTodayCents).toBe(0)
      expect(sold.lossWeekCents).toBeLessThan(900 - 50_000)

      // An item won 60 days ago and upgraded today (88 % likely: the seeded randomness makes it succeed): its sale
      // gives no room in any current window.
      // Twice: the second upgrade stakes the first one's item.
      const [first, second] = [yield* item("Restaked once", 5_100n), yield* item("Restaked twice", 5_200n)]
      const [old] = yield* grantItems(player.id, [items.rare!.id], new Date(Date.parse("2026-11-27T03:01:00Z") - 60 * DAY))
      const upgrade = (from: { id: unknown }, to: { id: unknown }, entry: string) =>
        Effect.map(client.post("/api/upgrades", { fromItemId: String(from.id), toItemId: String(to.id), inventoryItemId: entry }, player.auth),
          (answer) => expect(answer.body).toMatchObject({ success: true }))
      yield* upgrade(items.rare!, first!, old!)
      yield* upgrade(first!, second!, (yield* available(first!.id))[0]!)
      const usage = (yield* limitsOf(client, player.auth)).usage
      const [won] = yield* available(second!.id)
      yield* sell(won!)
      expect((yield* limitsOf(client, player.auth)).usage).toEqual(usage)
      // The tallies the limits are enforced on agree: today still has its 1000, no more.
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200)
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200)
      expect((yield* open(client, kase.id, player.auth)).body).toMatchObject({ error: "LOSS_LIMIT_REACHED" })
      expect(yield* ledgerProblems).toEqual(healthyLedger)

      // sql/0032 gives the entries acquired before it what these writes gave them: its updates of inventory_items
      // (not of the users' tallies, which it computes from the real clock), run again on a copy without them.
      const sql = yield* SqlClient.SqlClient
      const stakes = sql<{ id: string; stakedAt: Date | null }>`
        SELECT id::text, staked_at FROM inventory_items WHERE user_id = ${player.id} ORDER BY id`
      const written = yield* stakes
      expect(written.filter((entry) => entry.stakedAt !== null).map((entry) => entry.stakedAt!.toISOString()).sort())
        .toEqual([...battlePrizes.map(() => "2026-11-27T02:58:00.000Z"), "2026-11-27T02:58:00.000Z", iso(Date.parse("2026-11-27T03:01:00Z") - 60 * DAY), iso(Date.parse("2026-11-27T03:01:00Z") - 60 * DAY)].sort())
      const migration = readFileSync(join(migrationsDirectory, "0032_inventory_staked_at.sql"), "utf8")
      const backfill = migration.split(/;\s*\n/).map((part) => part.replace(/^(\s*--.*\n)*/, "").trim())
        .filter((statement) => /^(UPDATE inventory_items|WITH RECURSIVE)/.test(statement))
      expect(backfill).toHaveLength(3)
      yield* sql`UPDATE inventory_items SET staked_at = NULL WHERE user_id = ${player.id}`
      for (const statement of backfill) yield* sql.unsafe(statement)
      expect(yield* stakes).toEqual(written)
    }))

  it.scoped("play time counts distinct minutes with a game action; a new minute past the limit is 403 PLAY_TIME_LIMIT_REACHED", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(THURSDAY_NOON_UTC)
      const client = yield* app()
      const { kase } = yield* makeCase({ priceCents: 100n })
      const player = yield* fundedPlayer(client, "timed", 100_000)
      yield* setLimits(client, player.auth, { dailyPlayMinutes: 2 })
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200)
      yield* TestClock.adjust(30_000)
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200) // the same minute
      yield* TestClock.adjust(40_000)
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200) // a second minute
      expect((yield* limitsOf(client, player.auth)).usage.playMinutesToday).toBe(2)
      yield* TestClock.adjust(60_000)
      const refused = yield* open(client, kase.id, player.auth)
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual({
        statusCode: 403,
        error: "PLAY_TIME_LIMIT_REACHED",
        message: "You have reached the daily play time you set",
        resetsAt: "2026-11-27T03:00:00.000Z"
      })
      // An upgrade is a game action too.
      const { items } = yield* makeCase()
      const [stake] = yield* grantItems(player.id, [items.rare!.id])
      const upgrade = yield* client.post(
        "/api/upgrades",
        { fromItemId: String(items.rare!.id), toItemId: String(items.jackpot!.id), inventoryItemId: stake },
        player.auth
      )
      expect(upgrade.body).toMatchObject({ statusCode: 403, error: "PLAY_TIME_LIMIT_REACHED" })
      expect((yield* client.get("/api/inventory", player.auth)).body.items.some((i: { id: string; status: string }) =>
        i.id === stake && i.status === "AVAILABLE"
      )).toBe(true)
      yield* TestClock.setTime(Date.parse("2026-11-27T03:00:00Z"))
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200)
    }))

  it.scoped("reaching 80 % of a limit sends one RESPONSIBLE_GAMING notification per window", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(THURSDAY_NOON_UTC)
      const client = yield* app()
      const { kase } = yield* makeCase({ priceCents: 400n })
      const player = yield* fundedPlayer(client, "warned", 100_000)
      yield* setLimits(client, player.auth, { dailyLossCents: 1_000, weeklyLossCents: 100_000 })
      const warnings = Effect.map(
        client.get("/api/notifications", player.auth),
        (r) => r.body.notifications.filter((n: { type: string }) => n.type === "RESPONSIBLE_GAMING")
      )
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200) // 40 %
      expect(yield* warnings).toHaveLength(0)
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200) // 80 %
      const sent = yield* warnings
      expect(sent).toHaveLength(1)
      expect(sent[0].message).toContain("80% of your daily loss limit")
      yield* setLimits(client, player.auth, { dailyLossCents: 900 }) // still over 80 %, the same window
      expect((yield* open(client, kase.id, player.auth)).status).toBe(403)
      expect(yield* warnings).toHaveLength(1)
      // The next day is a new window.
      yield* TestClock.setTime(Date.parse("2026-11-27T12:00:00Z"))
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200)
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200)
      expect(yield* warnings).toHaveLength(2)
    }))

  it.scoped("a battle entry, a raffle ticket and an upgrade warn at 80 % too, with their own write", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(THURSDAY_NOON_UTC)
      const client = yield* app()
      const { items, kase } = yield* makeCase({ priceCents: 400n })
      const player = yield* fundedPlayer(client, "warned-games", 100_000)
      const admin = yield* signIn(client, "root")
      yield* setLimits(client, player.auth, { dailyLossCents: 1_000, dailyPlayMinutes: 2 })
      const warnings = Effect.map(
        client.get("/api/notifications", player.auth),
        (r) => r.body.notifications.filter((n: { type: string }) => n.type === "RESPONSIBLE_GAMING").map((n: { message: string }) => n.message)
      )
      // A battle entry: 40 % of the day's losses, the first of two minutes.
      const battle = yield* client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, player.auth)
      expect(battle.status).toBe(201)
      expect(yield* warnings).toEqual([])
      // A raffle ticket in the same minute: 80 % of the losses.
      const endsAt = new Date((yield* Clock.currentTimeMillis) + HOUR).toISOString()
      const raffle = yield* client.post(
        "/api/admin/raffles",
        { itemId: String(items.jackpot!.id), ticketPriceCents: 400, maxTickets: 100, endsAt },
        admin.auth
      )
      expect((yield* client.post(`/api/raffles/${raffle.body.id}/tickets`, { count: 1 }, player.auth)).status).toBe(200)
      const afterTicket = yield* warnings
      expect(afterTicket).toHaveLength(1)
      expect(afterTicket[0]).toContain("80% of your daily loss limit")
      // An upgrade stakes no money; in the next minute it plays the second of two minutes.
      yield* TestClock.adjust(60_000)
      const [stake] = yield* grantItems(player.id, [items.rare!.id])
      const upgrade = yield* client.post(
        "/api/upgrades",
        { fromItemId: String(items.rare!.id), toItemId: String(items.jackpot!.id), inventoryItemId: stake },
        player.auth
      )
      expect(upgrade.status).toBe(200)
      const afterUpgrade = yield* warnings
      expect(afterUpgrade).toHaveLength(2)
      expect(afterUpgrade.some((message: string) => message.includes("80% of your daily play time limit"))).toBe(true)
    }))

  it.scoped("at a limit's edge, parallel openings, battle entries and raffle tickets never pass it together", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(THURSDAY_NOON_UTC)
      const client = yield* app()
      const { items, kase } = yield* makeCase({ priceCents: 600n })
      const player = yield* fundedPlayer(client, "edge", 100_000)
      const admin = yield* signIn(client, "root")
      const endsAt = new Date((yield* Clock.currentTimeMillis) + HOUR).toISOString()
      const raffle = yield* client.post(
        "/api/admin/raffles",
        { itemId: String(items.jackpot!.id), ticketPriceCents: 600, maxTickets: 100, endsAt },
        admin.auth
      )
      expect(raffle.status).toBe(201)
      yield* setLimits(client, player.auth, { dailyLossCents: 1_000 })
      const attempts = [
        ...Array.from({ length: 4 }, () => open(client, kase.id, player.auth)),
        ...Array.from({ length: 4 }, () =>
          client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, player.auth)),
        ...Array.from({ length: 4 }, () => client.post(`/api/raffles/${raffle.body.id}/tickets`, { count: 1 }, player.auth))
      ]
      const answers = yield* Effect.all(attempts, { concurrency: "unbounded" })
      const passed = answers.filter((a) => a.status === 200 || a.status === 201)
      expect(passed).toHaveLength(1)
      for (const answer of answers) {
        if (answer.status >= 400) expect([403, 409], JSON.stringify(answer.body)).toContain(answer.status)
      }
      expect(yield* balanceOf(client, player.auth)).toBe(99_400)
      const sql = yield* SqlClient.SqlClient
      const [staked] = yield* sql<{ total: string }>`
        SELECT COALESCE(-SUM(amount_cents), 0)::text AS total FROM transactions
        WHERE user_id = ${player.id} AND type IN ('CASE_OPEN', 'BATTLE_ENTRY', 'RAFFLE_TICKET')`
      expect(staked!.total).toBe("600")
      expect((yield* limitsOf(client, player.auth)).usage.lossTodayCents).toBe(600)
      // The tallies the check reads are the ledger's sums.
      const [tally] = yield* sql<{ day: string; week: string; month: string }>`
        SELECT loss_day_cents::text AS day, loss_week_cents::text AS week, loss_month_cents::text AS month
        FROM users WHERE id = ${player.id}`
      expect(tally).toEqual({ day: "600", week: "600", month: "600" })
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))
})

layer(TestDatabase)("responsible gaming: self-exclusion", (it) => {
  it.scoped("closes game actions and deposits (403 SELF_EXCLUDED with until), keeps withdrawals and reads; extended, never shortened; ends by itself", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(THURSDAY_NOON_UTC)
      const client = yield* app()
      const { kase } = yield* makeCase({ priceCents: 500n })
      const player = yield* fundedPlayer(client, "excluded", 50_000)
      const excluded = yield* client.post("/api/users/me/self-exclusion", { days: 7 }, player.auth)
      expect(excluded.status).toBe(200)
      const until = iso(THURSDAY_NOON_UTC + 7 * DAY)
      expect(excluded.body).toEqual({ excluded: true, since: iso(THURSDAY_NOON_UTC), until, registryListed: false })

      const refusal = { statusCode: 403, error: "SELF_EXCLUDED", message: "You are self-excluded: playing and deposits are closed", until }
      expect((yield* open(client, kase.id, player.auth)).body).toEqual(refusal)
      expect((yield* client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, player.auth)).body)
        .toEqual(refusal)
      expect((yield* client.post("/api/payment/deposit/initiate", { amountCents: 1_000, method: "PIX" }, player.auth)).body)
        .toEqual(refusal)
      expect(yield* balanceOf(client, player.auth)).toBe(50_000)
      // Withdrawals and reads stay open.
      const out = yield* client.post("/api/withdrawals/request", withdrawal(1_000), player.auth)
      expect([200, 201], JSON.stringify(out.body)).toContain(out.status)
      expect((yield* client.get("/api/users/me/compliance", player.auth)).body.exclusion).toEqual(excluded.body)

      // Shorter: 409, unchanged; longer: extended; indefinite; then no end is shorter than for ever.
      const shorter = yield* client.post("/api/users/me/self-exclusion", { days: 3 }, player.auth)
      expect(shorter.status).toBe(409)
      expect(shorter.body).toEqual({ statusCode: 409, message: "Self-exclusion cannot be shortened" })
      expect((yield* client.post("/api/users/me/self-exclusion", { days: 10 }, player.auth)).body.until)
        .toBe(iso(THURSDAY_NOON_UTC + 10 * DAY))
      expect((yield* client.post("/api/users/me/self-exclusion", { days: 0 }, player.auth)).status).toBe(400)
      expect((yield* client.post("/api/users/me/self-exclusion", {}, player.auth)).status).toBe(400)
      // Both at once is refused, not read as the one that cannot be undone.
      expect((yield* client.post("/api/users/me/self-exclusion", { days: 30, indefinite: true }, player.auth)).status).toBe(400)

      // It ends by itself (sessions do not last ten days: the player signs in again).
      yield* TestClock.setTime(THURSDAY_NOON_UTC + 10 * DAY - 1)
      const { auth } = yield* signIn(client, "excluded")
      expect((yield* open(client, kase.id, auth)).status).toBe(403)
      yield* TestClock.adjust(1)
      expect((yield* open(client, kase.id, auth)).status).toBe(200)
      expect((yield* client.get("/api/users/me/compliance", auth)).body.exclusion)
        .toEqual({ excluded: false, since: null, until: null, registryListed: false })

      const forever = yield* client.post("/api/users/me/self-exclusion", { indefinite: true }, auth)
      expect(forever.body).toMatchObject({ excluded: true, until: null })
      expect((yield* client.post("/api/users/me/self-exclusion", { days: 3650 }, auth)).status).toBe(409)
      expect((yield* client.post("/api/users/me/self-exclusion", { indefinite: true }, auth)).status).toBe(200)
      yield* TestClock.adjust(3650 * DAY)
      const later = yield* signIn(client, "excluded")
      expect((yield* open(client, kase.id, later.auth)).body).toMatchObject({ error: "SELF_EXCLUDED", until: null })

      const sql = yield* SqlClient.SqlClient
      const audits = yield* sql<{ action: string }>`SELECT action FROM audit_logs WHERE user_id = ${player.id} AND action = 'SELF_EXCLUDED'`
      expect(audits.length).toBe(4)
    }))
})

layer(TestDatabase)("responsible gaming under JURISDICTION=BR", (it) => {
  it.scoped("a verified player without a loss limit and a play limit gets 403 LIMITS_REQUIRED on the first game action", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(THURSDAY_NOON_UTC)
      const client = yield* app("BR")
      const { kase } = yield* makeCase({ priceCents: 500n })
      const player = yield* fundedPlayer(client, "br-limits", 10_000)
      const verified = yield* client.post(
        "/api/users/me/identity",
        { cpf: cpfOf("318264571"), fullName: "Limite Obrigatorio", birthDate: "1990-01-01" },
        player.auth
      )
      expect(verified.status).toBe(200)
      const required = yield* open(client, kase.id, player.auth)
      expect(required.status).toBe(403)
      expect(required.body).toMatchObject({ statusCode: 403, error: "LIMITS_REQUIRED" })
      yield* setLimits(client, player.auth, { monthlyLossCents: 50_000 })
      expect((yield* open(client, kase.id, player.auth)).body).toMatchObject({ error: "LIMITS_REQUIRED" })
      yield* setLimits(client, player.auth, { dailyPlayMinutes: 120 })
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200)
      expect(yield* balanceOf(client, player.auth)).toBe(9_500)
      // Removing a limit waits 24 hours; then playing stops again.
      yield* setLimits(client, player.auth, { dailyPlayMinutes: null })
      expect((yield* open(client, kase.id, player.auth)).status).toBe(200)
      yield* TestClock.adjust(DAY)
      expect((yield* open(client, kase.id, player.auth)).body).toMatchObject({ error: "LIMITS_REQUIRED" })
      const compliance = (yield* client.get("/api/users/me/compliance", player.auth)).body
      expect(compliance).toMatchObject({
        jurisdiction: "BR",
        exclusion: { excluded: false, registryListed: false },
        limits: { monthlyLossCents: 50_000, dailyPlayMinutes: null, usage: { lossMonthCents: 1_000 } }
      })
    }))
})
