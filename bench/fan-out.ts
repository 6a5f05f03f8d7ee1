/**
 * Live-drop fan-out on one instance (issue 35 item 5): `--streams` open `GET /api/live-drops/stream` event
 * streams (five per user, the most one user may hold on an instance, docs/rules.md#stream-limits) while drops
 * are published at `--rate` per second (`POST /api/live-drops/emit`, an open loop) for `--seconds`, on a fresh
 * database with the service started as `npm start` runs it (real PostgreSQL and Redis).
 *
 * `--probes` of the streams parse every event: each drop's delivery time (arrival here less the drop's
 * `createdAt`, one clock) and how many of the acknowledged drops arrived. The others only count their bytes, so
 * that this client keeps up. It prints the delivery percentiles, the streams the service ended (a stream 1000
 * events behind is dropped as `lagging`: the bounded queues of docs/rules.md#stream-limits), and the service's
 * resident memory and CPU, sampled every second.
 *
 *   npm run bench:fan-out -- [--streams 5000] [--rate 200] [--seconds 60] [--probes 50] [--postgres ...] [--redis ...]
 *     [--profile <dir>]
 */
import { request } from "node:http"
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import { percentile, startBench } from "./BenchService"
import { devSessionAt } from "../test/support/DevSignIn"

const { values } = parseArgs({
  options: {
    streams: { type: "string", default: "5000" },
    rate: { type: "string", default: "200" },
    seconds: { type: "string", default: "60" },
    probes: { type: "string", default: "50" },
    postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
    redis: { type: "string", default: "redis://127.0.0.1:6379" },
    profile: { type: "string" }
  }
})
const STREAMS = Number(values.streams)
const RATE = Number(values.rate)
const SECONDS = Number(values.seconds)
const PROBES = Math.min(Number(values.probes), STREAMS)
const STREAMS_PER_USER = 5

const bench = await startBench({ postgres: values.postgres, redis: values.redis, instances: 1, profile: values.profile })
const [pid] = bench.pids

/** Runs `task` for 0..count-1, `width` at a time. */
const inBatches = async <A>(count: number, width: number, task: (i: number) => Promise<A>) => {
  const results: Array<A> = []
  for (let from = 0; from < count; from += width) {
    results.push(...await Promise.all(Array.from({ length: Math.min(width, count - from) }, (_, k) => task(from + k))))
  }
  return results
}

const users = Math.ceil(STREAMS / STREAMS_PER_USER)
console.log(`signing in ${users} users`)
const sessions = await inBatches(users, 50, (i) => devSessionAt(bench.base, `fan-out-${i}`))

interface Probe {
  readonly latencies: Array<number>
  drops: number
}
let bytes = 0
let ended = 0
let lagging = 0
const probes: Array<Probe> = []

/** Opens stream `i`; resolves once its `: connected` comment arrived. */
const open = (i: number) =>
  new Promise<void>((resolve, reject) => {
    const probe: Probe | undefined = i < PROBES ? { latencies: [], drops: 0 } : undefined
    if (probe !== undefined) probes.push(probe)
    let pending = ""
    const req = request(`${bench.base}/api/live-drops/stream`, {
      agent: false,
      headers: { authorization: `Bearer ${sessions[Math.floor(i / STREAMS_PER_USER)]}` }
    }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream ${i}: ${res.statusCode}`))
      res.setEncoding("utf8")
      let connected = false
      let tail = ""
      res.on("data", (chunk: string) => {
        bytes += chunk.length
        if (!connected) {
          connected = true
          resolve()
        }
        // The last bytes of every stream, to tell why it ended.
        tail = (tail + chunk).slice(-200)
        if (probe === undefined) return
        const now = Date.now()
        pending += chunk
        const events = pending.split("\n\n")
        pending = events.pop()!
        for (const event of events) {
          if (!event.startsWith("event: drop\n")) continue
          probe.drops++
          probe.latencies.push(now - Date.parse(JSON.parse(event.slice(event.indexOf("data: ") + 6)).createdAt))
        }
      })
      res.on("end", () => {
        ended++
        if (tail.includes("\"reason\":\"lagging\"")) lagging++
      })
    })
    req.on("error", reject)
    req.end()
  })

console.log(`opening ${STREAMS} streams`)
await inBatches(STREAMS, 100, open)

const admin = (await bench.send("GET", "/api/auth/me", bench.adminSession)).body
const item = (await bench.send("GET", "/api/cases/1", bench.adminSession)).body.items[0]
const residentMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024

const memory: Array<number> = []
const sampler = setInterval(() => memory.push(residentMb()), 1000)
const statuses = new Map<number, number>()
let acknowledged = 0
const cpuBefore = bench.serviceCpuMs()
const started = performance.now()
console.log(`publishing ${RATE} drops/s for ${SECONDS} s`)
// An open loop: each drop at its own time, however long the ones before take.
const sent: Array<Promise<void>> = []
for (let n = 0; n < RATE * SECONDS; n++) {
  const due = started + (n * 1000) / RATE
  const wait = due - performance.now()
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
  sent.push(
    bench.send("POST", "/api/live-drops/emit", bench.adminSession, { userId: admin.id, itemId: item.id, source: "CASE_OPEN" })
      .then(({ status }) => {
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
        if (status === 200) acknowledged++
      }, () => void statuses.set(0, (statuses.get(0) ?? 0) + 1))
  )
}
// The last drops' answers and delivery; an overloaded service gets 10 s more, and what it has not answered by then
// counts as not acknowledged.
await Promise.race([Promise.all(sent), new Promise((resolve) => setTimeout(resolve, 10_000))])
await new Promise((resolve) => setTimeout(resolve, 2000))
const unanswered = RATE * SECONDS - [...statuses.values()].reduce((a, b) => a + b, 0)
clearInterval(sampler)
const elapsed = (performance.now() - started) / 1000
const cpuMs = bench.serviceCpuMs() - cpuBefore

const latencies = probes.flatMap(({ latencies }) => latencies).sort((a, b) => a - b)
const delivered = probes.reduce((sum, { drops }) => sum + drops, 0)
const f = (ms: number | undefined) => (ms ?? NaN).toFixed(0)
console.log(`\n${STREAMS} streams, ${acknowledged} drops acknowledged in ${elapsed.toFixed(1)} s ` +
  `(${(acknowledged / elapsed).toFixed(0)}/s; statuses ${JSON.stringify(Object.fromEntries(statuses))}, ${unanswered} unanswered)`)
console.log(`events written: ${(bytes / 1e6).toFixed(0)} MB received by this client`)
console.log(`probes (${PROBES}): ${delivered} of ${acknowledged * PROBES} drops delivered ` +
  `(${((100 * delivered) / Math.max(1, acknowledged * PROBES)).toFixed(1)} %); delivery ms ` +
  `p50 ${f(percentile(latencies, 0.5))} p99 ${f(percentile(latencies, 0.99))} max ${f(latencies.at(-1))}`)
console.log(`streams ended by the service: ${ended} (${lagging} lagging)`)
console.log(`service CPU: ${(cpuMs / elapsed / 10).toFixed(0)} % of one core; resident memory MB (every 10 s): ` +
  memory.filter((_, i) => i % 10 === 0).map((mb) => mb.toFixed(0)).join(" ") + ` (max ${Math.max(...memory).toFixed(0)})`)
await bench.stop()
process.exit(0)
