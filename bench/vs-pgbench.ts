/**
 * The open-case hot path against its database's own speed, in one run on this machine:
 *   1. a fresh PostgreSQL database, the service started on it (and on Redis), users signed in and funded;
 *   2. closed loop: `--users` users open cases back to back for `--seconds`;
 *   3. pgbench runs the SQL of one opening (bench/open-case.pgbench) with as many clients, as long,
 *      on the same database and users: what PostgreSQL alone does for the same work;
 *   4. open loop: openings sent at a fixed `--rate` per second for `--seconds`, latency counted from
 *      each request's scheduled send time (so queueing is not hidden); `--rate 70%` is that share of the
 *      closed loop's throughput measured in step 2 of the same run (the host's speed moves between runs);
 *   5. how cost grows: closed loops at each of `--scales` users.
 * It prints throughputs, the service/pgbench ratio, the latencies, the service's CPU time per request,
 * the database server's and Redis's when they run on this machine, and the load generator's (this process's for
 * the service's loops, pgbench's for its own: it takes the same cores; all from /proc, for pgbench per transaction),
 * and for the service's loops the shares of time its main thread ran on a CPU and waited for one (the cores being
 * busy with the others), then stops the service and drops the database and its Redis keys.
 *
 * `--gc` runs the service with --trace-gc and prints the garbage-collection pauses of the open loop, and when each full
 * collection's marking ran, in the loop's seconds, to lay beside its slow seconds, and the service's peak resident memory
 * (the price of a larger heap, docs/decisions.md "Performance of the hot paths").
 *
 * `--connections N` opens at most N connections to the service (default 1024); requests beyond wait in
 * the client, as behind a load balancer that keeps a bounded pool per instance. Latency still counts from
 * the scheduled time, so that wait is in it.
 *
 * `--warm-up S` (default 60) runs the closed loop for S seconds before anything is measured: after its users
 * sign in, the service needed 40 to 50 s of load before its CPU per opening stopped falling (V8 optimizing the
 * request path, the heap growing to its size), and shorter warm-ups measured that ramp (docs/decisions.md "Warm-up").
 * After it the database is vacuumed and analyzed, as autovacuum would have done by then (it is off on the machines
 * these benches run on; docs/decisions.md "Statistics").
 *
 * `--pin` runs the open loop (and the closed loop's 3 s before it) with the service on core 0 and PostgreSQL, Redis and this
 * load generator on the other cores, then gives them back their cores: the service with a core of its own, as beside
 * a database on other machines (docs/decisions.md "Found: why an opening costs more in an open loop"). The closed
 * loop and pgbench run unpinned, so the rate and the ratio are as without it.
 *
 * `--instances N` starts N instances of the service on the same database and Redis (as N processes behind
 * a load balancer: one per core is how a Node service uses a machine) and sends requests to them in turn.
 *
 *   npm run bench:vs-pgbench -- [--users 64] [--seconds 20] [--rate 400 | --rate 70%] [--scales 1,4,16,64,256] [--warm-up 60] [--connections 1024] [--instances 1]
 *     [--postgres postgres://postgres@127.0.0.1:5432/postgres] [--redis redis://127.0.0.1:6379] [--profile <dir>] [--gc] [--pin]
 */
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import { DEFAULT_CONNECTIONS, type Loop, loopOf, mainThreads, pgbenchOpenings, pinApart, sharedCpu, show, startBench } from "./BenchService"

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "64" },
    seconds: { type: "string", default: "20" },
    "warm-up": { type: "string", default: "60" },
    rate: { type: "string", default: "400" },
    scales: { type: "string", default: "1,4,16,64,256" },
    connections: { type: "string", default: String(DEFAULT_CONNECTIONS) },
    instances: { type: "string", default: "1" },
    postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
    redis: { type: "string", default: "redis://127.0.0.1:6379" },
    /** A folder for a CPU profile of the service (node --cpu-prof), written when it stops. */
    profile: { type: "string" },
    /** Run the service with --trace-gc and print its garbage-collection pauses during the open loop. */
    gc: { type: "boolean", default: false },
    /** Run the open loop with the service on a core of its own. */
    pin: { type: "boolean", default: false }
  }
})
const USERS = Number(values.users)
const SECONDS = Number(values.seconds)
/** The open loop's rate: a number per second, or a share of this run's closed loop ("70%"). */
const rateOf = (closedLoopPerSecond: number) =>
  values.rate.endsWith("%") ? Math.round((Number(values.rate.slice(0, -1)) / 100) * closedLoopPerSecond) : Number(values.rate)
