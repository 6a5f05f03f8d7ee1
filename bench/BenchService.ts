/**
 * What the service benchmarks share: a fresh PostgreSQL database with the service started on it (as
 * `npm start` runs it, with limits raised), users signed in through the development identity provider
 * and funded, requests over kept-alive connections, closed loops, and the service's CPU time per request.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import pg from "pg"
import { type Dispatcher, Pool } from "undici"
import { devSessionAt } from "../test/support/DevSignIn"
import { removeRedisKeys } from "../test/support/TestStores"
import { serviceArgs } from "./serviceCommand"

/** How many connections the benchmarks' client opens at most, unless told otherwise. */
export const DEFAULT_CONNECTIONS = 1024

export interface BenchOptions {
  /** An administrator's connection string; the benchmark's database is created next to it. */
  readonly postgres: string
  readonly redis: string
  /** How many instances of the service on the same database and Redis; requests go to them in turn. */
  readonly instances: number
  /**
   * The bundle each instance runs, by instance (default: this checkout's dist/main.mjs, built first), e.g. two
   * builds side by side on one database and Redis (`bench:ab`).
   */
  readonly bundles?: ReadonlyArray<string> | undefined
  /** A folder for CPU profiles of the service (node --cpu-prof), written when it stops. */
  readonly profile?: string | undefined
  /** Run the service with --trace-gc, so that `gcPauses` can tell its garbage collections. */
  readonly gcTrace?: boolean | undefined
  /**
   * At most this many connections open at once, to all instances together (default DEFAULT_CONNECTIONS).
   * Requests beyond wait in this client for a free connection, as they would in a load balancer's pool.
   */
  readonly connections?: number | undefined
}

/** The service's garbage collections in some span of time (from its --trace-gc lines). */
export interface GcPauses {
  /** Young-generation collections (scavenges): how many, their total and longest pause in ms. */
  readonly scavenges: { readonly count: number; readonly totalMs: number; readonly maxMs: number }
  /** Full collections (mark-compact): how many, their total and longest pause in ms. */
  readonly fullCollections: { readonly count: number; readonly totalMs: number; readonly maxMs: number }
  /** What the service allocated in that time, in MB: the heap's growth from one collection to the next. */
  readonly allocatedMb: number
  /**
   * Each full collection on this process's `performance.now()` clock (within the ~10 ms a process takes to start
   * its isolate): when its concurrent marking began (when V8 logged it) and its final pause.
   */
  readonly fullCollectionTimes: ReadonlyArray<{ readonly markingFromMs: number; readonly pauseAtMs: number }>
}

export interface Answer {
  readonly status: number
  readonly body: any
}

export interface Loop {
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
  /** Answers other than 2xx by status (0: no answer), e.g. 409 when a user's lock stayed busy for 5 s. */
  readonly failures?: Map<number, number>
  /** The service's CPU time (user + system) per request, in ms. */
  readonly cpuMs?: number
  /** The PostgreSQL server's CPU time per request, in ms, when it runs on this machine. */
  readonly databaseCpuMs?: number | undefined
  /** The Redis server's CPU time per request, in ms, when it runs on this machine (the service's loops). */
  readonly redisCpuMs?: number | undefined
  /**
   * The load generator's CPU time per request, in ms: this process's for the service's loops, pgbench's for its own.
   * It runs on the same cores as the service and PostgreSQL, so what it takes they do not get.
   */
  readonly clientCpuMs?: number
  /**
   * The service's main thread (its JavaScript; the mean over the instances) as shares of the loop's time: running
   * on a CPU, and ready to run but waiting for one that PostgreSQL, Redis or the load generator held.
   */
  readonly serviceThread?: ThreadShares | undefined
}

export interface ThreadShares {
  readonly onCpu: number
  readonly waiting: number
}

export interface SignedIn {
  readonly sessions: ReadonlyArray<string>
  readonly userIds: ReadonlyArray<number>
  readonly seconds: number
}

/**
 * A process's name and its CPU times from /proc/<pid>/stat (Linux), in ms (clock ticks of 10 ms): its own (user +
 * system) and its ended children's that it waited for (cutime + cstime). Undefined when the process ended meanwhile.
 */
