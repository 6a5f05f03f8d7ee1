/**
 * Fault injection (docs/rules.md#dependency-outage): the service on a private PostgreSQL and a private
 * Redis (append-only file on), signed-in users opening cases, upgrading, selling, paying deposits through
 * the sandbox and requesting withdrawals, each money request with an Idempotency-Key and retried with the
 * same key when it was cut or refused with 503. During the run the service is killed (SIGKILL) and
 * restarted, Redis is killed and restarted, PostgreSQL is crashed (immediate stop) and restarted. With
 * `--sentinel` Redis is a Sentinel set-up instead (a primary, a replica, three sentinels;
 * test/support/RedisTopologies.ts) and its fault is the primary killed (SIGKILL) for good: the sentinels
 * promote the replica and the service must follow by itself.
 * Afterwards it checks the money in the database and the players' sessions (created before the load, so
 * replicated long before any fault) and prints: acknowledged operations lost, sessions lost, ledger
 * mismatches, responses by status, and the time to recover from each fault. Exit code 1 when anything
 * acknowledged was lost, money does not add up, or any answer was a 500.
 *
 *   npm run bench:faults -- [--users 16] [--seconds 60] [--sentinel] [--keep]
 *
 * Needs PostgreSQL's server binaries (initdb, pg_ctl; run as the postgres user when started as root)
 * and redis-server on the PATH. Everything it starts listens on free loopback ports in a temporary
 * directory and is stopped at the end (`--keep` keeps the directory and its logs).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { chownSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import pg from "pg"
import { devSessionAt } from "../test/support/DevSignIn"
import { startSentinelSetup } from "../test/support/RedisTopologies"
import { serviceArgs } from "./serviceCommand"

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "16" },
    seconds: { type: "string", default: "60" },
    sentinel: { type: "boolean", default: false },
    keep: { type: "boolean", default: false }
  }
})
const USERS = Number(values.users)
const SECONDS = Number(values.seconds)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const now = () => performance.now()
const log = (message: string) => console.log(`[${((now() - t0) / 1000).toFixed(1).padStart(5)} s] ${message}`)
const t0 = now()

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

// ---- The private servers --------------------------------------------------------------------------

const dir = mkdtempSync(join(tmpdir(), "gp-faults-"))
const [pgPort, redisPort, servicePort, idpPort] = [await freePort(), await freePort(), await freePort(), await freePort()]
const pgBin = (() => {
  const versions = existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql").sort() : []
  return versions.length > 0 ? join("/usr/lib/postgresql", versions.at(-1)!, "bin") : ""
})()
const asRoot = process.getuid?.() === 0
/** Runs a PostgreSQL tool, as the postgres user when we are root (the server refuses to run as root). */
const pgTool = (tool: string, args: ReadonlyArray<string>) =>
  execFileSync(asRoot ? "runuser" : join(pgBin, tool), asRoot ? ["-u", "postgres", "--", join(pgBin, tool), ...args] : args, {
    stdio: "pipe"
  })
const pgData = join(dir, "pg")
mkdirSync(pgData)
if (asRoot) {
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString())
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString())
  chownSync(dir, uid, gid)
  chownSync(pgData, uid, gid)
}
pgTool("initdb", ["-D", pgData, "-U", "postgres", "-A", "trust", "--no-sync"])
const startPostgres = () =>
  pgTool("pg_ctl", [
    "-D", pgData, "-l", join(dir, "postgres.log"), "-w", "-t", "60",
    "-o", `-p ${pgPort} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100`,
    "start"
  ])
const crashPostgres = () => pgTool("pg_ctl", ["-D", pgData, "-m", "immediate", "stop"])
startPostgres()

let redis: ChildProcess
const startRedis = () => {
  redis = spawn("redis-server", [
    "--port", String(redisPort), "--bind", "127.0.0.1", "--dir", dir, "--save", "",
    "--appendonly", "yes", "--appendfsync", "always", "--logfile", join(dir, "redis.log")
  ], { stdio: "ignore" })
}
const sentinel = values.sentinel ? await startSentinelSetup("gp-faults") : undefined
if (sentinel === undefined) startRedis()

