/**
 * Private Redis set-ups started from the `redis-server` binary on free loopback ports, in a temporary directory
 * of their own (docs/operations.md#redis-high-availability): a Sentinel set-up (a primary, a replica, three
 * sentinels) and a 3-primary Redis Cluster. `stop` kills exactly the processes started here (SIGKILL, through
 * their ChildProcess handles) and removes the directory. Used by test/stores/topologies.test.ts, bench/faults.ts and,
 * a single node, test/http/RedisRoundTrips.test.ts.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Redis } from "ioredis"
import { freePort } from "./ServiceProcess"

export const hasRedisServer = spawnSync("redis-server", ["--version"]).status === 0

/**
 * Why the tests that start redis-servers of their own are skipped here, if they are: they need the binary, and run in
 * the real-servers run only (REDIS_URL set, as in .ci/run's second `npm test`).
 */
export const privateRedisSkipped: string | undefined = !hasRedisServer
  ? "skipped: no redis-server binary on the PATH"
  : process.env.REDIS_URL === undefined
  ? "skipped: runs in the real-servers run (REDIS_URL set)"
  : undefined

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Polls `check` until it holds; fails with `what` after `limitMs` (a set-up that never comes up), or at once when
 * `gone` says what it waits for can no longer happen.
 */
const until = async (what: string, check: () => Promise<boolean>, limitMs = 30_000, gone: () => boolean = () => false) => {
  const started = Date.now()
  while (Date.now() - started < limitMs && !gone()) {
    try {
      if (await check()) return
    } catch {
      // not up yet
    }
    await sleep(50)
  }
  throw new Error(`Redis set-up: ${what} did not happen ${gone() ? "(the process exited)" : `within ${limitMs / 1000} s`}`)
}

/** One command on a short-lived connection (no retries: a dead node is an error at once). */
const ask = async (port: number, ...command: [string, ...Array<string>]): Promise<unknown> => {
  const redis = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  redis.on("error", () => {})
  try {
    await redis.connect()
    return await redis.call(...command)
  } finally {
    redis.disconnect()
  }
}

const infoField = (info: unknown, field: string) => new RegExp(`^${field}:(.*)$`, "m").exec(String(info))?.[1]?.trim()

interface Server {
  readonly port: number
  readonly process: ChildProcess
}

class Processes {
  readonly dir = mkdtempSync(join(tmpdir(), "gp-redis-"))
  private readonly started: Array<ChildProcess> = []

  /**
   * A redis-server (or sentinel) on a port from `choosePort`, once it answers PING. A free port can be taken by
   * another process before the server binds it, so a server that exits before answering is started again on another
   * port (three tries); the last one's log is in the error.
   */
  async server(args: (port: number) => ReadonlyArray<string>, choosePort: () => Promise<number> = freePort): Promise<Server> {
    for (let attempt = 1;; attempt++) {
      const port = await choosePort()
      const log = join(this.dir, `${port}.log`)
      const child = spawn("redis-server", [...args(port), "--port", String(port), "--bind", "127.0.0.1", "--dir", this.dir,
        "--logfile", log], { stdio: "ignore" })
      this.started.push(child)
      const exited = () => child.exitCode !== null || child.signalCode !== null
      try {
        await until(`redis-server on port ${port}`, async () => (await ask(port, "PING")) === "PONG", 30_000, exited)
        return { port, process: child }
      } catch (error) {
        if (exited() && attempt < 3) continue
        const tail = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").slice(-5).join("\n") : "(no log)"
        throw new Error(`${(error as Error).message}; its log ends:\n${tail}`)
      }
    }
  }

  kill(server: Server): Promise<void> {
    if (server.process.exitCode !== null || server.process.signalCode !== null) return Promise.resolve()
    return new Promise((resolve) => {
      server.process.once("exit", () => resolve())
      server.process.kill("SIGKILL")
    })
  }

