/**
 * The service's metrics (exported in Prometheus text at GET /metrics, see docs/operations.md). They
 * are Effect metrics: an update adds to a number in memory; nothing is computed until a scrape. A
 * labelled series is resolved once and kept, so an update on the hot path is a map lookup and an add.
 */
import { Duration, Effect, Metric, MetricBoundaries, MetricKey, MetricLabel } from "effect"

/** The series of a metric per label values, each created on first use. */
const family = <M, const Labels extends ReadonlyArray<string>>(
  make: (tags: ReadonlyArray<MetricLabel.MetricLabel>) => M,
  labels: Labels
) => {
  const series = new Map<string, M>()
  return (...values: { readonly [K in keyof Labels]: string }): M => {
    const id = values.join("\u0000")
    let metric = series.get(id)
    if (metric === undefined) {
      metric = make(labels.map((label, i) => MetricLabel.make(label, values[i]!)))
      series.set(id, metric)
    }
    return metric
  }
}

const counter = <const Labels extends ReadonlyArray<string>>(name: string, description: string, labels: Labels) =>
  family(
    (tags) => Metric.fromMetricKey(MetricKey.taggedWithLabels(MetricKey.counter(name, { description, incremental: true }), tags)),
    labels
  )

const gauge = (name: string, description: string) => Metric.fromMetricKey(MetricKey.gauge(name, { description }))

/** Seconds: 5 ms to 10 s. */
const LATENCY = MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])

const httpRequests = counter(
  "http_server_requests",
  "HTTP requests answered, by method, route template and status",
  ["method", "route", "status"]
)
const httpDuration = family(
  (tags) =>
    Metric.fromMetricKey(MetricKey.taggedWithLabels(
      MetricKey.histogram("http_server_request_duration_seconds", LATENCY, "HTTP request latency in seconds, by method and route template"),
      tags
    )),
  ["method", "route"]
)

/**
 * Updates made at once, in one step of the runtime. `Metric.update` reads the fiber's metric labels first (a few steps
 * per metric, ~30 an opening); the service sets none (its labels are in each series), so there are none to read.
 */
const NO_LABELS: ReadonlyArray<MetricLabel.MetricLabel> = []
const recorded = (update: () => void): Effect.Effect<void> => Effect.sync(update)

/** One answered request; `route` is the endpoint's template (or "unmatched"), never the raw path. */
export const httpRequest = (method: string, route: string, status: number, seconds: number) =>
  recorded(() => {
    httpRequests(method, route, String(status)).unsafeUpdate(1, NO_LABELS)
    httpDuration(method, route).unsafeUpdate(seconds, NO_LABELS)
  })

const games = counter("game_rounds", "Case openings, upgrades and battle joins completed, by game", ["game"])
const stakes = counter("game_stakes_cents", "What players staked (BRL cents), by game", ["game"])
const awards = counter("game_awards_cents", "The value of what openings and upgrades awarded (BRL cents), by game", ["game"])

/**
 * A completed round of a game: what was staked and, for openings and upgrades, the value awarded (0
 * when nothing was). A battle's items are awarded when it settles, so a join counts its entry only.
 */
export const gameRound = (game: "case_open" | "upgrade" | "battle_join", stakeCents: bigint, awardCents?: bigint) =>
  recorded(() => {
    games(game).unsafeUpdate(1, NO_LABELS)
    stakes(game).unsafeUpdate(Number(stakeCents), NO_LABELS)
    if (awardCents !== undefined) awards(game).unsafeUpdate(Number(awardCents), NO_LABELS)
  })

const money = counter("money_movements", "Deposits and withdrawals by kind and outcome", ["kind", "outcome"])
const moneyCents = counter("money_movements_cents", "Deposit and withdrawal amounts (BRL cents) by kind and outcome", [
  "kind",
  "outcome"
])

/** A deposit or withdrawal reached a state worth counting (initiated, confirmed, requested, completed...). */
export const moneyMovement = (kind: "deposit" | "withdrawal", outcome: string, amountCents: bigint) =>
  recorded(() => {
    money(kind, outcome).unsafeUpdate(1, NO_LABELS)
    moneyCents(kind, outcome).unsafeUpdate(Number(amountCents), NO_LABELS)
  })

const lockWait = Metric.timerWithBoundaries(
  "user_lock_wait",
  [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000],
  "Time to take a user's lock (milliseconds), waiting included"
)
const lockBusy = Metric.counter("user_lock_busy", {
  description: "Lock waits that gave up: answered 409 OPERATION_IN_PROGRESS",
  incremental: true
})

/** A user's lock taken after waiting `ms` (in line and at the store). */
export const userLockWaited = (ms: number) => recorded(() => lockWait.unsafeUpdate(Duration.millis(ms), NO_LABELS))
/** A wait for a user's lock that gave up (answered 409 OPERATION_IN_PROGRESS). */
export const userLockBusy = recorded(() => lockBusy.unsafeUpdate(1, NO_LABELS))

const rateLimited = counter("rate_limit_rejections", "429 answers of the rate limiter, by rule", ["rule"])
export const rateLimitRejection = (rule: string) => recorded(() => rateLimited(rule).unsafeUpdate(1, NO_LABELS))

const jobRuns = counter("background_job_runs", "Background job runs, by job and outcome (ok, failed)", ["job", "outcome"])
export const jobRun = (job: string, outcome: "ok" | "failed") => recorded(() => jobRuns(job, outcome).unsafeUpdate(1, NO_LABELS))

const sseClients = Metric.fromMetricKey(
  MetricKey.counter("sse_clients", { description: "Server-Sent Events streams open now" })
)
/** Counts a Server-Sent Events stream as open until its scope closes. */
export const sseClientOpen = Effect.acquireRelease(
  recorded(() => sseClients.unsafeUpdate(1, NO_LABELS)),
  () => recorded(() => sseClients.unsafeUpdate(-1, NO_LABELS))
)

/** Set at each scrape from the same checks as readiness: 1 up, 0 down. */
export const databaseUp = gauge("database_up", "1 when PostgreSQL answered the last scrape's check, else 0")
export const redisUp = gauge("redis_up", "1 when Redis (or the in-memory stores) answered the last scrape's check, else 0")
/** Set at each scrape from the connection pool: connections by state, queries waiting, the pool's size. */
export const databasePoolConnections = (state: "busy" | "idle") =>
  Metric.tagged(gauge("database_pool_connections", "PostgreSQL connections of this instance's pool, by state (busy, idle)"), "state", state)
export const databasePoolWaiting = gauge("database_pool_waiting", "Queries waiting for a connection of the pool")
export const databasePoolMax = gauge("database_pool_max", "The most connections the pool opens")