const base = `http://127.0.0.1:${servicePort}`
let service: ChildProcess
let serviceStartedAt = 0
const startService = () => {
  serviceStartedAt = now()
  service = spawn(process.execPath, [...serviceArgs], {
    env: {
      ...process.env,
      NODE_ENV: "development",
      DATABASE_URL: `postgres://postgres@127.0.0.1:${pgPort}/postgres`,
      ...(sentinel === undefined
        ? { REDIS_URL: `redis://127.0.0.1:${redisPort}` }
        : { REDIS_URL: undefined, REDIS_SENTINELS: sentinel.variable, REDIS_SENTINEL_NAME: sentinel.name }),
      PORT: String(servicePort),
      PUBLIC_URL: base,
      DEV_IDP_PORT: String(idpPort),
      DATA_DIR: join(dir, "data"),
      ADMIN_IDP_IDS: "faults-admin",
      LOG_LEVEL: "Warn",
      RATE_LIMIT_GLOBAL: "100000000/60000",
      RATE_LIMIT_AUTH: "100000000/60000",
      RATE_LIMIT_CASE_OPEN: "100000000/60000",
      RATE_LIMIT_WITHDRAWAL: "100000000/60000"
    },
    stdio: ["ignore", serviceLog, serviceLog]
  })
}
const serviceLog = openSync(join(dir, "service.log"), "a")

/** Polls readiness until it answers 200; the seconds it took. */
const untilReady = async (since: number, limitMs = 120_000) => {
  while (now() - since < limitMs) {
    try {
      const response = await fetch(`${base}/api/ready`, { signal: AbortSignal.timeout(1_000) })
      if (response.status === 200) return (now() - since) / 1000
    } catch {
      // not listening yet
    }
    await sleep(50)
  }
  throw new Error("the service did not become ready")
}

const stopAll = () => {
  for (const child of [service, redis]) child?.kill("SIGKILL")
  sentinel?.stop()
  try {
    pgTool("pg_ctl", ["-D", pgData, "-m", "immediate", "stop"])
  } catch {
    // already stopped
  }
  if (!values.keep) rmSync(dir, { recursive: true, force: true })
}
process.on("exit", stopAll)
process.on("SIGINT", () => process.exit(130))

// The service as `npm start` runs it: built once, then started from its bundle.
execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" })
startService()
const firstStart = await untilReady(serviceStartedAt)
log(`service ready ${firstStart.toFixed(2)} s after start (PostgreSQL :${pgPort}, ${
  sentinel === undefined ? `Redis :${redisPort}` : `Redis primary :${await sentinel.primaryPort()} under sentinels ${sentinel.variable}`
}, service :${servicePort})`)

// ---- Clients --------------------------------------------------------------------------------------

const statuses = new Map<string, number>()
const count = (what: string) => statuses.set(what, (statuses.get(what) ?? 0) + 1)

interface Answer {
  readonly status: number
  readonly body: any
}

/** One HTTP call; a cut connection or a timeout is `undefined`. */
const call = async (path: string, session: string, init: RequestInit = {}): Promise<Answer | undefined> => {
  try {
    const response = await fetch(`${base}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${session}`, ...(init.body ? { "content-type": "application/json" } : {}), ...init.headers },
      signal: AbortSignal.timeout(15_000)
    })
    const text = await response.text()
    count(String(response.status))
    return { status: response.status, body: text ? JSON.parse(text) : undefined }
  } catch {
    count("cut")
    return undefined
  }
}

/**
 * A money request until it is answered for good: retried with the same Idempotency-Key while the
 * answer is cut, 503, 409 (a lock) or 429. Returns the final answer, or undefined when it never got one.
 */
