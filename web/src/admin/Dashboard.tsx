import { useEffect, useRef, useState } from "preact/hooks"
import uPlot from "uplot"
import "uplot/dist/uPlot.min.css"
import { api } from "../api"
import { formatCents, formatDateTime, formatPercent } from "../money"
import { Show } from "../ui"
import { useLoad } from "../useLoad"
import "./dashboard.css"
import { activityTypeText, activityValueText, axisDay, axisMoney, dayInZone, legendDay } from "./figures"
import { UserLink } from "./nav"

interface Stats {
  /** BUSINESS_TIMEZONE: the zone whose calendar days "today" and "yesterday" are (docs/rules.md#business-timezone). */
  readonly timezone: string
  readonly users: { total: number; activeToday: number; newToday: number; growth: number }
  readonly financial: {
    revenueToday: number
    profitToday: number
    depositsToday: number
    withdrawalsToday: number
    pendingWithdrawals: number
    itemSalesToday: number
    feesToday: number
  }
  readonly games: {
    casesOpenedToday: number
    battlesToday: number
    upgradesToday: number
    totalVolume: number
    ggrToday: { total: number; openings: number; upgrades: number; battles: number; raffles: number }
  }
}

/**
 * Whether yesterday certainly had no active users, so "Active vs yesterday" has no base. The API answers growth 0
 * both for "as many as yesterday" and for "none yesterday" (docs/rules.md#dashboard-stats); it is the latter when
 * nobody is active today either (otherwise it would be -100 %) or when every account was created today.
 */
const noneActiveYesterday = (s: Stats): boolean =>
  s.users.growth === 0 && (s.users.activeToday === 0 || s.users.total === s.users.newToday)

/** Every account was created today: no period before today had any activity. */
const everyoneNewToday = (s: Stats): boolean => s.users.total === s.users.newToday

type Kind = "count" | "money" | "percent"

interface Card {
  /** The field's path in `GET /api/admin/dashboard` (the value's test id is `stat-<id>`). */
  readonly id: string
  readonly label: string
  /** What it counts, in a few words, shown under the value. */
  readonly hint: string
  /** The same at length (the card's tooltip). */
  readonly title: string
  readonly kind: Kind
  readonly value: number
  /** Shown instead of the value when it has no meaning (a percentage without a base). */
  readonly notApplicable?: string
}

