/**
 * Case openings under load: many signed-in users open cases concurrently against a running service
 * (embedded development sign-in), then it prints throughput, latency percentiles and status codes,
 * and checks the money: every user's balance equals their funding minus what their openings cost.
 *
 * Start the service with the limits raised and an administrator for funding, e.g.
 *   DATABASE_URL=... REDIS_URL=... ADMIN_IDP_IDS=bench-admin RATE_LIMIT_GLOBAL=1000000/60000 \
 *     RATE_LIMIT_CASE_OPEN=1000000/60000 npm start
 *   npm run bench:openings -- --users 40 --seconds 20 [--case starter] [--url http://localhost:3000]
 * The service: `--url`, else BENCH_URL, else where the service says it is (PUBLIC_URL, else PORT; scripts/ServiceUrl.ts).
 */
import { parseArgs } from "node:util"
import { expectService, serviceUrl } from "../scripts/ServiceUrl"
import { devSessionAt } from "../test/support/DevSignIn"

const { values } = parseArgs({
  options: {
    url: { type: "string", default: process.env.BENCH_URL ?? serviceUrl() },
    users: { type: "string", default: "40" },
    seconds: { type: "string", default: "20" },
    case: { type: "string", default: "starter" }
  }
})
const base = values.url.replace(/\/+$/, "")
await expectService(base)
const run = `${Date.now().toString(36)}`

/** A session id for `login`, through the real sign-in flow. */
const signIn = (login: string) => devSessionAt(base, login)

const call = async (path: string, session: string, init: RequestInit = {}) => {
  const response = await fetch(`${base}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${session}`, "content-type": "application/json", ...init.headers }
  })
  return { status: response.status, body: await response.json() as any }
}

const admin = await signIn("bench-admin")
const caseList = await call("/api/admin/cases", admin)
if (caseList.status !== 200) throw new Error(`GET /api/admin/cases: ${caseList.status} (is ADMIN_IDP_IDS=bench-admin set?)`)
const target = (caseList.body.cases ?? caseList.body).find((c: { slug: string }) => c.slug === values.case)
if (!target) throw new Error(`no case with slug ${values.case}`)
const price = Number(target.priceCents)

const funding = 100_000_000
const users = await Promise.all(Array.from({ length: Number(values.users) }, async (_, i) => {
  const session = await signIn(`bench-${run}-${i}`)
  const me = (await call("/api/auth/me", session)).body
  const funded = await call(`/api/admin/users/${me.id}/adjust-balance`, admin, {
    method: "POST",
    body: JSON.stringify({ amountCents: funding, reason: "benchmark" })
  })
  if (funded.status !== 200) throw new Error(`funding failed: ${JSON.stringify(funded.body)}`)
  return { session, opened: 0 }
}))

const latencies: Array<number> = []
const statuses = new Map<number, number>()
const deadline = performance.now() + Number(values.seconds) * 1000
const started = performance.now()
await Promise.all(users.map(async (user) => {
  while (performance.now() < deadline) {
    const t0 = performance.now()
    const { status } = await call(`/api/cases/${target.id}/open`, user.session, { method: "POST" })
    latencies.push(performance.now() - t0)
    statuses.set(status, (statuses.get(status) ?? 0) + 1)
    if (status === 200) user.opened++
  }
}))
const elapsed = (performance.now() - started) / 1000

let mismatches = 0
for (const user of users) {
  const balance = Number((await call("/api/auth/me", user.session)).body.balanceCents)
  if (balance !== funding - user.opened * price) mismatches++
}

latencies.sort((a, b) => a - b)
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!.toFixed(1)
console.log(`POST /api/cases/${target.id}/open (${target.slug}, ${price} cents): ${users.length} users, ${elapsed.toFixed(1)} s`)
console.log(`openings: ${latencies.length} (${(latencies.length / elapsed).toFixed(0)}/s)`)
console.log(`latency ms: p50 ${pct(0.5)}  p95 ${pct(0.95)}  p99 ${pct(0.99)}  max ${latencies.at(-1)!.toFixed(1)}`)
console.log(`statuses: ${[...statuses].map(([s, n]) => `${s}=${n}`).join(" ")}`)
console.log(`balances that do not match their openings: ${mismatches}`)