const moneyRequest = async (path: string, session: string, body?: unknown): Promise<Answer | undefined> => {
  const key = randomUUID()
  for (let attempt = 0; attempt < 200; attempt++) {
    const answer = await call(path, session, {
      method: "POST",
      headers: { "idempotency-key": key },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    if (answer !== undefined && ![409, 429, 502, 503].includes(answer.status)) return answer
    await sleep(Math.min(2_000, 100 * 2 ** Math.min(attempt, 5)))
  }
  return undefined
}

const admin = await devSessionAt(base, "faults-admin")
const items = (await call("/api/admin/items?limit=100", admin))!.body.items as Array<{ id: string; valueCents: number; isUpgradable: boolean }>
const cases = (await call("/api/cases?limit=100", admin))!.body.cases as Array<{ id: string; priceCents: number }>
const cheapCase = [...cases].sort((a, b) => a.priceCents - b.priceCents)[0]!

const FUNDS = 10_000_000
const players = await Promise.all(Array.from({ length: USERS }, async (_, i) => {
  const session = await devSessionAt(base, `faults-${i}`)
  const me = (await call("/api/auth/me", session))!.body
  const funded = await call(`/api/admin/users/${me.id}/adjust-balance`, admin, {
    method: "POST",
    body: JSON.stringify({ amountCents: FUNDS, reason: "fault-injection run" })
  })
  if (funded?.status !== 200) throw new Error(`funding failed: ${JSON.stringify(funded?.body)}`)
  return { session, id: String(me.id) }
}))
log(`${players.length} users signed in and funded; case ${cheapCase.id} (${cheapCase.priceCents} cents)`)

// What the service acknowledged (a 2xx answer): each must be in the database afterwards.
const acknowledged = { openings: [] as Array<string>, upgrades: [] as Array<string>, sales: [] as Array<string>, deposits: [] as Array<string>, withdrawals: [] as Array<string> }
const lastSuccessAt: Array<number> = []
const succeeded = () => void lastSuccessAt.push(now())

const actions: ReadonlyArray<[number, (player: { session: string; id: string }) => Promise<void>]> = [
  [40, async ({ session }) => {
    const answer = await moneyRequest(`/api/cases/${cheapCase.id}/open`, session)
    if (answer?.status === 200) (acknowledged.openings.push(answer.body.openingId), succeeded())
  }],
  [15, async ({ session }) => {
    const entry = (await call("/api/inventory?status=AVAILABLE&limit=1", session))?.body?.items?.[0]
    if (!entry) return
    const target = items.find((i) => i.isUpgradable && i.valueCents > entry.item.valueCents && i.valueCents <= entry.item.valueCents * 10)
    if (!target) return
    const answer = await moneyRequest("/api/upgrades", session, { fromItemId: entry.item.id, toItemId: target.id, inventoryItemId: entry.id })
    if (answer?.status === 200) (acknowledged.upgrades.push(answer.body.upgradeId), succeeded())
  }],
  [15, async ({ session }) => {
    const entry = (await call("/api/inventory?status=AVAILABLE&limit=1", session))?.body?.items?.[0]
    if (!entry) return
    const answer = await moneyRequest(`/api/inventory/${entry.id}/sell`, session)
    if (answer?.status === 200) (acknowledged.sales.push(answer.body.soldItemId), succeeded())
  }],
  [15, async ({ session }) => {
    const initiated = await moneyRequest("/api/payment/deposit/initiate", session, { amountCents: 1_000, method: "PIX" })
    if (initiated?.status !== 201) return
    // Paying is not a money request of ours (the gateway's callback credits, once): retried as is.
    for (let attempt = 0; attempt < 100; attempt++) {
      const paid = await call(`/api/sandbox/charges/${initiated.body.externalId}/pay`, session, { method: "POST" })
      if (paid?.status === 200 && paid.body.deposit.status === "CONFIRMED") {
        acknowledged.deposits.push(String(initiated.body.depositId))
        succeeded()
        return
      }
      if (paid !== undefined && paid.status < 500 && paid.status !== 429 && paid.status !== 409) return
      await sleep(300)
    }
  }],
  [15, async ({ session }) => {
    const answer = await moneyRequest("/api/withdrawals/request", session, {
      amountCents: 1_000,
      paymentMethod: "PIX",
      paymentDetails: { pixKeyType: "EMAIL", pixKey: "faults@example.com" }
    })
    if (answer?.status === 201) (acknowledged.withdrawals.push(String(answer.body.id)), succeeded())
  }]
]
const totalWeight = actions.reduce((sum, [weight]) => sum + weight, 0)
const pick = () => {
  let r = Math.random() * totalWeight
  for (const [weight, action] of actions) if ((r -= weight) < 0) return action
  return actions[0]![1]
}

let stopping = false
const load = Promise.all(players.map(async (player) => {
  while (!stopping) await pick()(player)
}))

// ---- The faults -----------------------------------------------------------------------------------

interface Recovery {
  readonly fault: string
  /** From the fault until /api/ready answered 200 again. */
  readonly readySeconds: number
  /** From the fault until the next acknowledged money operation. */
  readonly firstSuccessSeconds: number
}
const recoveries: Array<Recovery> = []

const nextSuccessAfter = async (since: number) => {
  while (!lastSuccessAt.some((t) => t > since)) await sleep(50)
  return (lastSuccessAt.find((t) => t > since)! - since) / 1000
}

const inject = async (fault: string, act: () => Promise<void> | void) => {
  const at = now()
  log(`fault: ${fault}`)
  await act()
  const readySeconds = await untilReady(at)
  const firstSuccessSeconds = await nextSuccessAfter(at)
  recoveries.push({ fault, readySeconds, firstSuccessSeconds })
  log(`recovered: ready after ${readySeconds.toFixed(2)} s, next acknowledged operation after ${firstSuccessSeconds.toFixed(2)} s`)
}

const slot = (SECONDS * 1000) / 4
await sleep(slot)
let restartToReady = 0
await inject("service killed (SIGKILL) and restarted", async () => {
  service.kill("SIGKILL")
  await new Promise((resolve) => service.once("exit", resolve))
  startService()
  restartToReady = await untilReady(serviceStartedAt)
})
await sleep(slot)
if (sentinel === undefined) {
  await inject("Redis killed (SIGKILL), restarted 2 s later", async () => {
    redis.kill("SIGKILL")
    await sleep(2_000)
    startRedis()
  })
} else {
  await inject("Redis primary killed (SIGKILL) for good, sentinels fail over to the replica", () => sentinel.failOver())
}
await sleep(slot)
await inject("PostgreSQL crashed (immediate stop), restarted 2 s later", async () => {
  crashPostgres()
  await sleep(2_000)
  startPostgres()
})
await sleep(slot)
stopping = true
log("load stopping; waiting for requests in flight and their retries")
await load

// ---- The checks -----------------------------------------------------------------------------------

const db = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${pgPort}/postgres` })
await db.connect()
const rows = async (text: string, params: ReadonlyArray<unknown> = []) => (await db.query(text, params as Array<unknown>)).rows
const missing = async (table: string, ids: ReadonlyArray<string>, where = "") =>
  ids.length === 0 ? 0 : Number((await rows(
    `SELECT count(*)::int AS n FROM unnest($1::bigint[]) AS a(id) WHERE NOT EXISTS (SELECT 1 FROM ${table} t WHERE t.id = a.id ${where})`,
    [ids]
  ))[0].n)
const lost = {
  openings: await missing("case_openings", acknowledged.openings),
  upgrades: await missing("upgrades", acknowledged.upgrades),
  sales: await missing("inventory_items", acknowledged.sales, "AND t.status = 'SOLD'"),
  deposits: await missing("deposits", acknowledged.deposits, "AND t.status = 'CONFIRMED'"),
  withdrawals: await missing("withdrawals", acknowledged.withdrawals)
}
const mismatches = {
  "balance is not the sum of movements": (await rows(`
    SELECT u.id FROM users u LEFT JOIN transactions t ON t.user_id = u.id
    GROUP BY u.id, u.balance_cents HAVING u.balance_cents <> COALESCE(sum(t.amount_cents), 0)`)).length,
  "negative balance": (await rows("SELECT id FROM users WHERE balance_cents < 0")).length,
  "openings without exactly their debits": (await rows(`
    SELECT o.user_id FROM (SELECT user_id, count(*) AS n, sum(price_paid_cents) AS paid FROM case_openings GROUP BY user_id) o
    FULL JOIN (SELECT user_id, count(*) AS n, -sum(amount_cents) AS paid FROM transactions WHERE type = 'CASE_OPEN' GROUP BY user_id) t
      ON t.user_id = o.user_id
    WHERE o.n IS DISTINCT FROM t.n OR o.paid IS DISTINCT FROM t.paid`)).length,
  "openings without their inventory entry": (await rows(`
    SELECT o.id FROM case_openings o LEFT JOIN inventory_items i ON i.id = o.inventory_item_id
    WHERE i.id IS NULL OR i.user_id <> o.user_id OR i.item_id <> o.item_id`)).length,
  "sold entries without exactly one credit": (await rows(`
    SELECT i.id FROM inventory_items i LEFT JOIN transactions t
      ON t.type = 'ITEM_SELL' AND t.reference_type = 'INVENTORY_ITEM' AND t.reference_id = i.id
    WHERE i.status = 'SOLD' GROUP BY i.id HAVING count(t.id) <> 1`)).length,
  "confirmed deposits without exactly one credit": (await rows(`
    SELECT d.id FROM deposits d
    LEFT JOIN transactions t ON t.type = 'DEPOSIT' AND t.reference_type = 'DEPOSIT' AND t.reference_id = d.id
    WHERE d.status = 'CONFIRMED' GROUP BY d.id HAVING count(t.id) <> 1`)).length,
  "withdrawals without exactly one debit": (await rows(`
    SELECT w.id FROM withdrawals w
    LEFT JOIN transactions t ON t.type = 'WITHDRAWAL' AND t.reference_type = 'WITHDRAWAL' AND t.reference_id = w.id
    GROUP BY w.id HAVING count(t.id) <> 1`)).length
}
await db.end()
// Every player's session was created (and replicated) before the load: each must still sign the player in.
const sessionsLost = (await Promise.all(players.map(({ session }) => call("/api/auth/me", session))))
  .filter((answer) => answer?.status !== 200).length

const totals = Object.fromEntries(Object.entries(acknowledged).map(([kind, ids]) => [kind, ids.length]))
const lostTotal = Object.values(lost).reduce((a, b) => a + b, 0)
const mismatchTotal = Object.values(mismatches).reduce((a, b) => a + b, 0)
const requests = [...statuses.values()].reduce((a, b) => a + b, 0)
const errors500 = statuses.get("500") ?? 0

console.log(`\n== Fault-injection run${sentinel === undefined ? "" : " (Redis under Sentinel)"}`)
console.log(`users ${USERS}, load ${SECONDS} s; first start to ready ${firstStart.toFixed(2)} s, restart after SIGKILL to ready ${restartToReady.toFixed(2)} s`)
console.log(`requests ${requests}; by status: ${[...statuses].sort().map(([s, n]) => `${s}=${n}`).join(" ")}`)
console.log(`acknowledged: ${Object.entries(totals).map(([k, n]) => `${k} ${n}`).join(", ")}`)
console.log(`acknowledged operations lost: ${lostTotal} (${Object.entries(lost).map(([k, n]) => `${k} ${n}`).join(", ")})`)
console.log(`sessions lost: ${sessionsLost} of ${players.length}`)
console.log(`money created or destroyed: ${mismatchTotal} (${Object.entries(mismatches).map(([k, n]) => `${k}: ${n}`).join("; ")})`)
console.log(`500 answers: ${errors500}`)
console.log("recovery (fault -> ready / -> next acknowledged money operation):")
for (const r of recoveries) console.log(`  ${r.fault}: ${r.readySeconds.toFixed(2)} s / ${r.firstSuccessSeconds.toFixed(2)} s`)
if (values.keep) console.log(`logs kept in ${dir}`)
const failed = lostTotal > 0 || sessionsLost > 0 || mismatchTotal > 0 || errors500 > 0
if (failed) console.log(`service log (last lines):\n${readFileSync(join(dir, "service.log"), "utf8").split("\n").slice(-40).join("\n")}`)
console.log(failed ? "FAILED" : "PASSED")
process.exit(failed ? 1 : 0)
