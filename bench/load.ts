/**
 * A small closed-loop load generator against a running service: N connections each send requests
 * back to back for a duration, then it prints throughput, latency percentiles and the status codes.
 *
 *   npm run bench -- --path /api/ready --connections 32 --seconds 10 [--url http://localhost:3000]
 *   [--method POST --body '{"a":1}' --header 'authorization: Bearer ...']
 * The service: `--url`, else BENCH_URL, else where the service says it is (PUBLIC_URL, else PORT; scripts/ServiceUrl.ts).
 */
import { parseArgs } from "node:util"
import { Agent, request } from "node:http"
import { expectService, serviceUrl } from "../scripts/ServiceUrl"

const { values } = parseArgs({
  options: {
    url: { type: "string", default: process.env.BENCH_URL ?? serviceUrl() },
    path: { type: "string", default: "/api/health" },
    method: { type: "string", default: "GET" },
    body: { type: "string" },
    header: { type: "string", multiple: true, default: [] },
    connections: { type: "string", default: "32" },
    seconds: { type: "string", default: "10" }
  }
})

const target = new URL(values.path, values.url)
await expectService(target.origin)
const connections = Number(values.connections)
const durationMs = Number(values.seconds) * 1000
const headers: Record<string, string> = Object.fromEntries(
  values.header.map((h) => [h.slice(0, h.indexOf(":")).trim(), h.slice(h.indexOf(":") + 1).trim()])
)
if (values.body !== undefined) headers["content-type"] ??= "application/json"
const agent = new Agent({ keepAlive: true, maxSockets: connections })

const once = () =>
  new Promise<number>((resolve, reject) => {
    const req = request(target, { method: values.method, headers, agent }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    })
    req.on("error", reject)
    req.end(values.body)
  })

const latencies: Array<number> = []
const statuses = new Map<number, number>()
let errors = 0
const deadline = performance.now() + durationMs

const worker = async () => {
  while (performance.now() < deadline) {
    const start = performance.now()
    try {
      const status = await once()
      latencies.push(performance.now() - start)
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
    } catch {
      errors++
    }
  }
}

const started = performance.now()
await Promise.all(Array.from({ length: connections }, worker))
const elapsed = (performance.now() - started) / 1000
agent.destroy()

latencies.sort((a, b) => a - b)
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]?.toFixed(2)
console.log(`${values.method} ${target.href}  ${connections} connections, ${elapsed.toFixed(1)} s`)
console.log(`requests: ${latencies.length}  (${(latencies.length / elapsed).toFixed(0)} req/s), errors: ${errors}`)
console.log(`latency ms: p50 ${pct(0.5)}  p95 ${pct(0.95)}  p99 ${pct(0.99)}  max ${latencies.at(-1)?.toFixed(2)}`)
console.log(`statuses: ${[...statuses].map(([s, n]) => `${s}=${n}`).join(" ")}`)
