/**
 * The open-case hot path against its database's own speed, in one run on this machine:
 *   1. a fresh PostgreSQL database, the service started on it (and on Redis), users signed in and funded;
 *   2. closed loop: `--users` users open cases back to back for `--seconds`;
 *   3. pgbench runs the SQL of one opening (bench/open-case.pgbench) with as many clients, as long,
 *      on the same database and users: what PostgreSQL alone does for the same work;
 *   4. open loop: openings sent at a fixed `--rate` per second for `--seconds`, latency counted from
 *      each request's scheduled send time (so queueing is not hidden);
 *   5. how cost grows: closed loops at each of `--scales` users.
 * It prints throughputs, the service/pgbench ratio, the latencies and the service's CPU time per request
 * (from /proc), then stops the service and drops the database and its Redis keys.
 *
 *   npm run bench:vs-pgbench -- [--users 64] [--seconds 20] [--rate 400] [--scales 1,4,16,64,256]
 *     [--postgres postgres://postgres@127.0.0.1:5432/postgres] [--redis redis://127.0.0.1:6379] [--profile <dir>]
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { Agent, request } from "node:http"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import pg from "pg"
import { devSessionAt } from "../test/support/DevSignIn"
import { removeRedisKeys } from "../test/support/TestStores"
import { serviceArgs } from "./serviceCommand"

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "64" },
    seconds: { type: "string", default: "20" },
    rate: { type: "string", default: "400" },
    scales: { type: "string", default: "1,4,16,64,256" },
    postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
    redis: { type: "string", default: "redis://127.0.0.1:6379" },
    /** A folder for a CPU profile of the service (node --cpu-prof), written when it stops. */
    profile: { type: "string" }
  }
})
const USERS = Number(values.users)
const SECONDS = Number(values.seconds)
const RATE = Number(values.rate)
const SCALES = values.scales.split(",").filter(Boolean).map(Number)
const MAX_USERS = Math.max(USERS, ...SCALES)

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

// ---- A fresh database and the service on it ------------------------------------------------------

const adminUrl = new URL(values.postgres)
const database = `gp_bench_${randomBytes(4).toString("hex")}`
const admin = new pg.Client({ connectionString: adminUrl.href })
await admin.connect()
await admin.query(`CREATE DATABASE ${database}`)
const databaseUrl = new URL(adminUrl.href)
databaseUrl.pathname = `/${database}`

const dir = mkdtempSync(join(tmpdir(), "gp-vs-pgbench-"))
const [port, idpPort] = [await freePort(), await freePort()]
const base = `http://127.0.0.1:${port}`
const log = openSync(join(dir, "service.log"), "a")
// The service as `npm start` runs it, from its bundle.
execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" })
const profiling = values.profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", values.profile]
const service: ChildProcess = spawn(process.execPath, [...profiling, ...(process.env.TRACEGC ? ["--trace-gc-nvp"] : []), ...(process.env.HEAP ? ["--import", "/tmp/exp/heapsample.mjs"] : []), ...serviceArgs], {
  env: {
    ...process.env,
    NODE_ENV: "development",
    DATABASE_URL: databaseUrl.href,
    REDIS_URL: values.redis,
    REDIS_KEY_PREFIX: `${database}:`,
    PORT: String(port),
    PUBLIC_URL: base,
    DEV_IDP_PORT: String(idpPort),
    DATA_DIR: join(dir, "data"),
    ADMIN_IDP_IDS: "bench-admin",
    LOG_LEVEL: "Warn",
    RATE_LIMIT_GLOBAL: "1000000000/60000",
    RATE_LIMIT_AUTH: "1000000000/60000",
    RATE_LIMIT_CASE_OPEN: "1000000000/60000"
  },
  stdio: ["ignore", log, log]
})

const cleanUp = async () => {
  service.kill("SIGTERM")
  await new Promise((resolve) => service.exitCode !== null ? resolve(null) : service.once("exit", resolve))
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
  await admin.end()
  // The service's Redis keys (sessions, counters) live under the database's name.
  await removeRedisKeys(values.redis, `${database}:`)
  rmSync(dir, { recursive: true, force: true })
}
process.on("SIGINT", () => void cleanUp().finally(() => process.exit(130)))

