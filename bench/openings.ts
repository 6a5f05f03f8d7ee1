/**
 * Case openings under load: many signed-in users open cases concurrently against a running service
 * (embedded development sign-in), then it prints throughput, latency percentiles and status codes,
 * and checks the money: every user's balance equals their funding minus what their openings cost.
 *
 * With the service's database known (`--database`, else DATABASE_URL), pgbench then runs the SQL of an opening
 * (bench/open-case.pgbench) with as many clients, as long, on the same database and users, after the balances are
 * checked: the yardstick in the same run, and the service/pgbench ratio (with PostgreSQL's CPU per opening when it
 * runs on this machine). The yardstick opens the demo catalog's case 1 ("starter"), so compare with `--case starter`.
 *
 * Start the service with the limits raised (the sign-ins too: every user signs in from this one address) and an
 * administrator for funding, e.g.
 *   DATABASE_URL=... REDIS_URL=... ADMIN_IDP_IDS=bench-admin RATE_LIMIT_GLOBAL=1000000/60000 \
 *     RATE_LIMIT_CASE_OPEN=1000000/60000 RATE_LIMIT_AUTH=1000000/60000 npm start
 *   DATABASE_URL=... npm run bench:openings -- --users 40 --seconds 20 [--case starter] [--url http://localhost:3000]
 *     [--database postgres://...] [--pid <the service's process id, for its CPU per opening>] [--warm-up 3]
 * The first `--warm-up` seconds of openings are not measured (the service's JIT warms up); their balances are checked.
 * With the database known, it is then vacuumed and analyzed, as autovacuum would have done by then (docs/decisions.md
 * "Statistics").
 * The service: `--url`, else BENCH_URL, else where the service says it is (PUBLIC_URL, else PORT; scripts/ServiceUrl.ts).
 */
import { parseArgs } from "node:util"
import { expectService, serviceUrl } from "../scripts/ServiceUrl"
import { devSessionAt } from "../test/support/DevSignIn"
import { mainThreads, makeSender, perRequest, pgbenchOpenings, processCpuMs, sharedCpu, show, threadSharesText, vacuum } from "./BenchService"

const { values } = parseArgs({
  options: {
    url: { type: "string", default: process.env.BENCH_URL ?? serviceUrl() },
    users: { type: "string", default: "40" },
    seconds: { type: "string", default: "20" },
    case: { type: "string", default: "starter" },
    database: { type: "string", default: process.env.DATABASE_URL },
    pid: { type: "string" },
    "warm-up": { type: "string", default: "3" }
  }
})
const base = values.url.replace(/\/+$/, "")
await expectService(base)
const run = `${Date.now().toString(36)}`
const USERS = Number(values.users)
const SECONDS = Number(values.seconds)
const { send, close } = makeSender([base])

const admin = await devSessionAt(base, "bench-admin")
const caseList = await send("GET", "/api/admin/cases", admin)
if (caseList.status !== 200) throw new Error(`GET /api/admin/cases: ${caseList.status} (is ADMIN_IDP_IDS=bench-admin set?)`)
const target = (caseList.body.cases ?? caseList.body).find((c: { slug: string }) => c.slug === values.case)
if (!target) throw new Error(`no case with slug ${values.case}`)
const price = Number(target.priceCents)

const funding = 100_000_000
const users = await Promise.all(Array.from({ length: USERS }, async (_, i) => {
  const session = await devSessionAt(base, `bench-${run}-${i}`)
  const me = (await send("GET", "/api/auth/me", session)).body
  const funded = await send("POST", `/api/admin/users/${me.id}/adjust-balance`, admin, { amountCents: funding, reason: "benchmark" })
  if (funded.status !== 200) throw new Error(`funding failed: ${JSON.stringify(funded.body)}`)
  return { id: Number(me.id), session, opened: 0 }
}))

/** The service's CPU time so far in ms, when its process id was given. */
const serviceCpuMs = () => values.pid === undefined ? undefined : processCpuMs(Number(values.pid))

/** Every user opening back to back for `seconds`: the latencies and statuses of those openings. */
const openFor = async (seconds: number) => {
  const latencies: Array<number> = []
  const statuses = new Map<number, number>()
  const deadline = performance.now() + seconds * 1000
  await Promise.all(users.map(async (user) => {
    while (performance.now() < deadline) {
      const t0 = performance.now()
      const { status } = await send("POST", `/api/cases/${target.id}/open`, user.session)
      latencies.push(performance.now() - t0)
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
      if (status === 200) user.opened++
    }
  }))
  return { latencies, statuses }
}

await openFor(Number(values["warm-up"]))
if (values.database !== undefined) await vacuum(new URL(values.database))
const started = performance.now()
const [serviceBefore, shared] = [serviceCpuMs(), sharedCpu()]
const threads = values.pid === undefined ? undefined : mainThreads([Number(values.pid)])
const { latencies, statuses } = await openFor(SECONDS)
const elapsed = (performance.now() - started) / 1000
const serviceCpu = perRequest(serviceBefore, serviceCpuMs(), latencies.length)
const { clientCpuMs, databaseCpuMs, redisCpuMs } = shared.perRequest(latencies.length)
const serviceThread = threads?.shares()

let mismatches = 0
for (const user of users) {
  const balance = Number((await send("GET", "/api/auth/me", user.session)).body.balanceCents)
  if (balance !== funding - user.opened * price) mismatches++
}
close()

latencies.sort((a, b) => a - b)
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!.toFixed(1)
const perSecond = latencies.length / elapsed
console.log(`POST /api/cases/${target.id}/open (${target.slug}, ${price} cents): ${users.length} users, ${elapsed.toFixed(1)} s`)
console.log(`openings: ${latencies.length} (${perSecond.toFixed(0)}/s)${
  serviceCpu === undefined ? "" : `, service CPU ${serviceCpu.toFixed(2)} ms/opening`
}${databaseCpuMs === undefined ? "" : `, database CPU ${databaseCpuMs.toFixed(2)} ms/opening`}${
  redisCpuMs === undefined ? "" : `, Redis CPU ${redisCpuMs.toFixed(2)} ms/opening`
}, client CPU ${clientCpuMs.toFixed(2)} ms/opening${serviceThread === undefined ? "" : `, ${threadSharesText(serviceThread)}`}`)
console.log(`latency ms: p50 ${pct(0.5)}  p95 ${pct(0.95)}  p99 ${pct(0.99)}  max ${latencies.at(-1)!.toFixed(1)}`)
console.log(`statuses: ${[...statuses].map(([s, n]) => `${s}=${n}`).join(" ")}`)
console.log(`balances that do not match their openings: ${mismatches}`)

if (values.database === undefined) {
  console.log("no pgbench yardstick: give the service's database with --database or DATABASE_URL")
} else {
  // pgbench's client i plays user (smallest id + i): the users must be one run of ids.
  const ids = users.map((user) => user.id).sort((a, b) => a - b)
  if (ids.at(-1)! - ids[0]! + 1 !== ids.length) {
    console.log("no pgbench yardstick: this run's users do not have contiguous ids (others signed up meanwhile)")
  } else {
    const yardstick = await pgbenchOpenings(new URL(values.database), USERS, SECONDS, ids[0]!)
    console.log(show(`pgbench, ${USERS} clients`, yardstick, "opening"))
    console.log(`ratio service / pgbench: ${(perSecond / yardstick.perSecond).toFixed(2)}`)
  }
}
if (mismatches > 0) process.exitCode = 1