/** The cards, each with what it counts (docs/rules.md#dashboard-stats). */
const cards = (s: Stats): ReadonlyArray<Card> => {
  const g = s.games.ggrToday
  return [
    {
      id: "users.total",
      label: "Users",
      hint: "all accounts, administrators included",
      title: "Every account there is, players and administrators, banned or not.",
      kind: "count",
      value: s.users.total
    },
    {
      id: "users.activeToday",
      label: "Active today",
      hint: "signed-in users seen today",
      title: "Distinct users who made at least one signed-in request today.",
      kind: "count",
      value: s.users.activeToday
    },
    {
      id: "users.newToday",
      label: "New today",
      hint: "accounts created today",
      title: "Accounts created today.",
      kind: "count",
      value: s.users.newToday
    },
    {
      id: "users.growth",
      label: "Active vs yesterday",
      hint: s.users.growth === 0 && !noneActiveYesterday(s)
        ? "change in active users; 0 % also if none yesterday"
        : "change in active users since yesterday",
      title: "Active users today against active users yesterday, in percent. With nobody active yesterday there is " +
        "no base: n/a. The API answers 0 % both for no change and for nobody yesterday; the console shows n/a when " +
        "it can tell (nobody active today, or every account created today).",
      kind: "percent",
      value: s.users.growth,
      ...(noneActiveYesterday(s) ? { notApplicable: "nobody was active yesterday: no base for a percentage" } : {})
    },
    {
      id: "financial.revenueToday",
      label: "Revenue today",
      hint: "openings + battle entries − refunds + upgrade stakes",
      title: "What players paid to play today: case openings and battle entries, less battle refunds, plus the " +
        "value of the items staked in upgrades.",
      kind: "money",
      value: s.financial.revenueToday
    },
    {
      id: "financial.profitToday",
      label: "Profit today",
      hint: "revenue − completed withdrawals (SPEC)",
      title: "Revenue today less the withdrawals completed (paid) today, as SPEC defines it. The chart's profit " +
        "subtracts withdrawal requests instead.",
      kind: "money",
      value: s.financial.profitToday
    },
    {
      id: "financial.depositsToday",
      label: "Deposits today",
      hint: "confirmed today",
      title: "Deposits confirmed today (by the time of confirmation), without their fees.",
      kind: "money",
      value: s.financial.depositsToday
    },
    {
      id: "financial.withdrawalsToday",
      label: "Withdrawals today",
      hint: "completed (paid) today (SPEC)",
      title: "Withdrawals completed today, by the time they were paid, as SPEC defines it. The chart's withdrawals " +
        "are the amounts debited when players request them instead.",
      kind: "money",
      value: s.financial.withdrawalsToday
    },
    {
      id: "financial.pendingWithdrawals",
      label: "Pending withdrawals",
      hint: "waiting now: PENDING or PROCESSING",
      title: "How many withdrawals wait to be settled now: PENDING (to approve) and PROCESSING (sent, no answer yet).",
      kind: "count",
      value: s.financial.pendingWithdrawals
    },
    {
      id: "financial.itemSalesToday",
      label: "Item sales today",
      hint: "paid to players for items sold back",
      title: "What players were credited today for items they sold back.",
      kind: "money",
      value: s.financial.itemSalesToday
    },
    {
      id: "financial.feesToday",
      label: "Deposit fees today",
      hint: "fees on deposits confirmed today",
      title: "Fees paid on top of the deposits confirmed today; never credited to anyone.",
      kind: "money",
      value: s.financial.feesToday
    },
    {
      id: "games.casesOpenedToday",
      label: "Cases opened today",
      hint: "case openings",
      title: "Cases opened today.",
      kind: "count",
      value: s.games.casesOpenedToday
    },
    {
      id: "games.battlesToday",
      label: "Battles today",
      hint: "battles created today",
      title: "Battles created today, whatever became of them.",
      kind: "count",
      value: s.games.battlesToday
    },
    {
      id: "games.upgradesToday",
      label: "Upgrades today",
      hint: "upgrades played today",
      title: "Upgrades played today.",
      kind: "count",
      value: s.games.upgradesToday
    },
    {
      id: "games.totalVolume",
      label: "Volume today",
      hint: "all stakes today (= revenue)",
      title: "Everything staked today: the same figure as revenue today.",
      kind: "money",
      value: s.games.totalVolume
    },
    {
      id: "games.ggrToday.total",
      label: "GGR today",
      hint: "stakes − value awarded, all games",
      title: `Gross gaming revenue: what players staked today less the value of what they were awarded. Openings ` +
        `${formatCents(g.openings)}, upgrades ${formatCents(g.upgrades)}, battles ${formatCents(g.battles)}, ` +
        `raffles ${formatCents(g.raffles)}.`,
      kind: "money",
      value: s.games.ggrToday.total
    }
  ]
}

const formatStat = (kind: Kind, value: number): string =>
  kind === "money" ? formatCents(value) : kind === "percent" ? formatPercent(value / 100) : value.toLocaleString("pt-BR")

/** "Days in America/Sao_Paulo": the zone whose days the figures and the chart are of. */
const Zone = ({ zone }: { zone: string }) => {
  const today = dayInZone(zone, Date.now())
  return (
    <p class="zone" data-testid="business-timezone" data-zone={zone}>
      Days in <strong>{zone}</strong>
      {today === undefined ? null : <> · today is {today} there, from midnight to midnight</>}
      <small> (BUSINESS_TIMEZONE)</small>
    </p>
  )
}

