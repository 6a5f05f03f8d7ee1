/**
 * Battle benchmark against a running service: 4-player battles of 25 rounds, one after the other.
 * Times the join that fills the last slot (it rolls 100 cases, settles and records everything in
 * one transaction) and checks every player's balance afterwards.
 *
 *   ADMIN_IDP_IDS=bench-admin RATE_LIMIT_GLOBAL=1000000/60000 RATE_LIMIT_AUTH=1000000/60000 PORT=3300 npm start
 *   PORT=3300 npm run bench:battles -- [--battles 30] [--url http://localhost:3300]
 * The service: `--url`, else where the service says it is (PUBLIC_URL, else PORT; scripts/ServiceUrl.ts).
 */
import { performance } from "node:perf_hooks"
import { parseArgs } from "node:util"
import { expectService, serviceUrl } from "../scripts/ServiceUrl"
import { devSessionAt } from "../test/support/DevSignIn"

const { values } = parseArgs({
  options: { url: { type: "string", default: serviceUrl() }, battles: { type: "string", default: "30" } }
})
const base = values.url.replace(/\/+$/, "")
await expectService(base)
const battles = Number(values.battles)

const call = async (path: string, session: string, init: RequestInit = {}) => {
  const response = await fetch(`${base}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${session}`, "content-type": "application/json", ...init.headers }
  })
  return { status: response.status, body: await response.json() as any }
}

const admin = await devSessionAt(base, "bench-admin")
const cases = (await call("/api/cases?limit=100", admin)).body.cases as ReadonlyArray<{ id: string; priceCents: number }>
const cheapest = [...cases].sort((a, b) => a.priceCents - b.priceCents)[0]!
const entry = cheapest.priceCents * 25
const run = Date.now().toString(36)

const players = await Promise.all(Array.from({ length: 4 }, async (_, i) => {
  const session = await devSessionAt(base, `battler-${run}-${i}`)
  const me = (await call("/api/auth/me", session)).body
  const funded = await call(`/api/admin/users/${me.id}/adjust-balance`, admin, {
    method: "POST",
    body: JSON.stringify({ amountCents: entry * battles, reason: "battle benchmark" })
  })
  if (funded.status !== 200) throw new Error(`funding failed: ${JSON.stringify(funded.body)}`)
  return session
}))

const timings: Array<number> = []
for (let b = 0; b < battles; b++) {
  const created = await call("/api/battles", players[0]!, {
    method: "POST",
    body: JSON.stringify({ caseIds: Array(25).fill(cheapest.id), mode: "NORMAL", maxPlayers: 4 })
  })
  if (created.status !== 201) throw new Error(`create failed: ${JSON.stringify(created.body)}`)
  for (const joiner of players.slice(1, 3)) await call(`/api/battles/${created.body.id}/join`, joiner, { method: "POST" })
  const start = performance.now()
  const last = await call(`/api/battles/${created.body.id}/join`, players[3]!, { method: "POST" })
  timings.push(performance.now() - start)
  if (last.body.status !== "FINISHED" || last.body.rounds.length !== 100) throw new Error(`battle did not finish: ${last.status}`)
}
for (const session of players) {
  const balance = (await call("/api/auth/me", session)).body.balanceCents
  if (balance !== 0) throw new Error(`a player's balance is ${balance}, expected 0`)
}
timings.sort((a, b) => a - b)
const at = (q: number) => timings[Math.min(timings.length - 1, Math.floor(q * timings.length))]!.toFixed(1)
console.log(`${battles} battles of 4 players x 25 rounds (case ${cheapest.id}); the last join rolls 100 cases and settles:`)
console.log(`  p50 ${at(0.5)} ms   p99 ${at(0.99)} ms   max ${at(1)} ms; every balance checked`)