const procStat = (pid: string) => {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  } catch {
    return undefined
  }
  // The name is in parentheses and may hold spaces; after it: state, ppid, ...; utime, stime, cutime and cstime
  // are the 12th to 15th fields.
  const close = stat.lastIndexOf(")")
  const fields = stat.slice(close + 2).split(" ").map(Number)
  return {
    name: stat.slice(stat.indexOf("(") + 1, close),
    ownMs: (fields[11]! + fields[12]!) * 10,
    endedChildrenMs: (fields[13]! + fields[14]!) * 10
  }
}

/**
 * The CPU time so far of the processes named `name` on this machine, in ms (undefined when none runs): their own
 * time and their ended children's (a PostgreSQL server's backends that ended, e.g. pgbench's connections).
 */
const serverCpuMs = (name: string): number | undefined => {
  let total: number | undefined
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    const stat = procStat(pid)
    if (stat?.name === name) total = (total ?? 0) + stat.ownMs + stat.endedChildrenMs
  }
  return total
}

/** The CPU time of the PostgreSQL servers running on this machine so far, in ms (undefined when none runs here). */
const databaseCpuMs = () => serverCpuMs("postgres")

/** This process's CPU time (user + system) so far, in ms. */
const ownCpuMs = () => {
  const { system, user } = process.cpuUsage()
  return (user + system) / 1000
}

/**
 * What PostgreSQL, Redis (the servers running on this machine) and this process, the service's load generator,
 * spend from now on: `perRequest(n)` gives each one's CPU ms per request over the `n` requests sent since.
 */
export const sharedCpu = () => {
  const [database, redis, client] = [databaseCpuMs(), serverCpuMs("redis-server"), ownCpuMs()]
  return {
    perRequest: (requests: number): { databaseCpuMs: number | undefined; redisCpuMs: number | undefined; clientCpuMs: number } => ({
      databaseCpuMs: perRequest(database, databaseCpuMs(), requests),
      redisCpuMs: perRequest(redis, serverCpuMs("redis-server"), requests),
      clientCpuMs: (ownCpuMs() - client) / requests
    })
  }
}

/** A loop's figures: the answered requests' latencies (sorted here), how long it ran, what failed and its CPU. */
export const loopOf = (
  latencies: Array<number>,
  seconds: number,
  failures: Map<number, number>,
  cpu: Pick<Loop, "cpuMs" | "databaseCpuMs" | "redisCpuMs" | "clientCpuMs" | "serviceThread">
): Loop => {
  latencies.sort((a, b) => a - b)
  return {
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    errors: [...failures.values()].reduce((a, b) => a + b, 0),
    failures,
    ...cpu
  }
}

/** A process's CPU time (user + system) so far, in ms; throws when it no longer runs. */
export const processCpuMs = (pid: number) => {
  const stat = procStat(String(pid))
  if (stat === undefined) throw new Error(`process ${pid} no longer runs`)
  return stat.ownMs
}

/** A process's main thread so far (Linux /proc/<pid>/task/<pid>/schedstat): ns on a CPU and ns waiting for one. */
const mainThreadNs = (pid: number) => {
  const [onCpu, waiting] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ").map(Number)
  return { onCpu: onCpu!, waiting: waiting! }
}

/** From now on, the main threads of the processes `pids`: `shares()` gives their mean `ThreadShares` since. */
export const mainThreads = (pids: ReadonlyArray<number>) => {
  const [before, started] = [pids.map(mainThreadNs), performance.now()]
  return {
    shares: (): ThreadShares => {
      const wallNs = (performance.now() - started) * 1e6 * pids.length
      const after = pids.map(mainThreadNs)
      const sum = (key: keyof ThreadShares) => after.reduce((total, now, i) => total + now[key] - before[i]![key], 0)
      return { onCpu: sum("onCpu") / wallNs, waiting: sum("waiting") / wallNs }
    }
  }
}

/** The ids of the processes named `name` on this machine. */
const pidsNamed = (name: string) => readdirSync("/proc").filter((pid) => /^\d+$/.test(pid) && procStat(pid)?.name === name)