export const Dashboard = () => {
  const [stats] = useLoad(() => api<Stats>("/admin/dashboard"), [])
  return (
    <>
      <h1>Dashboard</h1>
      <Show loaded={stats}>
        {(s) => (
          <>
            <Zone zone={s.timezone} />
            <div class="cards stats" data-testid="stats">
              {cards(s).map((c) => (
                <article key={c.id} title={c.title} data-testid={`card-${c.id}`}>
                  <div class="label">{c.label}</div>
                  <div class="value" data-testid={`stat-${c.id}`} title={c.notApplicable}>
                    {c.notApplicable === undefined ? formatStat(c.kind, c.value) : "n/a"}
                  </div>
                  <small class="hint" data-testid={`hint-${c.id}`}>{c.hint}</small>
                </article>
              ))}
            </div>
            <p class="hint" data-testid="withdrawals-note">
              The withdrawals and profit above follow SPEC: withdrawals completed (paid) today. The chart below counts
              withdrawal requests (the amounts debited when players ask), so its profit is revenue less those requests.
            </p>
          </>
        )}
      </Show>
      <RevenueChart everyoneNewToday={stats.state === "ready" && everyoneNewToday(stats.value)} />
      <div class="grid">
        <Alerts />
        <LiveDrops />
      </div>
      <RecentActivity />
    </>
  )
}

type Period = "7d" | "30d" | "90d"

const DAYS: Record<Period, number> = { "7d": 7, "30d": 30, "90d": 90 }

interface Chart {
  readonly timezone: string
  readonly data: ReadonlyArray<{ date: string; revenue: number; profit: number; deposits: number; withdrawals: number }>
  readonly summary: { totalRevenue: number; totalProfit: number; avgDailyRevenue: number; growthRate: number }
}

/** A chart with the revenue of the period before it, when the console could learn it (below). */
interface ChartWithBase extends Chart {
  readonly previousRevenue: number | undefined
}

/**
 * The revenue of the days before the chart's period, when its growth is 0 (the API answers 0 both for "as much as
 * before" and for "nothing before": docs/rules.md#revenue-chart): the sum of those days in the next longer chart
 * (30 days for 7, 90 for 30). Undefined for 90 days, or when the two answers are not of the same today.
 */
const revenueBefore = async (chart: Chart, period: Period): Promise<number | undefined> => {
  const longer = period === "7d" ? "30d" : period === "30d" ? "90d" : undefined
  if (longer === undefined) return undefined
  const wide = await api<Chart>(`/admin/dashboard/revenue-chart?period=${longer}`)
  const days = DAYS[period]
  if (wide.data.length < 2 * days || wide.data.at(-1)?.date !== chart.data.at(-1)?.date) return undefined
  return wide.data.slice(-2 * days, -days).reduce((sum, d) => sum + d.revenue, 0)
}

/**
 * Whether the period before the chart's certainly had no revenue, so the growth has no base: nothing before by the
 * longer chart, or no revenue in this period either (otherwise the growth would be -100 %), or every account was
 * created today.
 */
const noRevenueBefore = (c: ChartWithBase, everyoneNewToday: boolean): boolean =>
  c.summary.growthRate === 0 && (c.previousRevenue === 0 || c.summary.totalRevenue === 0 || everyoneNewToday)

const growthTitle = (c: ChartWithBase, days: number, noBase: boolean): string =>
  `Revenue of these ${days} days against the ${days} days before them; n/a when there was no revenue before.` +
  (c.summary.growthRate === 0 && !noBase && c.previousRevenue === undefined
    ? " The API answers 0 % also then, and the console cannot tell which here."
    : "")

