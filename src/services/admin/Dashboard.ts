/**
 * The administration dashboard (docs/rules.md#administration-and-dashboard; docs/decisions.md
 * "Dashboard"). Every day is a calendar day of BUSINESS_TIMEZONE (docs/rules.md#business-timezone; UTC by
 * default) by the Effect Clock: its bounds are the instants its local midnights begin, and records are grouped by
 * their local date (`AT TIME ZONE`).
 *
 * - Revenue = CASE_OPEN and BATTLE_ENTRY ledger amounts (as positive cents), less the BATTLE_REFUND
 *   amounts (an entry given back, when a player leaves or the creator cancels, was never revenue),
 *   plus the source values staked in upgrades. The chart's deposits and withdrawals are the DEPOSIT
 *   and WITHDRAWAL ledger movements (docs/rules.md#revenue-chart); the "today" financial figures are confirmed
 *   deposits and completed withdrawals (docs/rules.md#dashboard-stats).
 * - Gross gaming revenue (docs/rules.md#gross-gaming-revenue, docs/economics.md), per game and day: what
 *   players staked minus the value of the items (and balance: no game pays any today) they were awarded.
 *   Openings: price paid minus the won item's value, by opening time. Upgrades: the staked item's value minus,
 *   on success, the target's value, by upgrade time. Battles: entries net of refunds, by ledger time, minus the
 *   value of the items given to winners (DROPPED and ADDED_FROM_POOL settlements; REMOVED_TO_POOL
 *   stays with the house), by settlement time. Raffles: tickets, by ledger time, minus the prize's value
 *   at the draw, by draw time. Item sales (ITEM_SELL credits) and deposit fees (on deposits confirmed
 *   that day, by confirmedAt) are reported beside them.
 * - Every per-day figure comes from one query (`computeDays`), for the chart and for today alike, and
 *   is read through indexes on its timestamps. The chart reads days that are over from
 *   `dashboard_days` (keyed by zone and day: a day computed in another zone is never read), computed once on first need (a day's rows never change once it has ended: they
 *   are stamped with the time they were written; an hour of margin covers clocks of other instances),
 *   and computes only the recent days live. DashboardCacheJob fills the cache in the background, so
 *   requests do not pay for it.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import type { Alert, ChartPeriod } from "../../schema/admin/Dashboard"
import { AppConfig } from "../../layers/AppConfig"
import { Rarity } from "../../schema/games/Catalog"
import { Catalog } from "../games/Catalog"
import { formatBrl } from "../../schema/money/Money"
import { DAY_MS, dailyAverage, percentChange } from "./DashboardMath"
import { addDays, zonedCalendar } from "../platform/ZonedCalendar"
import { execute, numberOf, rowsOf, singleOf } from "../platform/SqlRows"

/** How many of the dashboard's reads run at once (the pool has 10 connections for everyone). */
const STATS_CONCURRENCY = 4

/** A day is cached once it ended this long ago. */
const SETTLED_AFTER_MS = 3_600_000

/** The days each chart period spans. */
const CHART_PERIODS: Record<ChartPeriod, number> = { "7d": 7, "30d": 30, "90d": 90 }

/** The ledger types of revenue (docs/rules.md#revenue); amounts are the user's side, so revenue is minus their sum. */
const REVENUE_TYPES = ["CASE_OPEN", "BATTLE_ENTRY", "BATTLE_REFUND"] as const
/** Every ledger type a day's figures read. */
const DAY_TYPES = [...REVENUE_TYPES, "DEPOSIT", "WITHDRAWAL", "RAFFLE_TICKET", "ITEM_SELL"] as const

/** The figures of one business day, in cents. */
const DayRow = Schema.Struct({
  day: Schema.String,
  revenueCents: Schema.NumberFromString,
  depositsCents: Schema.NumberFromString,
  withdrawalsCents: Schema.NumberFromString,
  ggrOpeningsCents: Schema.NumberFromString,
  ggrUpgradesCents: Schema.NumberFromString,
  ggrBattlesCents: Schema.NumberFromString,
  ggrRafflesCents: Schema.NumberFromString,
  itemSalesCents: Schema.NumberFromString,
  feesCents: Schema.NumberFromString
})
type DayRow = typeof DayRow.Type

