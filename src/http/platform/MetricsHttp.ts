/**
 * GET /metrics: every metric in the Prometheus text format, for a scraper holding METRICS_TOKEN
 * (`Authorization: Bearer <METRICS_TOKEN>`). Without METRICS_TOKEN the route is not served (404): the
 * figures include money volumes. Outside the HttpApi (and its document): it is for operators only.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Config, Duration, Effect, Metric, Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { DatabasePool } from "../../layers/Database"
import { MetricsExport } from "../../layers/Observability"
import { StoreHealth } from "../../layers/stores/Stores"
import {
  databasePoolConnections,
  databasePoolMax,
  databasePoolWaiting,
  databaseUp,
  redisUp
} from "../../layers/AppMetrics"

const METRICS_PATH = "/metrics"

/** As long as readiness waits for each dependency. */
const CHECK_TIMEOUT = Duration.seconds(1)

const digest = (value: string) => createHash("sha256").update(value).digest()

/** 1 when `check` succeeds within CHECK_TIMEOUT, else 0. */
const up = (check: Effect.Effect<unknown, unknown>) =>
  check.pipe(Effect.timeout(CHECK_TIMEOUT), Effect.match({ onFailure: () => 0, onSuccess: () => 1 }))

/** GET /metrics for the scraper whose token's digest is `expected`: the checks and the pool's figures, then all. */
const scrape = Effect.fnUntraced(function*(
  expected: Buffer,
  metrics: MetricsExport["Type"],
  sql: SqlClient.SqlClient,
  stores: StoreHealth["Type"],
  pool: DatabasePool["Type"]
) {
  const request = yield* HttpServerRequest.HttpServerRequest
  const authorization = request.headers.authorization ?? ""
  const given = authorization.startsWith("Bearer ") ? authorization.slice("Bearer ".length) : ""
  if (!timingSafeEqual(digest(given), expected)) {
    return HttpServerResponse.unsafeJson({ statusCode: 401, message: "Unauthorized" }, {
      status: 401,
      headers: { "www-authenticate": "Bearer" }
    })
  }
  const [database, redis] = yield* Effect.all([up(sql`SELECT 1`), up(stores.check)], { concurrency: 2 })
  yield* Metric.set(databaseUp, database)
  yield* Metric.set(redisUp, redis)
  const state = pool.state()
  yield* Metric.set(databasePoolConnections("busy"), state.open - state.idle)
  yield* Metric.set(databasePoolConnections("idle"), state.idle)
  yield* Metric.set(databasePoolWaiting, state.waiting)
  yield* Metric.set(databasePoolMax, state.max)
  return HttpServerResponse.text(yield* metrics.scrape, { contentType: "text/plain; version=0.0.4; charset=utf-8" })
})

export const MetricsRouteLive = HttpApiBuilder.Router.use(Effect.fnUntraced(function*(router) {
  const token = yield* Config.option(Config.redacted("METRICS_TOKEN")).pipe(Effect.orDie)
  if (Option.isNone(token)) return
  const expected = digest(Redacted.value(token.value))
  const metrics = yield* MetricsExport
  const sql = yield* SqlClient.SqlClient
  const stores = yield* StoreHealth
  const pool = yield* DatabasePool

  yield* router.get(METRICS_PATH, scrape(expected, metrics, sql, stores, pool))
})
)