  /** Synchronous, so that a process's exit handler can call it too. */
  stop(): void {
    for (const child of this.started) child.kill("SIGKILL")
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/** Data nodes keep nothing on disk: these set-ups live for one run. */
const EPHEMERAL = ["--save", "", "--appendonly", "no"]

export interface NodeSetup {
  readonly port: number
  /** REDIS_URL for this node. */
  readonly url: string
  readonly stop: () => void
}

/** One Redis node of its own, for a test that reads the server's counters (which others would disturb). */
export const startNode = async (): Promise<NodeSetup> => {
  const processes = new Processes()
  try {
    const { port } = await processes.server(() => EPHEMERAL)
    return { port, url: `redis://127.0.0.1:${port}`, stop: () => processes.stop() }
  } catch (error) {
    processes.stop()
    throw error
  }
}

export interface SentinelSetup {
  readonly sentinels: ReadonlyArray<{ readonly host: string; readonly port: number }>
  /** The monitored primary's name. */
  readonly name: string
  /** REDIS_SENTINELS for this set-up. */
  readonly variable: string
  /** The port of the current primary, as the sentinels report it. */
  readonly primaryPort: () => Promise<number>
  /** Waits until the replica has every write the primary has (their replication offsets are equal). */
  readonly replicated: () => Promise<void>
  /** Kills the current primary (SIGKILL); resolves once the sentinels name the replica as the new primary. */
  readonly failOver: () => Promise<void>
  readonly stop: () => void
}

/**
 * A primary, one replica and three sentinels (quorum 2: a fail-over needs two sentinels to agree, and one
 * sentinel lost still leaves a majority). The primary is declared down after 1 s without an answer, so a
 * fail-over takes a few seconds.
 */
export const startSentinelSetup = async (name = "gp-test"): Promise<SentinelSetup> => {
  const processes = new Processes()
  try {
    const primary = await processes.server(() => EPHEMERAL)
    const replica = await processes.server(() => [...EPHEMERAL, "--replicaof", "127.0.0.1", String(primary.port)])
    await until("replication", async () => infoField(await ask(replica.port, "INFO", "replication"), "master_link_status") === "up")
    const sentinels: Array<Server> = []
    for (let i = 0; i < 3; i++) {
      const conf = join(processes.dir, `sentinel-${i}.conf`)
      writeFileSync(
        conf,
        [
          `sentinel monitor ${name} 127.0.0.1 ${primary.port} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 10000`,
          `sentinel parallel-syncs ${name} 1`
        ].join("\n") + "\n"
      )
      sentinels.push(await processes.server(() => [conf, "--sentinel"]))
    }
    // Ready for a fail-over: every sentinel knows the replica and the two other sentinels.
    for (const sentinel of sentinels) {
      await until("the sentinels' discovery", async () => {
        const fields = await ask(sentinel.port, "SENTINEL", "MASTER", name) as Array<string>
        const field = (key: string) => fields[fields.indexOf(key) + 1]
        return field("num-slaves") === "1" && field("num-other-sentinels") === "2"
      })
    }
    const nodes = [primary, replica]
    const primaryPort = async () => {
      const [, port] = await ask(sentinels[0]!.port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", name) as [string, string]
      return Number(port)
    }
    return {
      sentinels: sentinels.map(({ port }) => ({ host: "127.0.0.1", port })),
      name,
      variable: sentinels.map(({ port }) => `127.0.0.1:${port}`).join(","),
      primaryPort,
      replicated: async () => {
        const current = await primaryPort()
        const other = nodes.find(({ port }) => port !== current)!
        await until("the replica catching up", async () => {
          const offset = infoField(await ask(current, "INFO", "replication"), "master_repl_offset")
          const info = String(await ask(other.port, "INFO", "replication"))
          return infoField(info, "master_link_status") === "up" && infoField(info, "slave_repl_offset") === offset
        })
      },
      failOver: async () => {
        const old = await primaryPort()
        await processes.kill(nodes.find(({ port }) => port === old)!)
        await until("the fail-over", async () => (await primaryPort()) !== old)
      },
      stop: () => processes.stop()
    }
  } catch (error) {
    processes.stop()
    throw error
  }
}

/** Whether a listener can bind `port` on the loopback now. */
const bindable = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

/** A free port whose cluster bus port, the port + 10 000, is free too: a cluster node listens on both. */
const clusterPort = async (): Promise<number> => {
  for (;;) {
    const port = await freePort()
    if (port + 10_000 <= 65_535 && await bindable(port + 10_000)) return port
  }
}

export interface ClusterSetup {
  readonly nodes: ReadonlyArray<{ readonly host: string; readonly port: number }>
  /** REDIS_CLUSTER_NODES for this set-up. */
  readonly variable: string
  readonly stop: () => void
}

/** Three primaries sharing the 16384 slots (no replicas: the contract needs no fail-over in a cluster). */
export const startCluster = async (): Promise<ClusterSetup> => {
  const processes = new Processes()
  try {
    const nodes: Array<Server> = []
    for (let i = 0; i < 3; i++) {
      nodes.push(await processes.server((port) => [...EPHEMERAL, "--cluster-enabled", "yes", "--cluster-config-file",
        join(processes.dir, `nodes-${port}.conf`), "--cluster-node-timeout", "2000"], clusterPort))
    }
    execFileSync("redis-cli", ["--cluster", "create", ...nodes.map(({ port }) => `127.0.0.1:${port}`), "--cluster-yes"], {
      stdio: "ignore"
    })
    for (const node of nodes) {
      await until("the cluster's agreement", async () => {
        const info = await ask(node.port, "CLUSTER", "INFO")
        return infoField(info, "cluster_state") === "ok" && infoField(info, "cluster_known_nodes") === "3"
      })
    }
    return {
      nodes: nodes.map(({ port }) => ({ host: "127.0.0.1", port })),
      variable: nodes.map(({ port }) => `127.0.0.1:${port}`).join(","),
      stop: () => processes.stop()
    }
  } catch (error) {
    processes.stop()
    throw error
  }
}