const quietDay = (day: string): DayRow => ({
  day,
  revenueCents: 0,
  depositsCents: 0,
  withdrawalsCents: 0,
  ggrOpeningsCents: 0,
  ggrUpgradesCents: 0,
  ggrBattlesCents: 0,
  ggrRafflesCents: 0,
  itemSalesCents: 0,
  feesCents: 0
})

const ggrOf = (day: DayRow) => day.ggrOpeningsCents + day.ggrUpgradesCents + day.ggrBattlesCents + day.ggrRafflesCents

const TopItemRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  rarity: Rarity,
  valueCents: Schema.NumberFromString,
  imageUrl: Schema.String,
  count: Schema.Number
})
const TopCaseRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  slug: Schema.String,
  imageUrl: Schema.String,
  priceCents: Schema.NumberFromString,
  count: Schema.Number
})

const ActivityRow = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  userId: Schema.String,
  username: Schema.String,
  description: Schema.String,
  value: Schema.NumberFromString,
  itemName: Schema.NullOr(Schema.String),
  itemRarity: Schema.NullOr(Rarity),
  createdAt: Schema.DateFromSelf
})

const DepositCountsRow = Schema.Struct({ total: Schema.Number, failed: Schema.Number })

/**
 * The payout deadline under JURISDICTION=BR (docs/rules.md#payout-deadline): a prize is paid within 120 minutes of
 * its request. A request not paid after 60 minutes is at risk (WARNING), after 100 minutes it is about to miss
 * the deadline (CRITICAL).
 */
const PAYOUT_AT_RISK_MINUTES = 60
const PAYOUT_CRITICAL_MINUTES = 100

const PayoutDeadlineRow = Schema.Struct({
  atRisk: Schema.Number,
  critical: Schema.Number,
  oldestMinutes: Schema.NullOr(Schema.Number)
})

/**
 * A player the centralized self-exclusion registry lists, with a balance and no withdrawal under way
 * (docs/rules.md#excluded-players-balance): the automatic payout found no key of theirs, or did not start.
 */
const ExcludedBalanceRow = Schema.Struct({ userId: Schema.String, username: Schema.String, balanceCents: Schema.BigInt })