const RevenueChart = ({ everyoneNewToday }: { everyoneNewToday: boolean }) => {
  const [period, setPeriod] = useState<Period>("7d")
  const [chart] = useLoad(async (): Promise<ChartWithBase> => {
    const c = await api<Chart>(`/admin/dashboard/revenue-chart?period=${period}`)
    const previousRevenue = c.summary.growthRate === 0 ? await revenueBefore(c, period).catch(() => undefined) : undefined
    return { ...c, previousRevenue }
  }, [period])
  return (
    <section>
      <div class="toolbar">
        <h2>Revenue</h2>
        <div role="group" aria-label="Period">
          {(["7d", "30d", "90d"] as const).map((p) => (
            <button
              key={p}
              class={p === period ? "" : "outline"}
              aria-pressed={p === period}
              onClick={() => setPeriod(p)}
            >
              {p}
            </button>
          ))}
        </div>
      </div>
      <Show loaded={chart}>
        {(c) => {
          const noBase = noRevenueBefore(c, everyoneNewToday)
          return (
            <>
              <p data-testid="chart-summary" data-points={c.data.length}>
                <span data-testid="chart-timezone">{c.data.length} days in {c.timezone}</span> · revenue{" "}
                {formatCents(c.summary.totalRevenue)} · profit after withdrawal requests{" "}
                {formatCents(c.summary.totalProfit)} · daily average {formatCents(c.summary.avgDailyRevenue)} ·{" "}
                <span title={growthTitle(c, DAYS[period], noBase)}>
                  growth vs the {DAYS[period]} days before{" "}
                  <span data-testid="chart-growth" title={noBase ? "no revenue in the days before: no base" : undefined}>
                    {noBase ? "n/a" : formatPercent(c.summary.growthRate / 100)}
                  </span>
                </span>
              </p>
              <Plot chart={c} />
              <ul class="series-notes" data-testid="series-notes">
                {SERIES.map((s) => (
                  <li key={s.key} data-series={s.key}>
                    <span class="swatch" data-color={s.key} /> <strong>{s.label}</strong>: {s.counts}
                  </li>
                ))}
              </ul>
            </>
          )
        }}
      </Show>
    </section>
  )
}

/** The chart's series, each with what it counts (docs/rules.md#revenue-chart). */
const SERIES = [
  {
    key: "revenue",
    label: "Revenue",
    stroke: "#1d70b8",
    counts: "case openings and battle entries less refunds, plus upgrade stakes, as the tile"
  },
  {
    key: "profit",
    label: "Profit after requests",
    stroke: "#2e7d32",
    counts: "revenue less the day's withdrawal requests (not completed withdrawals, unlike the tile)"
  },
  {
    key: "deposits",
    label: "Deposits",
    stroke: "#8e44ad",
    counts: "deposits credited to players that day"
  },
  {
    key: "withdrawals",
    label: "Withdrawal requests",
    stroke: "#d35400",
    counts: "amounts debited when players requested a withdrawal that day, whatever became of it (the tile counts " +
      "completed ones)"
  }
] as const

const Plot = ({ chart }: { chart: Chart }) => {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const element = box.current!
    // Each day at midnight UTC, and every date read in UTC: the point shows the API's date as it is.
    const data: uPlot.AlignedData = [
      chart.data.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000),
      ...SERIES.map((s) => chart.data.map((d) => d[s.key] / 100))
    ]
    const plot = new uPlot({
      width: element.clientWidth,
      height: 260,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      series: [
        { label: "Day", value: (_: uPlot, v: number | null) => (v === null ? "–" : legendDay(v)) },
        ...SERIES.map((s) => ({
          label: s.label,
          stroke: s.stroke,
          width: 2,
          value: (_: uPlot, v: number | null) => (v === null ? "–" : formatCents(Math.round(v * 100)))
        }))
      ],
      axes: [
        {
          // Whole days only: one point a day.
          incrs: [1, 2, 3, 7, 14, 28].map((days) => days * 86_400),
          values: (_: uPlot, ticks: Array<number>) => {
            const labels = ticks.map(axisDay)
            // The canvas has no text to read: the labels drawn are kept on the element too.
            element.dataset.xTicks = labels.join("|")
            return labels
          }
        },
        {
          size: 80,
          values: (_: uPlot, ticks: Array<number>) => {
            const labels = ticks.map(axisMoney)
            element.dataset.yTicks = labels.join("|")
            return labels
          }
        }
      ]
    }, data, element)
    const resize = new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height: 260 }))
    resize.observe(element)
    return () => {
      resize.disconnect()
      plot.destroy()
    }
  }, [chart])
  return <div class="chart" ref={box} data-testid="chart" />
}