/**
 * Gives the service's processes `servicePids` core 0 of this machine and everything else the benches run on it the
 * other cores: PostgreSQL's and Redis's servers running here (their threads, and the backends PostgreSQL starts
 * later, which inherit the postmaster's cores) and this process, the load generator. As in production, where the
 * database is on machines of its own: on one shared machine a service idle between requests finds its core's
 * caches filled by the others (docs/decisions.md "Found: why an opening costs more in an open loop"). Uses
 * `taskset` (Linux); `restore()` gives every process back the cores it had. Throws with fewer than 2 cores.
 */
export const pinApart = (servicePids: ReadonlyArray<number>) => {
  const cores = readFileSync("/proc/self/status", "utf8").match(/^Cpus_allowed_list:\s*(\S+)$/m)?.[1]
  const count = cpus().length
  if (count < 2 || cores === undefined) throw new Error("--pin needs at least 2 cores")
  const others = [...pidsNamed("postgres"), ...pidsNamed("redis-server"), String(process.pid)]
  const set = (cpus: string, pid: string | number) => {
    try {
      execFileSync("taskset", ["--all-tasks", "--cpu-list", "--pid", cpus, String(pid)], { stdio: "ignore" })
    } catch {
      // A backend that ended meanwhile.
    }
  }
  for (const pid of servicePids) set("0", pid)
  for (const pid of others) set(`1-${count - 1}`, pid)
  return {
    restore: () => {
      for (const pid of [...servicePids, ...others, ...pidsNamed("postgres")]) set(cores, pid)
    }
  }
}

/**
 * The CPU time (user + system) of this process's children that ended and were waited for, in ms: pgbench's, read
 * before and after it runs.
 */
const endedChildrenCpuMs = () => procStat("self")!.endedChildrenMs

/** A CPU time's growth from `before` to `after` over `requests` requests, if both were read. */
export const perRequest = (before: number | undefined, after: number | undefined, requests: number) =>
  before === undefined || after === undefined ? undefined : (after - before) / requests

/**
 * Requests over kept-alive connections (at most `connections` at once), to `bases` in turn as a round-robin load
 * balancer would: undici's pools, whose CPU per request is about half of node:http's (and a fraction of `fetch`'s),
 * so that the client takes less of the cores the service and PostgreSQL share on one machine (docs/decisions.md
 * "The load generator's share").
 */
