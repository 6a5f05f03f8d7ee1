/**
 * The administration dashboard through the public API (docs/rules.md#administration-and-dashboard;
 * docs/decisions.md "Dashboard"). A known history is built under the test clock over UTC
 * days 1970-01-01 (day 0) to 1970-01-09 (day 8): case openings (two of them on either side of a
 * midnight), an upgrade, battles (finished, cancelled, waiting), deposits in every state (one paid the
 * day after it was made, one confirmed by an administrator), withdrawals in every state (one requested
 * the day before it was completed), users active on different days (one only across a midnight), an
 * item sold back; then every number of every endpoint is checked, on several days. Gross gaming
 * revenue (docs/rules.md#gross-gaming-revenue) is tallied per day and game as the history is made, from what
 * each game answered.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it as plain, layer } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import { Randomness } from "../../src/layers/Randomness"
import { Catalog } from "../../src/services/games/Catalog"
import { dailyAverage, percentChange, roundedDivision } from "../../src/services/admin/DashboardMath"
import { fundedPlayer, grantItems, makeCase } from "../support/GameFixtures"
import { gatewayCall, initiateDeposit, paidEvent } from "../support/PaymentFixtures"
import { makeTestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const DAY = 86_400_000
const HOUR = 3_600_000
const lifted = { count: 10_000, windowMs: 60_000 }
const appOptions = {
  config: {
    adminIdpIds: ["root"],
    rateLimits: { ...testConfig.rateLimits, auth: lifted, global: lifted, caseOpen: lifted, withdrawal: lifted }
  }
}

const pix = { paymentMethod: "PIX", paymentDetails: { pixKeyType: "EMAIL", pixKey: "bob@example.com" } }

/** Moves the clock one second on, so that what happens next is strictly newer. */
const tick = TestClock.adjust(1_000)
const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

const ok = (response: { status: number; body: unknown }, status = 200) => {
  expect(response.status, JSON.stringify(response.body)).toBe(status)
  return response.body as any
}

/** `YYYY-MM-DD` of day `n` (day 0 is 1970-01-01; negative days are in 1969). */
const date = (n: number) => new Date(n * DAY).toISOString().slice(0, 10)

interface Point {
  readonly date: string
  readonly revenue: number
  readonly profit: number
  readonly deposits: number
  readonly withdrawals: number
  readonly ggr: number
  readonly itemSales: number
  readonly fees: number
}

type Figures = Pick<Point, "revenue" | "deposits" | "withdrawals"> & Partial<Pick<Point, "ggr" | "itemSales" | "fees">>

/** The chart of `count` days ending on day `today`: zeros except the `known` days. */
const chartOf = (today: number, count: number, known: Record<number, Figures>): Array<Point> =>
  Array.from({ length: count }, (_, i) => {
    const day = today - count + 1 + i
    const figures = { ggr: 0, itemSales: 0, fees: 0, ...(known[day] ?? { revenue: 0, deposits: 0, withdrawals: 0 }) }
    return { date: date(day), ...figures, profit: figures.revenue - figures.withdrawals }
  })

type Game = "openings" | "upgrades" | "battles" | "raffles"

describe("dashboard arithmetic", () => {
  plain("percent change: 2 decimals, half away from zero, 0 without a base", () => {
    expect(percentChange(4, 2)).toBe(100)
    expect(percentChange(1, 3)).toBe(-66.67)
    expect(percentChange(2, 3)).toBe(-33.33)
    expect(percentChange(4, 3)).toBe(33.33)
    expect(percentChange(33, 32)).toBe(3.13) // +3.125
    expect(percentChange(31, 32)).toBe(-3.13) // -3.125
    expect(percentChange(0, 7)).toBe(-100)
    expect(percentChange(5, 0)).toBe(0)
    expect(percentChange(0, 0)).toBe(0)
    expect(percentChange(-50, -100)).toBe(50) // a net figure that went up
    expect(percentChange(1_000_000_000_000, 3)).toBe(33_333_333_333_233.33)
  })

  plain("daily average in whole cents, half away from zero", () => {
    expect(dailyAverage(8_000, 7)).toBe(1_143)
    expect(dailyAverage(8_000, 90)).toBe(89)
    expect(dailyAverage(35, 10)).toBe(4)
    expect(dailyAverage(-35, 10)).toBe(-4)
    expect(dailyAverage(0, 30)).toBe(0)
    expect(roundedDivision(5n, 0n)).toBe(0n)
  })
})