export class Dashboard extends Effect.Service<Dashboard>()("app/Dashboard", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const catalog = yield* Catalog
    const { businessTimeZone, jurisdiction } = yield* AppConfig
    const calendar = zonedCalendar(businessTimeZone)
    /** The zone the figures' days are in, as the responses name it. */
    const timezone = calendar.timeZone
    /** The instants the business days of [first, last] span: [start of first, start of the day after last). */
    const boundsOf = (first: string, last: string) => ({
      from: new Date(calendar.startOf(first)),
      to: new Date(calendar.startOf(addDays(last, 1)))
    })

    /** Unpaid (PENDING or PROCESSING) withdrawals against the payout deadline (docs/rules.md#payout-deadline). */
    const payoutDeadline = (now: number) =>
      singleOf(PayoutDeadlineRow, sql`
        SELECT count(*) FILTER (WHERE requested_at <= ${new Date(now - PAYOUT_AT_RISK_MINUTES * 60_000)})::int AS at_risk,
               count(*) FILTER (WHERE requested_at <= ${new Date(now - PAYOUT_CRITICAL_MINUTES * 60_000)})::int AS critical,
               floor(extract(epoch FROM (${new Date(now)}::timestamptz - min(requested_at))) / 60)::int AS oldest_minutes
        FROM withdrawals WHERE status IN ('PENDING', 'PROCESSING')`)

    const countBetween = (table: "case_openings" | "battles" | "upgrades" | "users", from: Date, to: Date) =>
      numberOf(sql`
        SELECT count(*) AS n FROM ${sql(table)} WHERE created_at >= ${from} AND created_at < ${to}`)

    const activeOn = (day: string) =>
      numberOf(sql`SELECT count(*) AS n FROM user_activity_days WHERE day = ${day}::date`)

    /**
     * `GET /admin/dashboard`: DashboardStats. topItems are over today's case openings (null when none).
     * The figures are independent reads: a few run at once (on PGlite's single connection they queue).
     */
    const stats = Effect.fn("Dashboard.stats")(function*() {
      const now = yield* Clock.currentTimeMillis
      const todayIs = calendar.dayOf(now)
      const { from, to } = boundsOf(todayIs, todayIs)
      const [
        total,
        activeToday,
        activeYesterday,
        newToday,
        todayFigures,
        depositsToday,
        withdrawalsToday,
        pendingWithdrawals,
        casesOpenedToday,
        battlesToday,
        upgradesToday,
        [mostDropped],
        [highestValue],
        [mostOpened]
      ] = yield* Effect.all([
        numberOf(sql`SELECT count(*) AS n FROM users`),
        activeOn(todayIs),
        activeOn(addDays(todayIs, -1)),
        countBetween("users", from, to),
        computeDays(todayIs, todayIs),
        numberOf(sql`
          SELECT COALESCE(sum(amount_cents), 0)::text AS n FROM deposits
          WHERE status = 'CONFIRMED' AND confirmed_at >= ${from} AND confirmed_at < ${to}`),
        numberOf(sql`
          SELECT COALESCE(sum(amount_cents), 0)::text AS n FROM withdrawals
          WHERE status = 'COMPLETED' AND processed_at >= ${from} AND processed_at < ${to}`),
        // PROCESSING (sent to the gateway, no answer yet: docs/rules.md#withdrawal-statuses) still waits to be settled.
        numberOf(sql`SELECT count(*) AS n FROM withdrawals WHERE status IN ('PENDING', 'PROCESSING')`),
        countBetween("case_openings", from, to),
        countBetween("battles", from, to),
        countBetween("upgrades", from, to),
        rowsOf(TopItemRow, sql`
          SELECT i.id::text AS id, i.name, i.rarity, i.value_cents::text AS value_cents, i.image_url, t.n AS count
          FROM (SELECT item_id, count(*)::int AS n FROM case_openings WHERE created_at >= ${from} AND created_at < ${to}
                GROUP BY item_id) t JOIN items i ON i.id = t.item_id
          ORDER BY t.n DESC, i.value_cents DESC, i.id LIMIT 1`),
        rowsOf(TopItemRow, sql`
          SELECT i.id::text AS id, i.name, i.rarity, i.value_cents::text AS value_cents, i.image_url, t.n AS count
          FROM (SELECT item_id, count(*)::int AS n FROM case_openings WHERE created_at >= ${from} AND created_at < ${to}
                GROUP BY item_id) t JOIN items i ON i.id = t.item_id
          ORDER BY i.value_cents DESC, i.id LIMIT 1`),
        rowsOf(TopCaseRow, sql`
          SELECT c.id::text AS id, c.name, c.slug, c.image_url, c.price_cents::text AS price_cents, t.n AS count
          FROM (SELECT case_id, count(*)::int AS n FROM case_openings WHERE created_at >= ${from} AND created_at < ${to}
                GROUP BY case_id) t JOIN cases c ON c.id = t.case_id
          ORDER BY t.n DESC, c.id LIMIT 1`)
      ], { concurrency: STATS_CONCURRENCY })
      const today = todayFigures[0] ?? quietDay(todayIs)
      const revenueToday = today.revenueCents
      const deadline = jurisdiction === "BR" ? yield* payoutDeadline(now) : undefined
      return {
        timezone,
        users: { total, activeToday, newToday, growth: percentChange(activeToday, activeYesterday) },
        financial: {
          revenueToday,
          profitToday: revenueToday - withdrawalsToday,
          depositsToday,
          withdrawalsToday,
          pendingWithdrawals,
          itemSalesToday: today.itemSalesCents,
          feesToday: today.feesCents,
          ...(deadline === undefined
            ? {}
            : { payoutsAtRisk: deadline.atRisk, oldestPendingPayoutMinutes: deadline.oldestMinutes })
        },
        games: {
          casesOpenedToday,
          battlesToday,
          upgradesToday,
          totalVolume: revenueToday,
          ggrToday: {
            total: ggrOf(today),
            openings: today.ggrOpeningsCents,
            upgrades: today.ggrUpgradesCents,
            battles: today.ggrBattlesCents,
            raffles: today.ggrRafflesCents
          }
        },
        topItems: { mostDropped: mostDropped ?? null, highestValue: highestValue ?? null, mostOpened: mostOpened ?? null }
      }
    })

    /**
     * The figures of the days of [first, last] (ISO dates) that have any, ascending. Each source is
     * summed by day on its own, then the parts are added up: no join multiplies rows, and the plan stays
     * small enough that PostgreSQL does not JIT-compile it (which costs more than the query).
     */
    const computeDays = (first: string, last: string) => {
      const { from, to } = boundsOf(first, last)
      const day = (column: string) => sql`(${sql(column)} AT TIME ZONE ${timezone})::date`
      const amounts = (types: ReadonlyArray<string>) => sql`sum(amount_cents) FILTER (WHERE type IN ${sql.in(types)})`
      return rowsOf(DayRow, sql`
        SELECT to_char(day, 'YYYY-MM-DD') AS day,
               COALESCE(sum(revenue), 0)::text AS revenue_cents,
               COALESCE(sum(deposits), 0)::text AS deposits_cents,
               COALESCE(sum(withdrawals), 0)::text AS withdrawals_cents,
               COALESCE(sum(ggr_openings), 0)::text AS ggr_openings_cents,
               COALESCE(sum(ggr_upgrades), 0)::text AS ggr_upgrades_cents,
               COALESCE(sum(ggr_battles), 0)::text AS ggr_battles_cents,
               COALESCE(sum(ggr_raffles), 0)::text AS ggr_raffles_cents,
               COALESCE(sum(item_sales), 0)::text AS item_sales_cents,
               COALESCE(sum(fees), 0)::text AS fees_cents
        FROM (
          -- The ledger: revenue, deposits and withdrawals (docs/rules.md#revenue-chart), battle and raffle stakes, sales.
          SELECT ${day("created_at")} AS day, -${amounts(REVENUE_TYPES)} AS revenue, ${amounts(["DEPOSIT"])} AS deposits,
                 -${amounts(["WITHDRAWAL"])} AS withdrawals, 0 AS ggr_openings, 0 AS ggr_upgrades,
                 -${amounts(["BATTLE_ENTRY", "BATTLE_REFUND"])} AS ggr_battles, -${amounts(["RAFFLE_TICKET"])} AS ggr_raffles,
                 ${amounts(["ITEM_SELL"])} AS item_sales, 0 AS fees
          FROM transactions
          WHERE type IN ${sql.in(DAY_TYPES)} AND created_at >= ${from} AND created_at < ${to}
          GROUP BY 1
          UNION ALL
          SELECT ${day("created_at")}, 0, 0, 0, sum(price_paid_cents - item_value_cents), 0, 0, 0, 0, 0
          FROM case_openings WHERE created_at >= ${from} AND created_at < ${to} GROUP BY 1
          UNION ALL
          -- Upgrades: the stake is revenue (docs/rules.md#revenue); GGR gives back the target when won.
          SELECT ${day("created_at")}, sum(from_value_cents), 0, 0, 0,
                 sum(from_value_cents - CASE WHEN success THEN to_value_cents ELSE 0 END), 0, 0, 0, 0
          FROM upgrades WHERE created_at >= ${from} AND created_at < ${to} GROUP BY 1
          UNION ALL
          SELECT ${day("created_at")}, 0, 0, 0, 0, 0, -sum(value_cents), 0, 0, 0
          FROM battle_settlements
          WHERE type <> 'REMOVED_TO_POOL' AND created_at >= ${from} AND created_at < ${to} GROUP BY 1
          UNION ALL
          SELECT ${day("closed_at")}, 0, 0, 0, 0, 0, 0, -sum(prize_value_cents), 0, 0
          FROM raffles WHERE status = 'DRAWN' AND closed_at >= ${from} AND closed_at < ${to} GROUP BY 1
          UNION ALL
          SELECT ${day("confirmed_at")}, 0, 0, 0, 0, 0, 0, 0, 0, sum(fee_cents)
          FROM deposits WHERE status = 'CONFIRMED' AND confirmed_at >= ${from} AND confirmed_at < ${to} GROUP BY 1
        ) parts
        GROUP BY day
        ORDER BY day`)
    }

    /**
     * One row per day of the `count` days from `first`, zeros included: settled days (over for an hour) from
     * the cache of this zone's days (filled as needed).
     */
    const days = Effect.fnUntraced(function*(first: string, count: number) {
      const now = yield* Clock.currentTimeMillis
      const all = Array.from({ length: count }, (_, i) => addDays(first, i))
      const settled = all.filter((day) => calendar.startOf(addDays(day, 1)) + SETTLED_AFTER_MS <= now)
      const found = new Map<string, DayRow>()
      if (settled.length > 0) {
        const cached = yield* rowsOf(DayRow, sql`
            SELECT to_char(day, 'YYYY-MM-DD') AS day, revenue_cents::text AS revenue_cents,
                   deposits_cents::text AS deposits_cents, withdrawals_cents::text AS withdrawals_cents,
                   ggr_openings_cents::text AS ggr_openings_cents, ggr_upgrades_cents::text AS ggr_upgrades_cents,
                   ggr_battles_cents::text AS ggr_battles_cents, ggr_raffles_cents::text AS ggr_raffles_cents,
                   item_sales_cents::text AS item_sales_cents, fees_cents::text AS fees_cents
            FROM dashboard_days
            WHERE time_zone = ${timezone} AND day >= ${settled[0]}::date AND day <= ${settled[settled.length - 1]}::date`)
        for (const row of cached) found.set(row.day, row)
        const missing = settled.filter((day) => !found.has(day))
        if (missing.length > 0) {
          const computed = new Map((yield* computeDays(missing[0]!, missing[missing.length - 1]!)).map((r) => [r.day, r]))
          const at = new Date(now)
          for (const day of missing) {
            const row = computed.get(day) ?? quietDay(day)
            yield* execute(sql`
                INSERT INTO dashboard_days (time_zone, day, revenue_cents, deposits_cents, withdrawals_cents, ggr_openings_cents,
                  ggr_upgrades_cents, ggr_battles_cents, ggr_raffles_cents, item_sales_cents, fees_cents, computed_at)
                VALUES (${timezone}, ${day}::date, ${row.revenueCents}, ${row.depositsCents}, ${row.withdrawalsCents},
                  ${row.ggrOpeningsCents}, ${row.ggrUpgradesCents}, ${row.ggrBattlesCents}, ${row.ggrRafflesCents},
                  ${row.itemSalesCents}, ${row.feesCents}, ${at})
                ON CONFLICT (time_zone, day) DO NOTHING`)
            found.set(day, row)
          }
        }
      }
      const live = all.filter((day) => !found.has(day))
      if (live.length > 0) {
        for (const row of yield* computeDays(live[0]!, live[live.length - 1]!)) found.set(row.day, row)
      }
      return all.map((day) => found.get(day) ?? quietDay(day))
    })

    /**
     * `GET /admin/dashboard/revenue-chart`: the period's days ending today, ascending
     * (docs/rules.md#revenue-chart).
     */
    const revenueChart = Effect.fn("Dashboard.revenueChart")(function*(period: ChartPeriod) {
      const count = CHART_PERIODS[period]
      const today = calendar.dayOf(yield* Clock.currentTimeMillis)
      const both = yield* days(addDays(today, -(2 * count - 1)), 2 * count)
      const previous = both.slice(0, count)
      const current = both.slice(count)
      const data = current.map((d) => ({
        date: d.day,
        revenue: d.revenueCents,
        profit: d.revenueCents - d.withdrawalsCents,
        deposits: d.depositsCents,
        withdrawals: d.withdrawalsCents,
        ggr: ggrOf(d),
        itemSales: d.itemSalesCents,
        fees: d.feesCents
      }))
      const totalRevenue = data.reduce((sum, d) => sum + d.revenue, 0)
      const previousRevenue = previous.reduce((sum, d) => sum + d.revenueCents, 0)
      return {
        timezone,
        data,
        summary: {
          totalRevenue,
          totalProfit: data.reduce((sum, d) => sum + d.profit, 0),
          avgDailyRevenue: dailyAverage(totalRevenue, count),
          growthRate: percentChange(totalRevenue, previousRevenue)
        }
      }
    })

    /**
     * `GET /admin/dashboard/recent-activity`: case openings, confirmed deposits, withdrawal requests,
     * upgrades and battles created, newest first (at one instant: by type, then the newer record first).
     * Ids are `<TYPE>:<record id>`.
     */
    const recentActivity = Effect.fn("Dashboard.recentActivity")(function*(limit: number) {
      // Each source is cut to `limit` on its (time, id) index before anything is joined to it.
      const rows = yield* rowsOf(ActivityRow, sql`
        (SELECT 'CASE_OPEN:' || o.id AS id, o.id AS record_id, 'CASE_OPEN' AS type, u.id::text AS user_id, u.username,
                'Opened ' || c.name AS description, o.price_paid_cents::text AS value, i.name AS item_name,
                i.rarity AS item_rarity, o.created_at
         FROM (SELECT * FROM case_openings ORDER BY created_at DESC, id DESC LIMIT ${limit}) o
         JOIN users u ON u.id = o.user_id JOIN cases c ON c.id = o.case_id JOIN items i ON i.id = o.item_id)
        UNION ALL
        (SELECT 'DEPOSIT:' || d.id, d.id, 'DEPOSIT', u.id::text, u.username, 'Deposit via ' || d.method, d.amount_cents::text,
                NULL, NULL, d.confirmed_at
         FROM (SELECT * FROM deposits WHERE status = 'CONFIRMED' ORDER BY confirmed_at DESC, id DESC LIMIT ${limit}) d
         JOIN users u ON u.id = d.user_id)
        UNION ALL
        (SELECT 'WITHDRAWAL_REQUEST:' || w.id, w.id, 'WITHDRAWAL_REQUEST', u.id::text, u.username,
                'Withdrawal request via ' || w.payment_method, w.amount_cents::text, NULL, NULL, w.requested_at
         FROM (SELECT * FROM withdrawals ORDER BY requested_at DESC, id DESC LIMIT ${limit}) w JOIN users u ON u.id = w.user_id)
        UNION ALL
        (SELECT 'UPGRADE:' || g.id, g.id, 'UPGRADE', u.id::text, u.username,
                CASE WHEN g.success THEN 'Upgraded ' ELSE 'Failed to upgrade ' END || f.name || ' to ' || t.name,
                g.from_value_cents::text, t.name, t.rarity, g.created_at
         FROM (SELECT * FROM upgrades ORDER BY created_at DESC, id DESC LIMIT ${limit}) g
         JOIN users u ON u.id = g.user_id JOIN items f ON f.id = g.from_item_id JOIN items t ON t.id = g.to_item_id)
        UNION ALL
        (SELECT 'BATTLE:' || b.id, b.id, 'BATTLE', u.id::text, u.username,
                'Created a ' || b.mode || ' battle for ' || b.max_players || ' players', b.entry_price_cents::text, NULL, NULL,
                b.created_at
         FROM (SELECT * FROM battles ORDER BY created_at DESC, id DESC LIMIT ${limit}) b JOIN users u ON u.id = b.creator_id)
        ORDER BY created_at DESC, type, record_id DESC
        LIMIT ${limit}`)
      return {
        activities: rows.map((row) => ({
          id: row.id,
          type: row.type,
          user: { id: row.userId, username: row.username },
          description: row.description,
          value: row.value,
          ...(row.itemName === null || row.itemRarity === null ? {} : { item: { name: row.itemName, rarity: row.itemRarity } }),
          createdAt: row.createdAt
        }))
      }
    })

    /** `GET /admin/dashboard/alerts` (docs/rules.md#dashboard-alerts). */
    const alerts = Effect.fn("Dashboard.alerts")(function*() {
      const now = yield* Clock.currentTimeMillis
      const from = new Date(calendar.startOf(calendar.dayOf(now)))
      const staleWithdrawals = yield* numberOf(sql`
        SELECT count(*) AS n FROM withdrawals
        WHERE status IN ('PENDING', 'PROCESSING') AND requested_at < ${new Date(now - DAY_MS)}`)
      const deposits = yield* singleOf(DepositCountsRow, sql`
        SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'FAILED')::int AS failed
        FROM deposits WHERE created_at >= ${from}`)
      const suspicious = yield* numberOf(sql`
        SELECT count(*) AS n FROM audit_logs WHERE action = 'SUSPICIOUS_IP_CHANGE' AND created_at >= ${from}`)
      const excludedBalances = yield* rowsOf(ExcludedBalanceRow, sql`
        SELECT u.id::text AS user_id, u.username, u.balance_cents
        FROM responsible_gaming r JOIN users u ON u.id = r.user_id
        WHERE r.registry_listed AND u.balance_cents > 0
          AND NOT EXISTS (SELECT 1 FROM withdrawals w WHERE w.user_id = u.id AND w.status IN ('PENDING', 'PROCESSING'))
        ORDER BY u.id`)
      const alerts: Array<Alert> = []
      if (staleWithdrawals > 0) {
        alerts.push({
          id: "withdrawals-pending-24h",
          level: "CRITICAL",
          title: "Withdrawals waiting for more than 24 hours",
          message: `${staleWithdrawals} pending withdrawal${staleWithdrawals === 1 ? "" : "s"} requested more than 24 hours ago`
        })
      }
      // docs/rules.md#house-edge-rule: an active case that pays back more than its house edge allows loses
      // money on every opening.
      for (const kase of yield* catalog.casesOverHouseEdge()) {
        alerts.push({
          id: `case-over-house-edge:${kase.id}`,
          level: "CRITICAL",
          title: "Case pays back more than its house edge allows",
          message: `${kase.name} (case ${kase.id}, ${kase.slug}) pays back ${kase.economics.rtp} of its price: ` +
            `${kase.economics.expectedValueCents} cents per opening of ${kase.priceCents} on average, where its house edge ` +
            `${kase.houseEdge} allows ${kase.economics.maxExpectedValueExact}. Take it out of play, change its items or ` +
            `price, or mark it promotional.`
        })
      }
      const { failed, total } = deposits
      if (total > 0 && failed * 5 > total) {
        alerts.push({
          id: "deposits-failing",
          level: "WARNING",
          title: "Many deposits are failing",
          message: `${failed} of ${total} deposits today failed (${Math.round((failed / total) * 10_000) / 100}%)`
        })
      }
      if (jurisdiction === "BR") {
        const { atRisk, critical, oldestMinutes } = yield* payoutDeadline(now)
        if (atRisk > 0) {
          alerts.push({
            id: "payout-deadline",
            level: critical > 0 ? "CRITICAL" : "WARNING",
            title: "Withdrawals near their 120-minute payout deadline",
            message: `${atRisk} withdrawal${atRisk === 1 ? "" : "s"} unpaid for more than ${PAYOUT_AT_RISK_MINUTES} minutes` +
              (critical > 0 ? `, ${critical} for more than ${PAYOUT_CRITICAL_MINUTES}` : "") +
              `; the oldest was requested ${oldestMinutes} minutes ago. Approve or reject them now.`
          })
        }
      }
      // docs/rules.md#excluded-players-balance: the operator must return an excluded player's money.
      for (const player of excludedBalances) {
        alerts.push({
          id: `excluded-balance:${player.userId}`,
          level: "WARNING",
          title: "Excluded player's balance to pay out",
          message: `User ${player.userId} (${player.username}) is listed in the centralized self-exclusion registry and ` +
            `still holds ${formatBrl(player.balanceCents)} (${player.balanceCents} cents) with no withdrawal under way. ` +
            `Pay the balance out to the player's own account (a PIX key in the player's name), then adjust the ` +
            `balance to 0.`
        })
      }
      if (suspicious > 10) {
        alerts.push({
          id: "suspicious-ip-changes",
          level: "WARNING",
          title: "Suspicious IP changes",
          message: `${suspicious} sessions changed region today`
        })
      }
      return { alerts }
    })

    /**
     * Fills the cache with every settled day the longest chart and its comparison period can ask for,
     * so no request pays for computing them. Run at start and every hour by DashboardCacheJob.
     */
    const warmCache = Effect.fn("Dashboard.warmCache")(function*() {
      const longest = Math.max(...Object.values(CHART_PERIODS))
      const today = calendar.dayOf(yield* Clock.currentTimeMillis)
      yield* days(addDays(today, -(2 * longest - 1)), 2 * longest)
    })

    return { stats, revenueChart, recentActivity, alerts, warmCache } as const
  }),
  dependencies: [Catalog.Default]
}) {}