interface Alert {
  readonly id: string
  readonly level: "CRITICAL" | "WARNING" | "INFO"
  readonly title: string
  readonly message: string
}

const Alerts = () => {
  const [alerts] = useLoad(() => api<{ alerts: ReadonlyArray<Alert> }>("/admin/dashboard/alerts"), [])
  return (
    <section>
      <h2>Alerts</h2>
      <Show loaded={alerts}>
        {({ alerts }) =>
          alerts.length === 0 ? <p>No alerts.</p> : alerts.map((a) => (
            <article key={a.id} class={`alert-${a.level}`}>
              <strong>{a.title}</strong>
              <p>{a.message}</p>
            </article>
          ))}
      </Show>
    </section>
  )
}

interface Drop {
  readonly id: string
  readonly user: { username: string }
  readonly item: { name: string; rarity: string; valueCents: number | string }
  readonly source: string
  readonly caseName: string | null
  readonly createdAt: string
}

/** The newest drops, then each new one as the stream sends it. */
const LiveDrops = () => {
  const [drops, setDrops] = useState<ReadonlyArray<Drop>>([])
  const [live, setLive] = useState(false)
  useEffect(() => {
    let closed = false
    api<{ drops: ReadonlyArray<Drop> }>("/live-drops/recent?limit=10").then(
      (r) => !closed && setDrops((now) => [...now, ...r.drops].slice(0, 10)),
      () => undefined
    )
    const source = new EventSource("/api/live-drops/stream")
    source.onopen = () => setLive(true)
    source.onerror = () => setLive(false)
    source.addEventListener("drop", (event) => {
      const drop = JSON.parse((event as MessageEvent<string>).data) as Drop
      setDrops((now) => [drop, ...now.filter((d) => d.id !== drop.id)].slice(0, 10))
    })
    return () => {
      closed = true
      source.close()
    }
  }, [])
  return (
    <section>
      <h2>
        Live drops <small data-testid="live-state">{live ? "● live" : "○ connecting"}</small>
      </h2>
      <div class="drops" data-testid="live-drops">
        {drops.length === 0 ? <p>No drops yet.</p> : (
          <table>
            <tbody>
              {drops.map((d) => (
                <tr key={d.id}>
                  <td>{d.user.username}</td>
                  <td>{d.item.name} <small>{d.item.rarity}</small></td>
                  <td class="money">{formatCents(d.item.valueCents)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </section>
  )
}

interface Activity {
  readonly id: string
  readonly type: string
  readonly user: { id: string; username: string }
  readonly description: string
  readonly value: number
  readonly createdAt: string
}

const RecentActivity = () => {
  const [activity] = useLoad(
    () => api<{ activities: ReadonlyArray<Activity> }>("/admin/dashboard/recent-activity?limit=20"),
    []
  )
  return (
    <section>
      <h2>Recent activity</h2>
      <p class="hint">
        The 20 newest case openings, confirmed deposits, withdrawal requests, upgrades and battles created.
      </p>
      <Show loaded={activity}>
        {({ activities }) =>
          activities.length === 0 ? <p>Nothing yet.</p> : (
            <div class="overflow-auto">
              <table class="activity" data-testid="activity">
                <thead>
                  <tr>
                    <th title="In this browser's time zone">When</th>
                    <th>Type</th>
                    <th>User</th>
                    <th>What</th>
                    <th
                      class="money"
                      title="Case opened: price paid · deposit: amount · withdrawal: amount requested · upgrade: value of the item staked · battle: entry price"
                    >
                      Value
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {activities.map((a) => (
                    <tr key={a.id} data-id={a.id}>
                      <td data-label="When">{formatDateTime(a.createdAt)}</td>
                      <td data-label="Type" data-testid="activity-type" data-type={a.type} title={a.type}>
                        {activityTypeText(a.type)}
                      </td>
                      <td data-label="User">
                        <UserLink user={a.user} />
                      </td>
                      <td data-label="What">{a.description}</td>
                      <td class="money" data-label="Value" title={activityValueText(a.type)}>{formatCents(a.value)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
      </Show>
    </section>
  )
}