layer(TestDatabase)("dashboard", (it) => {
  it.scoped("every figure of every endpoint over a known history of nine days", () =>
    Effect.gen(function*() {
      // A seed stream under which every opening of `kase` below drops Common, as the figures expect.
      const client = yield* makeTestClient({ ...appOptions, randomness: Randomness.seeded("dashboard") })
      const sql = yield* SqlClient.SqlClient
      const get = (path: string, auth: Record<string, string>) => Effect.map(client.get(path, auth), (r) => ok(r))

      // The catalog: `kase` (500: Common 100 90%, Rare 5000, Jackpot 50000) and `gemCase` (2000: always
      // the Gem, 3000); Stake (1000) can be upgraded to Prize (2000).
      const { kase, items } = yield* makeCase({ priceCents: 500n })
      const catalog = yield* Effect.provide(Catalog, Catalog.Default)
      const gem = yield* catalog.createItem({ name: "Gem", rarity: "COVERT", valueCents: 3_000n, imageUrl: "/g.png", isUpgradable: false })
      const { case: gemCase } = yield* catalog.createCase({
        name: "Gem Case",
        slug: `gem-case-${Date.now()}`,
        imageUrl: "/gem.png",
        priceCents: 2_000n,
        flipChance: 0,
        isActive: true,
        // Pays back 3000 for 2000 on purpose (docs/rules.md#house-edge-rule).
        promotional: true,
        items: [{ itemId: gem.id, dropChance: 1 }]
      })
      const stake = yield* catalog.createItem({ name: "Stake", rarity: "MIL_SPEC", valueCents: 1_000n, imageUrl: "/s.png", isUpgradable: true })
      const prize = yield* catalog.createItem({ name: "Prize", rarity: "CLASSIFIED", valueCents: 2_000n, imageUrl: "/p.png", isUpgradable: true })

      // What recent-activity must show, oldest first: every activity is logged here as it happens.
      const log: Array<Record<string, unknown>> = []
      const users: Record<string, { id: string; username: string }> = {}
      const record = (type: string, id: string, login: string, description: string, value: number, item?: { name: string; rarity: string }) =>
        Effect.map(nowIso, (createdAt) => {
          log.push({ id: `${type}:${id}`, type, user: users[login], description, value, ...(item ? { item } : {}), createdAt })
        })
      // Gross gaming revenue by day and game: stakes minus the value awarded, as each game answered.
      const ggr: Record<number, Record<Game, number>> = {}
      const addGgr = (game: Game, cents: number) =>
        Effect.map(Clock.currentTimeMillis, (ms) => {
          const day = (ggr[Math.floor(ms / DAY)] ??= { openings: 0, upgrades: 0, battles: 0, raffles: 0 })
          day[game] += cents
        })
      const ggrTotal = (day: number) => Object.values(ggr[day] ?? {}).reduce((sum, cents) => sum + cents, 0)
      const ggrToday = (day: number) => ({ total: ggrTotal(day), ...(ggr[day] ?? { openings: 0, upgrades: 0, battles: 0, raffles: 0 }) })
      const player = (login: string, balance: number) =>
        Effect.tap(fundedPlayer(client, login, balance), (p) => Effect.sync(() => { users[login] = { id: p.id, username: login } }))
      const open = (login: string, auth: Record<string, string>, which: { readonly id: unknown; readonly name: string; readonly priceCents: bigint }) =>
        Effect.gen(function*() {
          const opened = ok(yield* client.post(`/api/cases/${which.id}/open`, undefined, auth))
          yield* addGgr("openings", Number(which.priceCents) - opened.item.valueCents)
          yield* record("CASE_OPEN", opened.openingId, login, `Opened ${which.name}`, Number(which.priceCents), {
            name: opened.item.name,
            rarity: opened.item.rarity
          })
          return opened.item as { id: string; name: string; rarity: string; valueCents: number; imageUrl: string }
        })
      const requestWithdrawal = (amountCents: number, auth: Record<string, string>) =>
        Effect.gen(function*() {
          const made = ok(yield* client.post("/api/withdrawals/request", { amountCents, ...pix }, auth), 201)
          yield* record("WITHDRAWAL_REQUEST", made.id, "bob", "Withdrawal request via PIX", amountCents)
          return made.id as string
        })
      const createBattle = (login: string, auth: Record<string, string>, mode: string, maxPlayers: number) =>
        Effect.gen(function*() {
          const battle = ok(yield* client.post("/api/battles", { caseIds: [String(kase.id)], mode, maxPlayers }, auth), 201)
          yield* addGgr("battles", 500)
          yield* record("BATTLE", battle.id, login, `Created a ${mode} battle for ${maxPlayers} players`, 500)
          return battle.id as string
        })
      const confirmDeposit = (login: string, externalId: string, depositId: string, amount: number) =>
        Effect.gen(function*() {
          ok(yield* gatewayCall(client, paidEvent(externalId)))
          yield* record("DEPOSIT", depositId, login, "Deposit via PIX", amount)
        })

      // ---- Day 0, 1970-01-01: root, alice and bob arrive; alice opens two cases and deposits 2000.
      const root = yield* player("root", 0)
      const alice = yield* player("alice", 20_000)
      const bob = yield* player("bob", 10_000)
      yield* tick
      const day0Drops = [yield* open("alice", alice.auth, kase)]
      yield* tick
      day0Drops.push(yield* open("alice", alice.auth, kase))
      yield* tick
      const day0Deposit = yield* initiateDeposit(client, alice.auth, 2_000)
      yield* confirmDeposit("alice", day0Deposit.externalId, day0Deposit.depositId, 2_000)
      // The seeded rolls: two commons.
      expect(day0Drops.map((d) => d.id)).toEqual([String(items.common!.id), String(items.common!.id)])
      const common = day0Drops[0]!
      yield* tick
      // Two commons for 500 each.
      expect(ggr[0]).toEqual({ openings: 800, upgrades: 0, battles: 0, raffles: 0 })
      expect(yield* get("/api/admin/dashboard", root.auth)).toEqual({
        timezone: "UTC",
        // Nobody was active the day before: growth 0.
        users: { total: 3, activeToday: 3, newToday: 3, growth: 0 },
        financial: {
          revenueToday: 1_000,
          profitToday: 1_000,
          depositsToday: 2_000,
          withdrawalsToday: 0,
          pendingWithdrawals: 0,
          itemSalesToday: 0,
          feesToday: 0
        },
        games: { casesOpenedToday: 2, battlesToday: 0, upgradesToday: 0, totalVolume: 1_000, ggrToday: ggrToday(0) },
        topItems: {
          mostDropped: { ...common, count: 2 },
          highestValue: { ...common, count: 2 },
          mostOpened: { id: String(kase.id), name: kase.name, slug: kase.slug, imageUrl: kase.imageUrl, priceCents: 500, count: 2 }
        }
      })

      // ---- Day 1, 1970-01-02: an opening, an upgrade (stake 1000), two withdrawal requests (1500 stays
      // pending, 2000 is completed on day 2), a deposit of bob's that is paid on day 2, a battle that
      // finishes (2 x 500) and one its creator cancels (500 entered and refunded).
      yield* TestClock.setTime(DAY)
      yield* open("alice", alice.auth, kase)
      yield* tick
      yield* sql`INSERT INTO inventory_items (user_id, item_id, source, acquired_at, updated_at)
                 VALUES (${alice.id}, ${stake.id}, 'CASE_OPEN', to_timestamp(${DAY / 1000}), to_timestamp(${DAY / 1000}))`
      const upgraded = ok(yield* client.post("/api/upgrades", { fromItemId: String(stake.id), toItemId: String(prize.id) }, alice.auth))
      yield* addGgr("upgrades", 1_000 - (upgraded.success ? 2_000 : 0))
      yield* record("UPGRADE", upgraded.upgradeId, "alice", `${upgraded.success ? "Upgraded" : "Failed to upgrade"} Stake to Prize`, 1_000, {
        name: "Prize",
        rarity: "CLASSIFIED"
      })
      yield* tick
      const staleRequestedAt = yield* Clock.currentTimeMillis
      const stale = yield* requestWithdrawal(1_500, bob.auth)
      yield* tick
      const overnight = yield* requestWithdrawal(2_000, bob.auth)
      yield* tick
      const lateDeposit = yield* initiateDeposit(client, bob.auth, 1_100)
      yield* tick
      const finished = yield* createBattle("alice", alice.auth, "NORMAL", 2)
      yield* tick
      ok(yield* client.post(`/api/battles/${finished}/join`, undefined, bob.auth))
      yield* addGgr("battles", 500)
      // The join that fills the battle settles it: what the winners were given is no longer the house's.
      const settled = ok(yield* client.get(`/api/battles/${finished}/settlements`, alice.auth))
      for (const settlement of settled.settlements as ReadonlyArray<{ type: string; item: { valueCents: number } }>) {
        if (settlement.type !== "REMOVED_TO_POOL") yield* addGgr("battles", -settlement.item.valueCents)
      }
      yield* tick
      const cancelled = yield* createBattle("bob", bob.auth, "NORMAL", 2)
      yield* tick
      ok(yield* client.post(`/api/battles/${cancelled}/leave`, undefined, bob.auth))
      yield* addGgr("battles", -500)
      // The last millisecond of day 1: an opening, and dave's first request (he signs up now).
      yield* TestClock.setTime(2 * DAY - 1)
      yield* open("alice", alice.auth, kase)
      const dave = yield* player("dave", 0)
      expect(yield* get("/api/admin/dashboard", root.auth)).toMatchObject({
        // Active: root, alice, bob and dave, against root, alice and bob on day 0.
        users: { total: 4, activeToday: 4, newToday: 1, growth: 33.33 },
        // 2 openings, the stake, 2 entries of the finished battle; the cancelled one's entry was refunded.
        financial: { revenueToday: 1_000 + 1_000 + 1_000, profitToday: 3_000, depositsToday: 0, withdrawalsToday: 0, pendingWithdrawals: 2 },
        games: { casesOpenedToday: 2, battlesToday: 2, upgradesToday: 1, totalVolume: 3_000, ggrToday: ggrToday(1) }
      })

      // ---- Day 2, 1970-01-03 ("today" for most checks). Its first millisecond: a Gem, and dave again
      // (two seconds after his last request: his activity is still recorded for the new day).
      yield* TestClock.setTime(2 * DAY)
      const gemDrop = yield* open("alice", alice.auth, gemCase)
      expect(gemDrop.id).toBe(String(gem.id))
      yield* tick
      ok(yield* client.get("/api/auth/me", dave.auth))

      // Alerts: the pending withdrawals become critical strictly after 24 hours.
      const nothing = { alerts: [] }
      yield* TestClock.setTime(staleRequestedAt + DAY)
      expect(yield* get("/api/admin/dashboard/alerts", root.auth)).toEqual(nothing)
      yield* TestClock.adjust(1)
      const pendingAlert = (count: number) => ({
        id: "withdrawals-pending-24h",
        level: "CRITICAL",
        title: "Withdrawals waiting for more than 24 hours",
        message: `${count} pending withdrawal${count === 1 ? "" : "s"} requested more than 24 hours ago`
      })
      expect(yield* get("/api/admin/dashboard/alerts", root.auth)).toEqual({ alerts: [pendingAlert(1)] })

      // From 01:00: carol arrives; three more openings, a battle left waiting, deposits in every state,
      // withdrawals in every state.
      yield* TestClock.setTime(2 * DAY + HOUR)
      const carol = yield* player("carol", 0)
      const todayDrops: Array<{ id: string }> = []
      for (let i = 0; i < 3; i++) {
        yield* tick
        todayDrops.push(yield* open("alice", alice.auth, kase))
      }
      expect(todayDrops.map((d) => d.id)).toEqual([common.id, common.id, common.id])
      yield* tick
      yield* createBattle("alice", alice.auth, "CRAZY", 3)
      yield* tick
      yield* confirmDeposit("bob", lateDeposit.externalId, lateDeposit.depositId, 1_100)
      yield* tick
      const paid = yield* initiateDeposit(client, alice.auth, 3_000)
      const byAdmin = yield* initiateDeposit(client, alice.auth, 500)
      const failed = yield* initiateDeposit(client, alice.auth, 700)
      yield* initiateDeposit(client, alice.auth, 800) // stays PENDING
      const expired = yield* initiateDeposit(client, alice.auth, 900)
      yield* confirmDeposit("alice", paid.externalId, paid.depositId, 3_000)
      yield* tick
      ok(yield* client.post(`/api/admin/deposits/${byAdmin.depositId}/confirm`, undefined, root.auth))
      yield* record("DEPOSIT", byAdmin.depositId, "alice", "Deposit via PIX", 500)
      ok(yield* gatewayCall(client, { event: "charge.failed", data: { id: failed.externalId } }))
      ok(yield* gatewayCall(client, { event: "charge.expired", data: { id: expired.externalId } }))
      // 1 failed of the 5 deposits made today: 20%, not more. Both of yesterday's withdrawals are pending.
      expect(yield* get("/api/admin/dashboard/alerts", root.auth)).toEqual({ alerts: [pendingAlert(2)] })
      const cancelledDeposit = yield* initiateDeposit(client, alice.auth, 600)
      yield* sql`UPDATE deposits SET status = 'CANCELLED' WHERE id = ${cancelledDeposit.depositId}` // no API cancels deposits
      const failedToo = yield* initiateDeposit(client, alice.auth, 750)
      ok(yield* gatewayCall(client, { event: "charge.failed", data: { id: failedToo.externalId } }))
      yield* tick
      ok(yield* client.post(`/api/admin/withdrawals/${overnight}/approve`, undefined, root.auth))
      const approved = yield* requestWithdrawal(1_200, bob.auth)
      ok(yield* client.post(`/api/admin/withdrawals/${approved}/approve`, undefined, root.auth))
      yield* tick
      const rejected = yield* requestWithdrawal(1_000, bob.auth)
      ok(yield* client.post(`/api/admin/withdrawals/${rejected}/reject`, { reason: "KYC" }, root.auth))
      yield* tick
      const withdrawn = yield* requestWithdrawal(1_100, bob.auth)
      ok(yield* client.post(`/api/withdrawals/${withdrawn}/cancel`, undefined, bob.auth))
      const states = (yield* sql<{ status: string; n: number }>`
        SELECT status, count(*)::int AS n FROM withdrawals GROUP BY status ORDER BY status`)
      expect(states).toEqual([
        { status: "CANCELLED", n: 1 },
        { status: "COMPLETED", n: 2 },
        { status: "PENDING", n: 1 },
        { status: "REJECTED", n: 1 }
      ])
      const depositStates = (yield* sql<{ status: string; n: number }>`
        SELECT status, count(*)::int AS n FROM deposits GROUP BY status ORDER BY status`)
      expect(depositStates).toEqual([
        { status: "CANCELLED", n: 1 },
        { status: "CONFIRMED", n: 4 },
        { status: "EXPIRED", n: 1 },
        { status: "FAILED", n: 2 },
        { status: "PENDING", n: 1 }
      ])
      yield* tick

      // --- GET /admin/dashboard on day 2
      const kaseTop = { id: String(kase.id), name: kase.name, slug: kase.slug, imageUrl: kase.imageUrl, priceCents: 500 }
      expect(yield* get("/api/admin/dashboard", root.auth)).toEqual({
        timezone: "UTC",
        // Active: dave, root, alice, bob and carol, against 4 on day 1.
        users: { total: 5, activeToday: 5, newToday: 1, growth: 25 },
        financial: {
          // The Gem (2000), 3 openings (1500), the waiting battle's entry (500).
          revenueToday: 4_000,
          // Completed today: 2000 requested yesterday and 1200.
          profitToday: 4_000 - 3_200,
          // Confirmed today: bob's deposit of yesterday, the paid one and the one the administrator confirmed.
          depositsToday: 1_100 + 3_000 + 500,
          withdrawalsToday: 3_200,
          pendingWithdrawals: 1,
          itemSalesToday: 0,
          // Every deposit was PIX: no fee.
          feesToday: 0
        },
        games: { casesOpenedToday: 4, battlesToday: 1, upgradesToday: 0, totalVolume: 4_000, ggrToday: ggrToday(2) },
        topItems: {
          mostDropped: { ...common, count: 3 },
          highestValue: { ...gemDrop, count: 1 },
          mostOpened: { ...kaseTop, count: 3 }
        }
      })

      // --- GET /admin/dashboard/revenue-chart on day 2
      // Rule 3: withdrawals are the day's WITHDRAWAL movements, i.e. requests (rejected and cancelled ones too).
      // Day 2: the Gem (2000 for 3000), 3 commons (500 for 100) and the waiting battle's entry.
      expect(ggr[2]).toEqual({ openings: -1_000 + 1_200, upgrades: 0, battles: 500, raffles: 0 })
      const history = {
        0: { revenue: 1_000, deposits: 2_000, withdrawals: 0, ggr: ggrTotal(0) },
        1: { revenue: 500 + 1_000 + 1_000 + 500, deposits: 0, withdrawals: 1_500 + 2_000, ggr: ggrTotal(1) },
        2: { revenue: 4_000, deposits: 1_100 + 3_000 + 500, withdrawals: 1_200 + 1_000 + 1_100, ggr: ggrTotal(2) }
      }
      const week = {
        timezone: "UTC",
        data: chartOf(2, 7, history),
        summary: { totalRevenue: 8_000, totalProfit: 1_000 - 500 + 700, avgDailyRevenue: 1_143, growthRate: 0 }
      }
      expect(week.data[0]!.date).toBe("1969-12-28")
      expect(week.data[6]!.date).toBe("1970-01-03")
      expect(yield* get("/api/admin/dashboard/revenue-chart?period=7d", root.auth)).toEqual(week)
      // Settled days now come from the cache: the same answer.
      expect(yield* get("/api/admin/dashboard/revenue-chart?period=7d", root.auth)).toEqual(week)
      expect(yield* get("/api/admin/dashboard/revenue-chart?period=30d", root.auth)).toEqual({
        timezone: "UTC",
        data: chartOf(2, 30, history),
        summary: { ...week.summary, avgDailyRevenue: 267 }
      })
      const quarter = yield* get("/api/admin/dashboard/revenue-chart?period=90d", root.auth)
      expect(quarter).toEqual({ timezone: "UTC", data: chartOf(2, 90, history), summary: { ...week.summary, avgDailyRevenue: 89 } })
      expect(quarter.data[0].date).toBe("1969-10-06")
      for (const bad of ["1d", "", "7", "7D"]) {
        const refused = yield* client.get(`/api/admin/dashboard/revenue-chart?period=${bad}`, root.auth)
        expect(refused.status).toBe(400)
        expect(refused.body.errors).toEqual([{ field: "period", message: "must be one of 7d, 30d, 90d" }])
      }
      expect((yield* client.get("/api/admin/dashboard/revenue-chart", root.auth)).status).toBe(400)

      // --- GET /admin/dashboard/recent-activity on day 2: everything, newest first.
      const newestFirst = [...log].reverse()
      expect(newestFirst.length).toBe(21)
      expect(yield* get("/api/admin/dashboard/recent-activity?limit=100", root.auth)).toEqual({ activities: newestFirst })
      expect(yield* get("/api/admin/dashboard/recent-activity", root.auth)).toEqual({ activities: newestFirst.slice(0, 20) })
      expect(yield* get("/api/admin/dashboard/recent-activity?limit=1", root.auth)).toEqual({ activities: newestFirst.slice(0, 1) })
      for (const bad of ["0", "101", "abc", "1.5"]) {
        expect((yield* client.get(`/api/admin/dashboard/recent-activity?limit=${bad}`, root.auth)).status).toBe(400)
      }

      // --- GET /admin/dashboard/alerts on day 2: 2 of the 7 deposits made today failed (28.57%).
      const failingAlert = {
        id: "deposits-failing",
        level: "WARNING",
        title: "Many deposits are failing",
        message: "2 of 7 deposits today failed (28.57%)"
      }
      expect(yield* get("/api/admin/dashboard/alerts", root.auth)).toEqual({ alerts: [pendingAlert(1), failingAlert] })
      const suspicious = (count: number) =>
        Effect.forEach(Array.from({ length: count }), () =>
          sql`INSERT INTO audit_logs (user_id, action, metadata, created_at)
              VALUES (${carol.id}, 'SUSPICIOUS_IP_CHANGE', '{}'::jsonb, to_timestamp(${(2 * DAY + 2 * HOUR) / 1000}))`)
      // One yesterday does not count; ten today are not more than ten.
      yield* sql`INSERT INTO audit_logs (user_id, action, metadata, created_at)
                 VALUES (${carol.id}, 'SUSPICIOUS_IP_CHANGE', '{}'::jsonb, to_timestamp(${(2 * DAY - 1) / 1000}))`
      yield* suspicious(10)
      expect(yield* get("/api/admin/dashboard/alerts", root.auth)).toEqual({ alerts: [pendingAlert(1), failingAlert] })
      yield* suspicious(1)
      expect(yield* get("/api/admin/dashboard/alerts", root.auth)).toEqual({
        alerts: [
          pendingAlert(1),
          failingAlert,
          { id: "suspicious-ip-changes", level: "WARNING", title: "Suspicious IP changes", message: "11 sessions changed region today" }
        ]
      })

      // Administrators only, on every endpoint.
      for (const path of ["", "/revenue-chart?period=7d", "/recent-activity", "/alerts"]) {
        expect((yield* client.get(`/api/admin/dashboard${path}`)).status).toBe(401)
        expect((yield* client.get(`/api/admin/dashboard${path}`, carol.auth)).status).toBe(403)
      }

      // The stale withdrawal is completed: no critical alert, and today's withdrawals grow by 1500.
      ok(yield* client.post(`/api/admin/withdrawals/${stale}/approve`, undefined, root.auth))
      expect((yield* get("/api/admin/dashboard/alerts", root.auth)).alerts.map((a: { id: string }) => a.id)).toEqual([
        "deposits-failing",
        "suspicious-ip-changes"
      ])
      expect((yield* get("/api/admin/dashboard", root.auth)).financial).toEqual({
        revenueToday: 4_000,
        profitToday: 4_000 - 4_700,
        depositsToday: 4_600,
        withdrawalsToday: 4_700,
        pendingWithdrawals: 0,
        itemSalesToday: 0,
        feesToday: 0
      })

      // ---- Day 3: only root and alice are active (growth against 5 yesterday); alice opens one case and
      // sells what it gave her (an item sale: not revenue, not GGR).
      yield* TestClock.setTime(3 * DAY + HOUR)
      const day3Drop = yield* open("alice", alice.auth, kase)
      expect(day3Drop.id).toBe(common.id)
      const entries = ok(yield* client.get("/api/inventory?status=AVAILABLE&limit=100", alice.auth)).items as ReadonlyArray<
        { id: string; item: { id: string }; acquiredAt: string }
      >
      const sold = entries.find((entry) => entry.item.id === common.id && entry.acquiredAt === new Date(3 * DAY + HOUR).toISOString())!
      expect(ok(yield* client.post(`/api/inventory/${sold.id}/sell`, undefined, alice.auth)).creditedCents).toBe(100)
      expect(yield* get("/api/admin/dashboard", root.auth)).toEqual({
        timezone: "UTC",
        users: { total: 5, activeToday: 2, newToday: 0, growth: -60 },
        financial: {
          revenueToday: 500,
          profitToday: 500,
          depositsToday: 0,
          withdrawalsToday: 0,
          pendingWithdrawals: 0,
          itemSalesToday: 100,
          feesToday: 0
        },
        games: { casesOpenedToday: 1, battlesToday: 0, upgradesToday: 0, totalVolume: 500, ggrToday: ggrToday(3) },
        topItems: { mostDropped: { ...common, count: 1 }, highestValue: { ...common, count: 1 }, mostOpened: { ...kaseTop, count: 1 } }
      })

      // ---- Day 8, 1970-01-09: the week is days 2 to 8. Its first day starts with the Gem (at
      // 00:00:00.000); the opening at 23:59:59.999 the day before is in the preceding week.
      yield* TestClock.setTime(8 * DAY + HOUR)
      const later = { 2: history[2], 3: { revenue: 500, deposits: 0, withdrawals: 0, ggr: 400, itemSales: 100 } }
      expect(yield* get("/api/admin/dashboard/revenue-chart?period=7d", root.auth)).toEqual({
        timezone: "UTC",
        data: chartOf(8, 7, later),
        // 4500 against the 1000 + 3000 of days 0 and 1.
        summary: { totalRevenue: 4_500, totalProfit: 4_500 - 3_300, avgDailyRevenue: 643, growthRate: 12.5 }
      })
      expect(yield* get("/api/admin/dashboard/revenue-chart?period=30d", root.auth)).toEqual({
        timezone: "UTC",
        data: chartOf(8, 30, { ...history, ...later }),
        summary: { totalRevenue: 8_500, totalProfit: 1_000 - 500 + 700 + 500, avgDailyRevenue: 283, growthRate: 0 }
      })
      // A quiet day: root alone is active, nobody was yesterday (growth 0), nothing to rank.
      expect(yield* get("/api/admin/dashboard", root.auth)).toEqual({
        timezone: "UTC",
        users: { total: 5, activeToday: 1, newToday: 0, growth: 0 },
        financial: {
          revenueToday: 0,
          profitToday: 0,
          depositsToday: 0,
          withdrawalsToday: 0,
          pendingWithdrawals: 0,
          itemSalesToday: 0,
          feesToday: 0
        },
        games: { casesOpenedToday: 0, battlesToday: 0, upgradesToday: 0, totalVolume: 0, ggrToday: ggrToday(8) },
        topItems: { mostDropped: null, highestValue: null, mostOpened: null }
      })
      // The feed is still newest first; the suspicious audits were yesterday's and more.
      expect((yield* get("/api/admin/dashboard/recent-activity?limit=1", root.auth)).activities[0].createdAt).toBe(
        new Date(3 * DAY + HOUR).toISOString()
      )
      expect(yield* get("/api/admin/dashboard/alerts", root.auth)).toEqual(nothing)

      // ---- Day 14: nothing in the week (days 8 to 14), 7500 in the week before: -100%.
      yield* TestClock.setTime(14 * DAY + HOUR)
      expect((yield* get("/api/admin/dashboard/revenue-chart?period=7d", root.auth)).summary).toEqual({
        totalRevenue: 0,
        totalProfit: 0,
        avgDailyRevenue: 0,
        growthRate: -100
      })
    }))

  it.scoped("ggrToday per game, item sales and deposit fees: from the day's records, and kept by the cache", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const get = (path: string, auth: Record<string, string>) => Effect.map(client.get(path, auth), (r) => ok(r))
      const DAY_100 = 100 * DAY
      yield* TestClock.setTime(DAY_100 + HOUR)
      const root = yield* fundedPlayer(client, "root", 0)
      const alice = yield* fundedPlayer(client, "alice-100", 50_000)
      const bob = yield* fundedPlayer(client, "bob-100", 50_000)
      const { kase } = yield* makeCase({ priceCents: 500n })
      const catalog = yield* Effect.provide(Catalog, Catalog.Default)
      const item = (name: string, valueCents: bigint) =>
        catalog.createItem({ name, rarity: "CLASSIFIED", valueCents, imageUrl: "/x.png", isUpgradable: true })

      // Openings: the case's price against what each gave.
      let openings = 0
      for (let i = 0; i < 3; i++) {
        const opened = ok(yield* client.post(`/api/cases/${kase.id}/open`, undefined, alice.auth))
        openings += 500 - opened.item.valueCents
      }
      // An upgrade: the stake against the target when it succeeds.
      const stake = yield* item("Stake 100", 1_000n)
      const target = yield* item("Target 100", 2_000n)
      yield* grantItems(alice.id, [stake.id])
      const upgraded = ok(yield* client.post("/api/upgrades", { fromItemId: String(stake.id), toItemId: String(target.id) }, alice.auth))
      const upgrades = 1_000 - (upgraded.success ? 2_000 : 0)
      // A battle: both entries against what the winners were given.
      const battle = ok(yield* client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, alice.auth), 201)
      ok(yield* client.post(`/api/battles/${battle.id}/join`, undefined, bob.auth))
      const settled = ok(yield* client.get(`/api/battles/${battle.id}/settlements`, alice.auth))
      const awarded = (settled.settlements as ReadonlyArray<{ type: string; item: { valueCents: number } }>)
        .filter((s) => s.type !== "REMOVED_TO_POOL")
        .reduce((sum, s) => sum + s.item.valueCents, 0)
      const battles = 1_000 - awarded
      // A raffle sold out (5 x 300) for a prize worth 1000 at the draw; revalued afterwards, it still counts 1000.
      const prize = yield* item("Raffle prize 100", 1_000n)
      const raffle = ok(yield* client.post("/api/admin/raffles", {
        itemId: String(prize.id),
        ticketPriceCents: 300,
        maxTickets: 5,
        endsAt: new Date(DAY_100 + 20 * HOUR).toISOString()
      }, root.auth), 201)
      ok(yield* client.post(`/api/raffles/${raffle.id}/tickets`, { count: 2 }, alice.auth))
      ok(yield* client.post(`/api/raffles/${raffle.id}/tickets`, { count: 3 }, bob.auth))
      expect(ok(yield* client.get(`/api/raffles/${raffle.id}`, alice.auth)).status).toBe("DRAWN")
      yield* catalog.updateItem(prize.id, { valueCents: 4_000n })
      // The winner sells the prize at its new value: an item sale, not GGR.
      const winner = ok(yield* client.get(`/api/raffles/${raffle.id}`, alice.auth)).winner.id === alice.id ? alice : bob
      const won = (ok(yield* client.get("/api/inventory?limit=100", winner.auth)).items as ReadonlyArray<{ id: string; item: { id: string } }>)
        .find((entry) => entry.item.id === String(prize.id))!
      expect(ok(yield* client.post(`/api/inventory/${won.id}/sell`, undefined, winner.auth)).creditedCents).toBe(4_000)
      // Deposits: a card (3.5 % of 1500: 52.5, rounded up to 53) and crypto (1 % of 1050: 10.5 -> 11) deposit
      // confirmed; a card deposit left pending pays no fee yet.
      for (const [amountCents, method] of [[1_500, "CREDIT_CARD"], [1_050, "CRYPTO"], [2_000, "CREDIT_CARD"]] as const) {
        const initiated = yield* initiateDeposit(client, alice.auth, amountCents, method)
        if (amountCents !== 2_000) ok(yield* gatewayCall(client, paidEvent(initiated.externalId)))
      }

      const expected = { openings, upgrades, battles, raffles: 1_500 - 1_000 }
      const total = openings + upgrades + battles + 500
      const stats = yield* get("/api/admin/dashboard", root.auth)
      expect(stats.games.ggrToday).toEqual({ total, ...expected })
      expect(stats.financial).toMatchObject({ itemSalesToday: 4_000, feesToday: 53 + 11, depositsToday: 1_500 + 1_050 })
      const today = (yield* get("/api/admin/dashboard/revenue-chart?period=7d", root.auth)).data.at(-1)
      expect(today).toMatchObject({ date: date(100), ggr: total, itemSales: 4_000, fees: 64 })

      // Two hours into the next day, day 100 is read from the cache of settled days: the same figures.
      yield* TestClock.setTime(DAY_100 + DAY + 2 * HOUR)
      const cached = yield* SqlClient.SqlClient.pipe(Effect.flatMap((sql) => sql`SELECT 1 FROM dashboard_days WHERE day = ${date(100)}::date`))
      expect(cached).toEqual([])
      const chart = yield* get("/api/admin/dashboard/revenue-chart?period=7d", root.auth)
      expect(chart.data.at(-2)).toMatchObject({ date: date(100), ggr: total, itemSales: 4_000, fees: 64 })
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT ggr_openings_cents::int AS openings, ggr_upgrades_cents::int AS upgrades,
                               ggr_battles_cents::int AS battles, ggr_raffles_cents::int AS raffles,
                               item_sales_cents::int AS item_sales, fees_cents::int AS fees
                        FROM dashboard_days WHERE day = ${date(100)}::date`)
        .toEqual([{ ...expected, itemSales: 4_000, fees: 64 }])
      expect((yield* get("/api/admin/dashboard/revenue-chart?period=7d", root.auth)).data.at(-2)).toEqual(chart.data.at(-2))
      // The new day starts from nothing.
      expect((yield* get("/api/admin/dashboard", root.auth)).games.ggrToday).toEqual({ total: 0, openings: 0, upgrades: 0, battles: 0, raffles: 0 })
    }))
})