for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${base}/api/ready`)).status === 200) break
  } catch {
    // not listening yet
  }
  if (i > 1200) throw new Error(`the service did not start:\n${readFileSync(join(dir, "service.log"), "utf8")}`)
  await new Promise((resolve) => setTimeout(resolve, 100))
}

// ---- Users ------------------------------------------------------------------------------------------

const agent = new Agent({ keepAlive: true, maxSockets: 1024 })
const send = (method: string, path: string, session: string, body?: unknown) =>
  new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = request(`${base}${path}`, {
      method,
      agent,
      headers: { authorization: `Bearer ${session}`, ...(body === undefined ? {} : { "content-type": "application/json" }) }
    }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => (text += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }))
    })
    req.on("error", reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })

const adminSession = await devSessionAt(base, "bench-admin")
const starter = (await send("GET", "/api/admin/cases?limit=100", adminSession)).body.cases.find((c: { slug: string }) => c.slug === "starter")
if (starter === undefined || String(starter.id) !== "1") throw new Error("the demo catalog's case 1 'starter' is missing")

// Signed in all at once, as many users arriving together would.
const signInStarted = performance.now()
const sessions = await Promise.all(Array.from({ length: MAX_USERS }, (_, i) => devSessionAt(base, `bench-user-${i}`)))
const signInSeconds = (performance.now() - signInStarted) / 1000
const userIds: Array<number> = []
for (const session of sessions) {
  const me = (await send("GET", "/api/auth/me", session)).body
  userIds.push(Number(me.id))
  const funded = await send("POST", `/api/admin/users/${me.id}/adjust-balance`, adminSession, { amountCents: 1_000_000_000, reason: "benchmark" })
  if (funded.status !== 200) throw new Error(`funding failed: ${JSON.stringify(funded.body)}`)
}
const open = (i: number) => send("POST", "/api/cases/1/open", sessions[i]!)

// ---- Measurements -------------------------------------------------------------------------------------

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN

interface Loop {
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
  /** Answers other than 200 by status (0: no answer), e.g. 409 when a user's lock stayed busy for 5 s. */
  readonly failures?: Map<number, number>
  /** The service process's CPU time (user + system) per answered request, in ms. */
  readonly cpuMs?: number
}

/** The service process's CPU time so far, in ms (Linux: /proc/<pid>/stat, in clock ticks of 10 ms). */
const serviceCpuMs = () => {
  const fields = readFileSync(`/proc/${service.pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** `users` users opening back to back for `seconds`. */
const closedLoop = async (users: number, seconds: number): Promise<Loop> => {
  const latencies: Array<number> = []
  const failures = new Map<number, number>()
  const failed = (status: number) => void failures.set(status, (failures.get(status) ?? 0) + 1)
  const deadline = performance.now() + seconds * 1000
  const started = performance.now()
  const cpuBefore = serviceCpuMs()
  await Promise.all(Array.from({ length: users }, async (_, i) => {
    while (performance.now() < deadline) {
      const t = performance.now()
      const answer = await open(i).catch(() => ({ status: 0 }))
      if (answer.status === 200) latencies.push(performance.now() - t)
      else failed(answer.status)
    }
  }))
  const elapsed = (performance.now() - started) / 1000
  const errors = [...failures.values()].reduce((a, b) => a + b, 0)
  const cpuMs = (serviceCpuMs() - cpuBefore) / (latencies.length + errors)
  latencies.sort((a, b) => a - b)
  return { perSecond: latencies.length / elapsed, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), errors, failures, cpuMs }
}

/** Openings sent at `rate` per second for `seconds`, spread over `users` users; latency from the scheduled time. */
const openLoop = async (rate: number, users: number, seconds: number): Promise<Loop> => {
  const latencies: Array<number> = []
  const failures = new Map<number, number>()
  const failed = (status: number) => void failures.set(status, (failures.get(status) ?? 0) + 1)
  const total = Math.round(rate * seconds)
  const started = performance.now()
  const cpuBefore = serviceCpuMs()
  const inFlight: Array<Promise<void>> = []
  for (let n = 0; n < total; n++) {
    const scheduled = started + (n * 1000) / rate
    const wait = scheduled - performance.now()
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait))
    inFlight.push(open(n % users).then(
      (answer) => void (answer.status === 200 ? latencies.push(performance.now() - scheduled) : failed(answer.status)),
      () => failed(0)
    ))
  }
  await Promise.all(inFlight)
  const elapsed = (performance.now() - started) / 1000
  const cpuMs = (serviceCpuMs() - cpuBefore) / total
  const errors = [...failures.values()].reduce((a, b) => a + b, 0)
  latencies.sort((a, b) => a - b)
  return { perSecond: latencies.length / elapsed, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), errors, failures, cpuMs }
}

/** pgbench on the same database and users: transactions per second and latency percentiles. */
const pgbench = (clients: number, seconds: number): Loop => {
  const logs = mkdtempSync(join(dir, "pgbench-"))
  const output = execFileSync("pgbench", [
    "-h", databaseUrl.hostname, "-p", databaseUrl.port || "5432", "-U", decodeURIComponent(databaseUrl.username || "postgres"),
    "-n", "-M", "prepared", "-c", String(clients), "-j", "2", "-T", String(seconds),
    "-D", `ubase=${Math.min(...userIds)}`, "-f", "bench/open-case.pgbench",
    "-l", "--log-prefix", join(logs, "tx"), database
  ], { encoding: "utf8", cwd: process.cwd() })
  const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(output)?.[1])
  const failed = Number(/number of failed transactions: (\d+)/.exec(output)?.[1] ?? 0)
  const latencies = readdirSync(logs).flatMap((file) =>
    readFileSync(join(logs, file), "utf8").trim().split("\n").map((line) => Number(line.split(" ")[2]) / 1000)
  ).sort((a, b) => a - b)
  return { perSecond: tps, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), errors: failed }
}