const WARM_UP = Number(values["warm-up"])
const SCALES = values.scales.split(",").filter(Boolean).map(Number)
const MAX_USERS = Math.max(USERS, ...SCALES)
const INSTANCES = Number(values.instances)
const CONNECTIONS = Number(values.connections)

const bench = await startBench({
  postgres: values.postgres,
  redis: values.redis,
  instances: INSTANCES,
  profile: values.profile,
  gcTrace: values.gc,
  connections: CONNECTIONS
})
const starter = (await bench.send("GET", "/api/admin/cases?limit=100", bench.adminSession)).body.cases
  .find((c: { slug: string }) => c.slug === "starter")
if (starter === undefined || String(starter.id) !== "1") throw new Error("the demo catalog's case 1 'starter' is missing")
const { sessions, userIds, seconds: signInSeconds } = await bench.signIn(MAX_USERS)
const open = (i: number) => bench.send("POST", "/api/cases/1/open", sessions[i]!)

/** `users` users opening back to back for `seconds`. */
const closedLoop = (users: number, seconds: number) => bench.closedLoop(users, seconds, (i) => open(i).then((a) => a.status))

/** Why requests of the open loop got no answer (the client's error codes, e.g. ECONNRESET). */
const unanswered = new Set<string>()
/** The open loop's seconds in which some opening took over 100 ms: [second, slowest ms, openings over 100 ms]. */
const slowSeconds: Array<[number, number, number]> = []
/** When the open loop began, on `performance.now()`'s clock: its seconds count from here. */
let openLoopStartedMs = 0
/** Openings sent at `rate` per second for `seconds`, spread over `users` users; latency from the scheduled time. */
const openLoop = async (rate: number, users: number, seconds: number): Promise<Loop> => {
  const latencies: Array<number> = []
  const failures = new Map<number, number>()
  const failed = (status: number) => void failures.set(status, (failures.get(status) ?? 0) + 1)
  const total = Math.round(rate * seconds)
  const started = performance.now()
  openLoopStartedMs = started
  const cpuBefore = bench.serviceCpuMs()
  const [shared, threads] = [sharedCpu(), mainThreads(bench.pids)]
  const inFlight: Array<Promise<void>> = []
  for (let n = 0; n < total; n++) {
    const scheduled = started + (n * 1000) / rate
    const wait = scheduled - performance.now()
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait))
    inFlight.push(open(n % users).then(
      (answer) => {
        if (answer.status !== 200) return failed(answer.status)
        const latency = performance.now() - scheduled
        latencies.push(latency)
        if (latency <= 100) return
        const second = Math.floor((scheduled - started) / 1000)
        const slow = slowSeconds.find(([s]) => s === second)
        if (slow === undefined) slowSeconds.push([second, latency, 1])
        else (slow[1] = Math.max(slow[1], latency), slow[2]++)
      },
      (error: { code?: string }) => {
        failed(0)
        unanswered.add(`${error.code ?? String(error)} at ${Math.floor((scheduled - started) / 1000)} s`)
      }
    ))
  }
  await Promise.all(inFlight)
  return loopOf(latencies, (performance.now() - started) / 1000, failures, {
    cpuMs: (bench.serviceCpuMs() - cpuBefore) / total,
    ...shared.perRequest(total),
    serviceThread: threads.shares()
  })
}

