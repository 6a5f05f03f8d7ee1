import { useEffect, useRef, useState } from "preact/hooks"
import uPlot from "uplot"
import "uplot/dist/uPlot.min.css"
import { api } from "../api"
import { locale, numberFormat } from "../i18n"
import { formatCents, formatDateTime, formatPercent } from "../money"
import { Show } from "../ui"
import { useLoad } from "../useLoad"
import "./dashboard.css"
import { activityTypeText, activityValueText, axisDay, axisMoney, dayInZone, legendDay } from "./figures"
import { UserLink } from "./nav"
import { dashboard } from "./text/dashboard"

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

type CardId = keyof ReturnType<typeof dashboard>["cards"]

interface Card {
  /** The field's path in `GET /api/admin/dashboard` (the value's test id is `stat-<id>`). */
  readonly id: CardId
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

/** The cards, in this order, each with its kind and value; their words are in text/dashboard.ts. */
const FIGURES: ReadonlyArray<readonly [CardId, Kind, (s: Stats) => number]> = [
  ["users.total", "count", (s) => s.users.total],
  ["users.activeToday", "count", (s) => s.users.activeToday],
  ["users.newToday", "count", (s) => s.users.newToday],
  ["users.growth", "percent", (s) => s.users.growth],
  ["financial.revenueToday", "money", (s) => s.financial.revenueToday],
  ["financial.profitToday", "money", (s) => s.financial.profitToday],
  ["financial.depositsToday", "money", (s) => s.financial.depositsToday],
  ["financial.withdrawalsToday", "money", (s) => s.financial.withdrawalsToday],
  ["financial.pendingWithdrawals", "count", (s) => s.financial.pendingWithdrawals],
  ["financial.itemSalesToday", "money", (s) => s.financial.itemSalesToday],
  ["financial.feesToday", "money", (s) => s.financial.feesToday],
  ["games.casesOpenedToday", "count", (s) => s.games.casesOpenedToday],
  ["games.battlesToday", "count", (s) => s.games.battlesToday],
  ["games.upgradesToday", "count", (s) => s.games.upgradesToday],
  ["games.totalVolume", "money", (s) => s.games.totalVolume],
  ["games.ggrToday.total", "money", (s) => s.games.ggrToday.total]
]

/** The cards, each with what it counts (docs/rules.md#dashboard-stats). */
const cards = (s: Stats): ReadonlyArray<Card> => {
  const m = dashboard()
  const g = s.games.ggrToday
  return FIGURES.map(([id, kind, value]): Card => {
    const words = m.cards[id]
    if (id === "users.growth") {
      return {
        id,
        ...words,
        hint: s.users.growth === 0 && !noneActiveYesterday(s) ? m.growthZeroHint : words.hint,
        kind,
        value: value(s),
        ...(noneActiveYesterday(s) ? { notApplicable: m.growthNoBase } : {})
      }
    }
    const title = id === "games.ggrToday.total"
      ? words.title + m.ggrParts(formatCents(g.openings), formatCents(g.upgrades), formatCents(g.battles), formatCents(g.raffles))
      : words.title
    return { id, ...words, title, kind, value: value(s) }
  })
}

const formatStat = (kind: Kind, value: number): string =>
  kind === "money" ? formatCents(value) : kind === "percent" ? formatPercent(value / 100) : numberFormat().format(value)

/** "Days in America/Sao_Paulo": the zone whose days the figures and the chart are of. */
const Zone = ({ zone }: { zone: string }) => {
  const today = dayInZone(zone, Date.now())
  const m = dashboard().zone
  return (
    <p class="zone" data-testid="business-timezone" data-zone={zone}>
      {m.daysIn} <strong>{zone}</strong>
      {today === undefined ? null : m.today(today)}
      <small> (BUSINESS_TIMEZONE)</small>
    </p>
  )
}

export const Dashboard = () => {
  const [stats] = useLoad(() => api<Stats>("/admin/dashboard"), [])
  const m = dashboard()
  return (
    <>
      <h1>{m.title}</h1>
      <Show loaded={stats}>
        {(s) => (
          <>
            <Zone zone={s.timezone} />
            <div class="cards stats" data-testid="stats">
              {cards(s).map((c) => (
                <article key={c.id} title={c.title} data-testid={`card-${c.id}`}>
                  <div class="label">{c.label}</div>
                  <div class="value" data-testid={`stat-${c.id}`} title={c.notApplicable}>
                    {c.notApplicable === undefined ? formatStat(c.kind, c.value) : m.notApplicable}
                  </div>
                  <small class="hint" data-testid={`hint-${c.id}`}>{c.hint}</small>
                </article>
              ))}
            </div>
            <p class="hint" data-testid="withdrawals-note">{m.withdrawalsNote}</p>
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
  dashboard().growthTitle(numberFormat().format(days)) +
  (c.summary.growthRate === 0 && !noBase && c.previousRevenue === undefined ? dashboard().growthCannotTell : "")

const RevenueChart = ({ everyoneNewToday }: { everyoneNewToday: boolean }) => {
  const [period, setPeriod] = useState<Period>("7d")
  const [chart] = useLoad(async (): Promise<ChartWithBase> => {
    const c = await api<Chart>(`/admin/dashboard/revenue-chart?period=${period}`)
    const previousRevenue = c.summary.growthRate === 0 ? await revenueBefore(c, period).catch(() => undefined) : undefined
    return { ...c, previousRevenue }
  }, [period])
  const m = dashboard()
  return (
    <section>
      <div class="toolbar">
        <h2>{m.revenue}</h2>
        <div role="group" aria-label={m.period}>
          {(["7d", "30d", "90d"] as const).map((p) => (
            <button
              key={p}
              class={p === period ? "" : "outline"}
              aria-pressed={p === period}
              onClick={() => setPeriod(p)}
            >
              {m.periods[p]}
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
                <span data-testid="chart-timezone">{m.chartDays(numberFormat().format(c.data.length), c.timezone)}</span>
                {" "}· {m.chartRevenue} {formatCents(c.summary.totalRevenue)} · {m.chartProfit}{" "}
                {formatCents(c.summary.totalProfit)} · {m.chartAverage} {formatCents(c.summary.avgDailyRevenue)} ·{" "}
                <span title={growthTitle(c, DAYS[period], noBase)}>
                  {m.chartGrowth(numberFormat().format(DAYS[period]))}{" "}
                  <span data-testid="chart-growth" title={noBase ? m.growthNoRevenue : undefined}>
                    {noBase ? m.notApplicable : formatPercent(c.summary.growthRate / 100)}
                  </span>
                </span>
              </p>
              <Plot chart={c} />
              <ul class="series-notes" data-testid="series-notes">
                {SERIES.map((s) => (
                  <li key={s.key} data-series={s.key}>
                    <span class="swatch" data-color={s.key} /> <strong>{m.series[s.key].label}</strong>:{" "}
                    {m.series[s.key].counts}
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

/** The chart's series; what each counts is in text/dashboard.ts (docs/rules.md#revenue-chart). */
const SERIES = [
  { key: "revenue", stroke: "#1d70b8" },
  { key: "profit", stroke: "#2e7d32" },
  { key: "deposits", stroke: "#8e44ad" },
  { key: "withdrawals", stroke: "#d35400" }
] as const

const Plot = ({ chart }: { chart: Chart }) => {
  const box = useRef<HTMLDivElement>(null)
  // Drawn again in the other language when it switches: the canvas's labels are not re-rendered by Preact.
  const language = locale()
  useEffect(() => {
    const m = dashboard()
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
        { label: m.day, value: (_: uPlot, v: number | null) => (v === null ? "–" : legendDay(v)) },
        ...SERIES.map((s) => ({
          label: m.series[s.key].label,
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
  }, [chart, language])
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
  const m = dashboard()
  return (
    <section>
      <h2>{m.alerts}</h2>
      <Show loaded={alerts}>
        {({ alerts }) =>
          alerts.length === 0 ? <p>{m.noAlerts}</p> : alerts.map((a) => (
            <article key={a.id} class={`alert-${a.level}`} translate={false}>
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
  const m = dashboard()
  return (
    <section>
      <h2>
        {m.liveDrops} <small data-testid="live-state" data-live={live}>{live ? m.live : m.connecting}</small>
      </h2>
      <div class="drops" data-testid="live-drops">
        {drops.length === 0 ? <p>{m.noDrops}</p> : (
          <table>
            <tbody>
              {drops.map((d) => (
                <tr key={d.id}>
                  <td translate={false}>{d.user.username}</td>
                  <td translate={false}>{d.item.name} <small>{d.item.rarity}</small></td>
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
  const m = dashboard()
  const c = m.columns
  return (
    <section>
      <h2>{m.recentActivity}</h2>
      <p class="hint">{m.activityNote}</p>
      <Show loaded={activity}>
        {({ activities }) =>
          activities.length === 0 ? <p>{m.nothingYet}</p> : (
            <div class="overflow-auto">
              <table class="activity" data-testid="activity">
                <thead>
                  <tr>
                    <th title={m.whenTitle}>{c.when}</th>
                    <th>{c.type}</th>
                    <th>{c.user}</th>
                    <th>{c.what}</th>
                    <th class="money" title={m.valueTitle}>{c.value}</th>
                  </tr>
                </thead>
                <tbody>
                  {activities.map((a) => (
                    <tr key={a.id} data-id={a.id}>
                      <td data-label={c.when}>{formatDateTime(a.createdAt)}</td>
                      <td data-label={c.type} data-testid="activity-type" data-type={a.type} title={a.type}>
                        {activityTypeText(a.type)}
                      </td>
                      <td data-label={c.user}>
                        <UserLink user={a.user} />
                      </td>
                      <td data-label={c.what} translate={false}>{a.description}</td>
                      <td class="money" data-label={c.value} title={activityValueText(a.type)}>{formatCents(a.value)}</td>
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
