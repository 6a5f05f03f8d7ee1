/** The administration dashboard (docs/rules.md#administration-and-dashboard). Amounts are integer cents. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Alert, BusinessTimeZone, ChartPeriod } from "../../schema/admin/Dashboard"
import { Rarity } from "../../schema/games/Catalog"
import { AdminAuthentication } from "../identity/Authentication"
import { documented } from "../platform/OpenApiDocs"

const TopItem = Schema.NullOr(Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  rarity: Rarity,
  valueCents: Schema.Number,
  imageUrl: Schema.String,
  /** Times dropped today. */
  count: Schema.Int
}))

const DashboardStats = Schema.Struct({
  timezone: BusinessTimeZone,
  users: Schema.Struct({ total: Schema.Int, activeToday: Schema.Int, newToday: Schema.Int, growth: Schema.Number }),
  financial: Schema.Struct({
    revenueToday: Schema.Number,
    profitToday: Schema.Number,
    depositsToday: Schema.Number,
    withdrawalsToday: Schema.Number,
    pendingWithdrawals: Schema.Int,
    /** ITEM_SELL credits: what players were paid for items they sold back (docs/rules.md#dashboard-stats). */
    itemSalesToday: Schema.Number,
    /** Fees paid on top of today's confirmed deposits (docs/rules.md#deposit-fees); never credited to anyone. */
    feesToday: Schema.Number,
    /** JURISDICTION=BR only: PENDING or PROCESSING withdrawals requested more than 60 minutes ago (docs/rules.md#payout-deadline). */
    payoutsAtRisk: Schema.optional(Schema.Int),
    /** JURISDICTION=BR only: minutes since the oldest PENDING or PROCESSING withdrawal was requested; null when none. */
    oldestPendingPayoutMinutes: Schema.optional(Schema.NullOr(Schema.Int))
  }),
  games: Schema.Struct({
    casesOpenedToday: Schema.Int,
    battlesToday: Schema.Int,
    upgradesToday: Schema.Int,
    totalVolume: Schema.Number,
    /**
     * Gross gaming revenue (docs/rules.md#gross-gaming-revenue): stakes minus the value awarded, per game and
     * in total.
     */
    ggrToday: Schema.Struct({
      total: Schema.Number,
      openings: Schema.Number,
      upgrades: Schema.Number,
      battles: Schema.Number,
      raffles: Schema.Number
    })
  }),
  topItems: Schema.Struct({
    mostDropped: TopItem,
    highestValue: TopItem,
    mostOpened: Schema.NullOr(Schema.Struct({
      id: Schema.String,
      name: Schema.String,
      slug: Schema.String,
      imageUrl: Schema.String,
      priceCents: Schema.Number,
      /** Times opened today. */
      count: Schema.Int
    }))
  })
})

const RevenueChart = Schema.Struct({
  timezone: BusinessTimeZone,
  data: Schema.Array(Schema.Struct({
    /** The day, `YYYY-MM-DD`, in `timezone`. */
    date: Schema.String,
    revenue: Schema.Number,
    profit: Schema.Number,
    deposits: Schema.Number,
    withdrawals: Schema.Number,
    /** Gross gaming revenue of every game (docs/rules.md#gross-gaming-revenue). */
    ggr: Schema.Number,
    /** ITEM_SELL credits. */
    itemSales: Schema.Number,
    /** Fees paid on top of the day's confirmed deposits. */
    fees: Schema.Number
  })),
  summary: Schema.Struct({
    totalRevenue: Schema.Number,
    totalProfit: Schema.Number,
    avgDailyRevenue: Schema.Number,
    growthRate: Schema.Number
  })
})

const RecentActivity = Schema.Struct({
  activities: Schema.Array(Schema.Struct({
    id: Schema.String,
    type: Schema.String,
    user: Schema.Struct({ id: Schema.String, username: Schema.String }),
    description: Schema.String,
    value: Schema.Number,
    item: Schema.optional(Schema.Struct({ name: Schema.String, rarity: Rarity })),
    createdAt: Schema.Date
  }))
})

const Alerts = Schema.Struct({ alerts: Schema.Array(Alert) })

const Limit = Schema.optionalWith(
  Schema.NumberFromString.pipe(
    Schema.int({ message: () => "must be an integer" }),
    Schema.between(1, 100, { message: () => "must be between 1 and 100" })
  ),
  { default: () => 20 }
)

export class AdminDashboardApi extends HttpApiGroup.make("adminDashboard")
  .annotate(
    OpenApi.Description,
    "The administration dashboard: today's figures, the revenue chart, recent activity and alerts. ADMIN sessions " +
      "only."
  )
  .add(
    HttpApiEndpoint.get("stats", "/admin/dashboard").addSuccess(DashboardStats)
      .pipe(documented("Today's figures (admin)", "Today's figures: today is the calendar day in BUSINESS_TIMEZONE " +
        "(UTC by default), named by timezone. growth: active users today against " +
        "yesterday in percent, 2 decimals, 0 without yesterday. topItems are over today's case openings, null when " +
        "there were none. ggrToday: per game, what players staked minus the value of what they were awarded " +
        "(docs/economics.md)."))
  )
  .add(
    HttpApiEndpoint.get("revenueChart", "/admin/dashboard/revenue-chart")
      .setUrlParams(Schema.Struct({ period: ChartPeriod }).annotations({ parseOptions: { errors: "all" } }))
      .addSuccess(RevenueChart)
      .pipe(documented("Revenue chart (admin)", "One point per day of the period ending today, ascending; days are " +
        "calendar days in BUSINESS_TIMEZONE (UTC by default), named by timezone. " +
        "growthRate: the period's revenue against the preceding period of the same length, in percent (0 when that " +
        "was 0)."))
  )
  .add(
    HttpApiEndpoint.get("recentActivity", "/admin/dashboard/recent-activity")
      .setUrlParams(Schema.Struct({ limit: Limit }).annotations({ parseOptions: { errors: "all" } }))
      .addSuccess(RecentActivity)
      .pipe(documented("Recent activity (admin)", "CASE_OPEN, DEPOSIT, WITHDRAWAL_REQUEST, UPGRADE and BATTLE, " +
        "newest first."))
  )
  .add(
    HttpApiEndpoint.get("alerts", "/admin/dashboard/alerts").addSuccess(Alerts)
      .pipe(documented("Alerts (admin)", "Conditions an operator should look at, by level: withdrawals waiting for " +
        "more than 24 hours, cases paying back more than their house edge allows, failing deposits, suspicious IP " +
        "changes."))
  )
  .middleware(AdminAuthentication)
{}