const show = (name: string, loop: Loop) =>
  `${name.padEnd(34)} ${loop.perSecond.toFixed(0).padStart(6)}/s   p50 ${loop.p50.toFixed(1).padStart(6)} ms   p99 ${loop.p99.toFixed(1).padStart(6)} ms${
    loop.cpuMs === undefined ? "" : `   service CPU ${loop.cpuMs.toFixed(2)} ms/request`
  }${loop.errors ? `   errors ${loop.errors}` : ""}${
    loop.failures?.size ? ` (${[...loop.failures].map(([status, n]) => `${status}: ${n}`).join(", ")})` : ""
  }`


const only = (process.env.EXP ?? "health,me,open").split(",")
const loops: Record<string, (i: number) => Promise<{ status: number }>> = {
  health: () => send("GET", "/api/health", sessions[0]!),
  me: (i) => send("GET", "/api/auth/me", sessions[i]!),
  cases: (i) => send("GET", "/api/cases", sessions[i]!),
  open: (i) => open(i)
}
const loopOf = async (fn: (i: number) => Promise<{ status: number }>, users: number, seconds: number) => {
  let ok = 0, bad = 0
  const deadline = performance.now() + seconds * 1000
  const started = performance.now(); const cpu0 = serviceCpuMs(); const me0 = process.cpuUsage()
  await Promise.all(Array.from({ length: users }, async (_, i) => {
    while (performance.now() < deadline) { const a = await fn(i).catch(() => ({ status: 0 })); a.status < 300 ? ok++ : bad++ }
  }))
  const el = (performance.now() - started) / 1000; console.log("requests", ok + bad); const cpu = (serviceCpuMs() - cpu0) / (ok + bad); const c = process.cpuUsage(me0)
  return `${(ok / el).toFixed(0)}/s  service CPU ${cpu.toFixed(2)} ms/req  client CPU ${((c.user + c.system) / 1000 / (ok + bad)).toFixed(2)} ms/req  bad ${bad}`
}
for (const name of only) await loopOf(loops[name]!, USERS, 3)
if (process.env.OPENLOOP) {
  const rate = Number(process.env.OPENLOOP); const total = rate * SECONDS; const started = performance.now()
  const lat: Array<[number, number, number]> = []; const errs: Array<string> = []
  const inFlight: Array<Promise<void>> = []
  for (let n = 0; n < total; n++) {
    const scheduled = started + (n * 1000) / rate
    const wait = scheduled - performance.now()
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait))
    const delay = performance.now() - scheduled
    inFlight.push(open(n % USERS).then((a) => { if (a.status !== 200) errs.push(String(a.status)); lat.push([scheduled - started, performance.now() - scheduled, delay]) }, (e) => { errs.push(`${e?.code ?? e}@${((scheduled - started) / 1000).toFixed(2)}s`) }))
  }
  await Promise.all(inFlight)
  const sorted = lat.map((x) => x[1]).sort((a, b) => a - b)
  console.log(`open loop ${rate}/s: p50 ${sorted[Math.floor(sorted.length * 0.5)]!.toFixed(1)} p99 ${sorted[Math.floor(sorted.length * 0.99)]!.toFixed(1)} max ${sorted.at(-1)!.toFixed(1)} errors ${errs.join(",")}`)
  const bySecond = new Map<number, Array<[number, number]>>()
  for (const [t, l, d] of lat) { const k = Math.floor(t / 1000); if (!bySecond.has(k)) bySecond.set(k, []); bySecond.get(k)!.push([l, d]) }
  console.log([...bySecond].map(([k, ls]) => `${k}:${Math.max(...ls.map((x) => x[0])).toFixed(0)}/${ls.filter((l) => l[0] > 100).length}/send${Math.max(...ls.map((x) => x[1])).toFixed(0)}`).join(" "))
  const worst = lat.slice().sort((a, b) => b[1] - a[1])[0]!; console.log("worst at", (worst[0] / 1000).toFixed(2), "s, latency", worst[1].toFixed(0), "send delay", worst[2].toFixed(0), "wall", Date.now())
}
let tracer: ChildProcess | undefined
if (process.env.STRACE) { tracer = spawn("strace", [...(process.env.STRACE === "full" ? ["-s", "24"] : ["-c"]), "-f", "-e", "trace=writev,write", "-p", String(service.pid), "-o", "/tmp/strace.txt"], { stdio: "inherit" }); await new Promise((r) => setTimeout(r, 1000)) }
if (process.env.HEAP) { service.kill("SIGUSR1"); await new Promise((r) => setTimeout(r, 300)) }
if (process.env.HEAPLIVE) setTimeout(() => service.kill("SIGUSR2"), Number(process.env.HEAPLIVE))
for (let round = 0; round < Number(process.env.ROUNDS ?? 2); round++)
  for (const name of only) console.log(name.padEnd(8), await loopOf(loops[name]!, USERS, SECONDS))
if (process.env.HEAP && !process.env.HEAPLIVE) { service.kill("SIGUSR2"); await new Promise((r) => setTimeout(r, 3000)) }
execFileSync("cp", [join(dir, "service.log"), "/tmp/service-gc.log"])
if (tracer) { tracer.kill("SIGINT"); await new Promise((r) => setTimeout(r, 1000)) }
agent.destroy()
await cleanUp()
