import { useEffect, useRef, useState } from "preact/hooks"
import uPlot from "uplot"
import "uplot/dist/uPlot.min.css"
import { api } from "../api"
import { formatCents, formatDateTime, formatPercent } from "../money"
import { Show } from "../ui"
import { useLoad } from "../useLoad"
import { UserLink } from "./nav"

interface Stats {
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
    ggrToday: { total: number }
  }
}

type Kind = "count" | "money" | "percent"

/** The cards: [test id, label, kind, value]. The test id is the field's path in `GET /api/admin/dashboard`. */
const cards = (s: Stats): ReadonlyArray<readonly [string, string, Kind, number]> => [
  ["users.total", "Users", "count", s.users.total],
  ["users.activeToday", "Active today", "count", s.users.activeToday],
  ["users.newToday", "New today", "count", s.users.newToday],
  ["users.growth", "Active vs yesterday", "percent", s.users.growth],
  ["financial.revenueToday", "Revenue today", "money", s.financial.revenueToday],
  ["financial.profitToday", "Profit today", "money", s.financial.profitToday],
  ["financial.depositsToday", "Deposits today", "money", s.financial.depositsToday],
  ["financial.withdrawalsToday", "Withdrawals today", "money", s.financial.withdrawalsToday],
  ["financial.pendingWithdrawals", "Pending withdrawals", "count", s.financial.pendingWithdrawals],
  ["financial.itemSalesToday", "Item sales today", "money", s.financial.itemSalesToday],
  ["financial.feesToday", "Deposit fees today", "money", s.financial.feesToday],
  ["games.casesOpenedToday", "Cases opened today", "count", s.games.casesOpenedToday],
  ["games.battlesToday", "Battles today", "count", s.games.battlesToday],
  ["games.upgradesToday", "Upgrades today", "count", s.games.upgradesToday],
  ["games.totalVolume", "Volume today", "money", s.games.totalVolume],
  ["games.ggrToday.total", "GGR today", "money", s.games.ggrToday.total]
]

const formatStat = (kind: Kind, value: number): string =>
  kind === "money" ? formatCents(value) : kind === "percent" ? formatPercent(value / 100) : value.toLocaleString("pt-BR")

export const Dashboard = () => {
  const [stats] = useLoad(() => api<Stats>("/admin/dashboard"), [])
  return (
    <>
      <h1>Dashboard</h1>
      <Show loaded={stats}>
        {(s) => (
          <div class="cards" data-testid="stats">
            {cards(s).map(([id, label, kind, value]) => (
              <article key={id}>
                <div class="label">{label}</div>
                <div class="value" data-testid={`stat-${id}`}>{formatStat(kind, value)}</div>
              </article>
            ))}
          </div>
        )}
      </Show>
      <RevenueChart />
      <div class="grid">
        <Alerts />
        <LiveDrops />
      </div>
      <RecentActivity />
    </>
  )
}

type Period = "7d" | "30d" | "90d"

interface Chart {
  readonly data: ReadonlyArray<{ date: string; revenue: number; profit: number; deposits: number; withdrawals: number }>
  readonly summary: { totalRevenue: number; totalProfit: number; avgDailyRevenue: number; growthRate: number }
}

const RevenueChart = () => {
  const [period, setPeriod] = useState<Period>("7d")
  const [chart] = useLoad(() => api<Chart>(`/admin/dashboard/revenue-chart?period=${period}`), [period])
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
        {(c) => (
          <>
            <p data-testid="chart-summary" data-points={c.data.length}>
              {c.data.length} days · revenue {formatCents(c.summary.totalRevenue)} · profit{" "}
              {formatCents(c.summary.totalProfit)} · daily average {formatCents(c.summary.avgDailyRevenue)} · growth{" "}
              {formatPercent(c.summary.growthRate / 100)}
            </p>
            <Plot chart={c} />
          </>
        )}
      </Show>
    </section>
  )
}

const SERIES = [
  { key: "revenue", label: "Revenue", stroke: "#1d70b8" },
  { key: "profit", label: "Profit", stroke: "#2e7d32" },
  { key: "deposits", label: "Deposits", stroke: "#8e44ad" },
  { key: "withdrawals", label: "Withdrawals", stroke: "#d35400" }
] as const

const Plot = ({ chart }: { chart: Chart }) => {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const element = box.current!
    const data: uPlot.AlignedData = [
      chart.data.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000),
      ...SERIES.map((s) => chart.data.map((d) => d[s.key] / 100))
    ]
    const plot = new uPlot({
      width: element.clientWidth,
      height: 260,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      series: [
        {},
        ...SERIES.map((s) => ({
          label: s.label,
          stroke: s.stroke,
          width: 2,
          value: (_: uPlot, v: number | null) => (v === null ? "–" : formatCents(Math.round(v * 100)))
        }))
      ],
      axes: [{}, { size: 70, values: (_, ticks) => ticks.map((t) => `R$ ${t.toLocaleString("pt-BR")}`) }]
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
      <Show loaded={activity}>
        {({ activities }) =>
          activities.length === 0 ? <p>Nothing yet.</p> : (
            <div class="overflow-auto">
              <table data-testid="activity">
                <thead>
                  <tr>
                    <th>When</th>
                    <th>Type</th>
                    <th>User</th>
                    <th>What</th>
                    <th class="money">Value</th>
                  </tr>
                </thead>
                <tbody>
                  {activities.map((a) => (
                    <tr key={a.id}>
                      <td>{formatDateTime(a.createdAt)}</td>
                      <td>{a.type}</td>
                      <td>
                        <UserLink user={a.user} />
                      </td>
                      <td>{a.description}</td>
                      <td class="money">{formatCents(a.value)}</td>
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