/** pgbench on the same database and users. */
const pgbench = (clients: number, seconds: number) => pgbenchOpenings(bench.databaseUrl, clients, seconds, Math.min(...userIds))

if (INSTANCES > 1) console.log(`${INSTANCES} instances of the service, requests sent to them in turn`)
if (CONNECTIONS !== DEFAULT_CONNECTIONS) console.log(`at most ${CONNECTIONS} connections to the service at once`)
console.log(`${MAX_USERS} users signed in at once in ${signInSeconds.toFixed(1)} s; database ${bench.database}`)
console.log(`warm-up: ${WARM_UP} s of the closed loop, not measured`)
await closedLoop(USERS, WARM_UP)
await bench.vacuum()
const service_ = await closedLoop(USERS, SECONDS)
console.log(show(`service, closed loop, ${USERS} users`, service_))
const yardstick = await pgbench(USERS, SECONDS)
console.log(show(`pgbench, ${USERS} clients`, yardstick))
console.log(`ratio service / pgbench: ${(service_.perSecond / yardstick.perSecond).toFixed(2)}`)
// pgbench has just rolled for the same users, so every user's fairness state the service keeps is
// outdated (its first opening per user writes nothing and reads again): warm up again first, so that
// the open loop measures the service at its rate, not the recovery from what pgbench changed.
const pinned = values.pin ? pinApart(bench.pids) : undefined
const RATE = rateOf(service_.perSecond)
let openLoopResult: Loop
let gcMark = 0
try {
  await closedLoop(USERS, 3)
  gcMark = values.gc ? bench.gcClock() : 0
  openLoopResult = await openLoop(RATE, USERS, SECONDS)
} finally {
  pinned?.restore()
}
console.log(show(`service, open loop at ${RATE}/s${values.rate.endsWith("%") ? ` (${values.rate} of the closed loop)` : ""}${
  pinned === undefined ? "" : ", the service on a core of its own"}`, openLoopResult))
if (values.gc) {
  const { allocatedMb, fullCollectionTimes, fullCollections: full, scavenges } = bench.gcPauses(gcMark)
  const second = (ms: number) => ((ms - openLoopStartedMs) / 1000).toFixed(1)
  console.log(`  garbage collection during it: ${scavenges.count} scavenges (${scavenges.totalMs.toFixed(0)} ms, longest ${
    scavenges.maxMs.toFixed(1)
  } ms), ${full.count} full collections (${full.totalMs.toFixed(0)} ms, longest ${full.maxMs.toFixed(1)} ms); allocated ${
    ((allocatedMb * 1024) / (RATE * SECONDS)).toFixed(0)
  } KB per opening`)
  // To lay beside the slow seconds below (same clock: the loop's start).
  if (fullCollectionTimes.length > 0) {
    console.log(`  full collections, their marking and pause: ${
      fullCollectionTimes.map(({ markingFromMs, pauseAtMs }) => `${second(markingFromMs)}-${second(pauseAtMs)} s`).join(", ")
    }`)
  }
  const peakMb = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024
  console.log(`  the service's peak resident memory so far: ${bench.pids.map((pid) => `${peakMb(pid).toFixed(0)} MB`).join(", ")}`)
}
if (unanswered.size > 0) console.log(`  unanswered: ${[...unanswered].join(", ")}`)
if (slowSeconds.length > 0) {
  // The wall clock of the loop's start, to lay the slow seconds beside other logs (PostgreSQL's checkpoints, say).
  console.log(`  seconds with openings over 100 ms (from ${new Date(performance.timeOrigin + openLoopStartedMs).toISOString()}): ${
    slowSeconds.sort((a, b) => a[0] - b[0]).map(([s, max, n]) => `${s} s (${n}, slowest ${max.toFixed(0)} ms)`).join(", ")
  }`)
}
console.log("how cost grows (closed loop):")
for (const users of SCALES) console.log(show(`  ${users} users`, await closedLoop(users, Math.min(SECONDS, 10))))

await bench.stop()