export const makeSender = (bases: ReadonlyArray<string>, connections = DEFAULT_CONNECTIONS) => {
  // Idle connections are dropped after 4 s, before the service closes them (after 5 s): a request sent
  // on a connection the service is closing at that moment would fail without an answer.
  const pools = bases.map((base) =>
    new Pool(base, { connections: Math.ceil(connections / bases.length), keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000 })
  )
  let sent = 0
  /** A request to instance `to`. */
  const sendTo = async (to: number, method: string, path: string, session: string, body?: unknown): Promise<Answer> => {
    const answer = await pools[to]!.request({
      method: method as Dispatcher.HttpMethod,
      path,
      headers: { authorization: `Bearer ${session}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? null : JSON.stringify(body)
    })
    const text = await answer.body.text()
    return { status: answer.statusCode, body: text ? JSON.parse(text) : undefined }
  }
  /** A request to the instances in turn. */
  const send = (method: string, path: string, session: string, body?: unknown) =>
    sendTo(sent++ % pools.length, method, path, session, body)
  return { send, sendTo, close: () => void Promise.all(pools.map((pool) => pool.destroy())) }
}

/**
 * What autovacuum would have done by now on the database of `databaseUrl`: `VACUUM (ANALYZE)`. PostgreSQL on the
 * machines these benches run on has autovacuum off, and a fresh database's tables were never analyzed: PostgreSQL
 * plans their statements from guesses (a hash join over a sequential scan where an index would serve), and the
 * service's prepared statements keep such a plan until an ANALYZE replans them (docs/decisions.md "Statistics").
 */
export const vacuum = async (databaseUrl: URL) => {
  const client = new pg.Client({ connectionString: databaseUrl.href })
  await client.connect()
  try {
    await client.query("VACUUM (ANALYZE)")
  } finally {
    await client.end()
  }
}

/**
 * pgbench on bench/open-case.pgbench (the SQL of one opening of the demo catalog's case 1): `clients` clients for
 * `seconds` on the database of `databaseUrl`, client i playing user `firstUserId` + i (the users must be funded and
 * their ids contiguous). Its transactions per second and latencies, and PostgreSQL's CPU per transaction when it runs
 * on this machine. Runs without blocking this process: a blocked event loop keeps the client's idle connections past
 * the service's keep-alive timeout, and the next request on one of them fails.
 */
export const pgbenchOpenings = async (databaseUrl: URL, clients: number, seconds: number, firstUserId: number): Promise<Loop> => {
  const logs = mkdtempSync(join(tmpdir(), "gp-pgbench-"))
  try {
    const databaseBefore = databaseCpuMs()
    const clientBefore = endedChildrenCpuMs()
    const { stdout: output } = await promisify(execFile)("pgbench", [
      "-h", databaseUrl.hostname, "-p", databaseUrl.port || "5432", "-U", decodeURIComponent(databaseUrl.username || "postgres"),
      "-n", "-M", "prepared", "-c", String(clients), "-j", "2", "-T", String(seconds),
      "-D", `ubase=${firstUserId}`, "-f", "bench/open-case.pgbench",
      "-l", "--log-prefix", join(logs, "tx"), decodeURIComponent(databaseUrl.pathname.slice(1))
    ], { encoding: "utf8", cwd: process.cwd() })
    const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(output)?.[1])
    const failed = Number(/number of failed transactions: (\d+)/.exec(output)?.[1] ?? 0)
    const processed = Number(/number of transactions actually processed: (\d+)/.exec(output)?.[1])
    const latencies = readdirSync(logs).flatMap((file) =>
      readFileSync(join(logs, file), "utf8").trim().split("\n").map((line) => Number(line.split(" ")[2]) / 1000)
    ).sort((a, b) => a - b)
    return {
      perSecond: tps,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      errors: failed,
      databaseCpuMs: perRequest(databaseBefore, databaseCpuMs(), processed + failed),
      clientCpuMs: (endedChildrenCpuMs() - clientBefore) / (processed + failed)
    }
  } finally {
    rmSync(logs, { recursive: true, force: true })
  }
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

export const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN

/** The service thread's shares as the benches print them. */
export const threadSharesText = (shares: ThreadShares) =>
  `service thread on a CPU ${(100 * shares.onCpu).toFixed(0)} %, waiting for one ${(100 * shares.waiting).toFixed(0)} %`

export const show = (name: string, loop: Loop, unit = "request") =>
  `${name.padEnd(34)} ${loop.perSecond.toFixed(0).padStart(6)}/s   p50 ${loop.p50.toFixed(1).padStart(6)} ms   p99 ${
    loop.p99.toFixed(1).padStart(6)
  } ms${loop.cpuMs === undefined ? "" : `   service CPU ${loop.cpuMs.toFixed(2)} ms/${unit}`}${
    loop.databaseCpuMs === undefined ? "" : `   database CPU ${loop.databaseCpuMs.toFixed(2)} ms/${unit}`
  }${loop.redisCpuMs === undefined ? "" : `   Redis CPU ${loop.redisCpuMs.toFixed(2)} ms/${unit}`}${loop.clientCpuMs === undefined ? "" : `   client CPU ${loop.clientCpuMs.toFixed(2)} ms/${unit}`}${
    loop.serviceThread === undefined ? "" : `   ${threadSharesText(loop.serviceThread)}`
  }${
    loop.errors ? `   errors ${loop.errors}` : ""
  }${loop.failures?.size ? ` (${[...loop.failures].map(([status, n]) => `${status}: ${n}`).join(", ")})` : ""}`

export const startBench = async (options: BenchOptions) => {
  const adminUrl = new URL(options.postgres)
  const database = `gp_bench_${randomBytes(4).toString("hex")}`
  const admin = new pg.Client({ connectionString: adminUrl.href })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  const databaseUrl = new URL(adminUrl.href)
  databaseUrl.pathname = `/${database}`

  const dir = mkdtempSync(join(tmpdir(), "gp-bench-"))
  // The service as `npm start` runs it, from its bundle.
  execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" })
  const profiling = [
    ...(options.profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", options.profile]),
    ...(options.gcTrace ? ["--trace-gc"] : [])
  ]

  const startInstance = async (n: number) => {
    const [port, idpPort] = [await freePort(), await freePort()]
    const base = `http://127.0.0.1:${port}`
    const logFile = join(dir, `service-${n}.log`)
    const log = openSync(logFile, "a")
    // --trace-gc stamps its lines with ms since the process started: this is that start on our clock.
    const spawnedAtMs = performance.now()
    const bundle = options.bundles?.[n]
    const args = bundle === undefined ? serviceArgs : serviceArgs.map((arg) => arg === "dist/main.mjs" ? bundle : arg)
    const child: ChildProcess = spawn(process.execPath, [...profiling, ...args], {
      env: {
        ...process.env,
        NODE_ENV: "development",
        DATABASE_URL: databaseUrl.href,
        REDIS_URL: options.redis,
        REDIS_KEY_PREFIX: `${database}:`,
        PORT: String(port),
        PUBLIC_URL: base,
        DEV_IDP_PORT: String(idpPort),
        DATA_DIR: join(dir, `data-${n}`),
        ADMIN_IDP_IDS: "bench-admin",
        LOG_LEVEL: "Warn",
        RATE_LIMIT_GLOBAL: "1000000000/60000",
        RATE_LIMIT_AUTH: "1000000000/60000",
        RATE_LIMIT_CASE_OPEN: "1000000000/60000"
      },
      stdio: ["ignore", log, log]
    })
    return { base, process: child, log: logFile, spawnedAtMs }
  }
  const instances = await Promise.all(Array.from({ length: options.instances }, (_, n) => startInstance(n)))
  const base = instances[0]!.base

  const cleanUp = async () => {
    await Promise.all(instances.map(({ process: child }) => {
      child.kill("SIGTERM")
      return new Promise((resolve) => child.exitCode !== null ? resolve(null) : child.once("exit", resolve))
    }))
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    await admin.end()
    // The service's Redis keys (sessions, counters) live under the database's name.
    await removeRedisKeys(options.redis, `${database}:`)
    rmSync(dir, { recursive: true, force: true })
  }
  process.on("SIGINT", () => void cleanUp().finally(() => process.exit(130)))

  for (const instance of instances) {
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${instance.base}/api/ready`)).status === 200) break
      } catch {
        // not listening yet
      }
      if (i > 1200) throw new Error(`the service did not start:\n${readFileSync(instance.log, "utf8")}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  const sender = makeSender(instances.map((instance) => instance.base), options.connections)
  const { send, sendTo } = sender

  const adminSession = await devSessionAt(base, "bench-admin")

  /** `count` users signed in at once, as many users arriving together would, each funded with R$ 10 000 000. */
  const signIn = async (count: number): Promise<SignedIn> => {
    const started = performance.now()
    const sessions = await Promise.all(Array.from({ length: count }, (_, i) => devSessionAt(base, `bench-user-${i}`)))
    const seconds = (performance.now() - started) / 1000
    const userIds: Array<number> = []
    for (const session of sessions) {
      const me = (await send("GET", "/api/auth/me", session)).body
      userIds.push(Number(me.id))
      const funded = await send("POST", `/api/admin/users/${me.id}/adjust-balance`, adminSession, {
        amountCents: 1_000_000_000,
        reason: "benchmark"
      })
      if (funded.status !== 200) throw new Error(`funding failed: ${JSON.stringify(funded.body)}`)
    }
    return { sessions, userIds, seconds }
  }

  /** The service processes' CPU time so far, in ms (Linux: /proc/<pid>/stat, in clock ticks of 10 ms). */
  const serviceCpuMs = () => instances.reduce((total, { process: child }) => total + processCpuMs(child.pid!), 0)

  /**
   * `users` users each running `step` back to back for `seconds` (or until their step answers
   * undefined: nothing left to do). A step is one measured operation, which may be several requests:
   * it answers the status of the one that counts.
   */
  const closedLoop = async (
    users: number,
    seconds: number,
    step: (user: number) => Promise<number | undefined>
  ): Promise<Loop> => {
    const latencies: Array<number> = []
    const failures = new Map<number, number>()
    const deadline = performance.now() + seconds * 1000
    const started = performance.now()
    const cpuBefore = serviceCpuMs()
    const [shared, threads] = [sharedCpu(), mainThreads(instances.map(({ process: child }) => child.pid!))]
    await Promise.all(Array.from({ length: users }, async (_, user) => {
      while (performance.now() < deadline) {
        const t = performance.now()
        const status = await step(user).catch(() => 0)
        if (status === undefined) return
        if (status >= 200 && status < 300) latencies.push(performance.now() - t)
        else failures.set(status, (failures.get(status) ?? 0) + 1)
      }
    }))
    const errors = [...failures.values()].reduce((a, b) => a + b, 0)
    return loopOf(latencies, (performance.now() - started) / 1000, failures, {
      cpuMs: (serviceCpuMs() - cpuBefore) / (latencies.length + errors),
      ...shared.perRequest(latencies.length + errors),
      serviceThread: threads.shares()
    })
  }

  /**
   * The garbage collections the service logged after `sinceMs` of its lifetime (--trace-gc stamps each
   * line with ms since the process started), e.g. `gcPauses(gcClock())` before a phase and after it.
   * A line reads `[pid:0x…]  5838 ms: Scavenge 213.7 (307.8) -> 124.8 (266.2) MB, pooled: 0 MB, 34.70 / 0.02 ms …`:
   * the heap before and after it, and its pause (the figure before the slash); a full collection's line also says
   * how long before its pause its marking began (`walltime since start of marking 180 ms`).
   */
  const gcLinesOf = (log: string) =>
    readFileSync(log, "utf8").split("\n").flatMap((line) => {
      const found = /\s(\d+) ms: (Scavenge|Mark-Compact) ([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB.*?, ([\d.]+) \/ [\d.]+ ms/
        .exec(line)
      return found === null ? [] : [{
        atMs: Number(found[1]),
        kind: found[2]!,
        beforeMb: Number(found[3]),
        afterMb: Number(found[4]),
        pauseMs: Number(found[5]),
        markingMs: Number(/walltime since start of marking ([\d.]+) ms/.exec(line)?.[1] ?? 0)
      }]
    })
  /** The latest --trace-gc time stamp: a mark for `gcPauses`. */
  const gcClock = () => Math.max(0, ...instances.flatMap(({ log }) => gcLinesOf(log).map(({ atMs }) => atMs)))
  const gcPauses = (sinceMs: number): GcPauses => {
    const perInstance = instances.map(({ log }) => gcLinesOf(log))
    const lines = perInstance.flat().filter(({ atMs }) => atMs > sinceMs)
    const fullCollectionTimes = instances.flatMap(({ spawnedAtMs }, i) =>
      perInstance[i]!.filter(({ atMs, kind }) => kind === "Mark-Compact" && atMs > sinceMs)
        .map(({ atMs, markingMs }) => ({ markingFromMs: spawnedAtMs + atMs - markingMs, pauseAtMs: spawnedAtMs + atMs }))
    )
    const sum = (kind: string) => {
      const pauses = lines.filter((line) => line.kind === kind).map(({ pauseMs }) => pauseMs)
      return { count: pauses.length, totalMs: pauses.reduce((a, b) => a + b, 0), maxMs: Math.max(0, ...pauses) }
    }
    // Allocated between two collections: the heap before the second less the heap after the first.
    const allocatedMb = perInstance.reduce((total, all) =>
      all.reduce((sum, line, i) =>
        i > 0 && line.atMs > sinceMs ? sum + Math.max(0, line.beforeMb - all[i - 1]!.afterMb) : sum, total), 0)
    return { scavenges: sum("Scavenge"), fullCollections: sum("Mark-Compact"), allocatedMb, fullCollectionTimes }
  }

  const stop = async () => {
    sender.close()
    await cleanUp()
  }

  return { database, databaseUrl, dir, base, pids: instances.map(({ process: child }) => child.pid!), adminSession, send, sendTo, signIn, serviceCpuMs, closedLoop, gcClock, gcPauses, vacuum: () => vacuum(databaseUrl), stop }
}
