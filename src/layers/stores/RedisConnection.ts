/**
 * The Redis connection shared by the Redis-backed stores (used when a Redis is configured,
 * docs/rules.md#embedded-defaults): one node, a primary found through Sentinel, or a Redis Cluster
 * (src/layers/stores/RedisTarget.ts, docs/operations.md#redis-high-availability). The stores issue the same
 * commands on all three: each command and script touches one key, so no command spans two hash slots of a
 * cluster. Every key and channel the stores use starts with `prefix`, so several deployments or test runs can
 * share one Redis.
 */
import { Context, Deferred, Duration, Effect, Layer, Option, Redacted, Runtime, type Scope } from "effect"
import { Cluster, Redis, type RedisOptions } from "ioredis"
import { StartupError } from "../AppConfig"
import { describeTarget, type RedisTarget } from "./RedisTarget"

/** A node's connection or a cluster's: the stores use only what both offer. */
export type RedisClient = Redis | Cluster

interface RedisConnectionShape {
  readonly client: RedisClient
  /** Prepended to every key and channel. */
  readonly prefix: string
  /**
   * A Lua script of `numberOfKeys` keys (default 1) as a command: sent in full once per connection, then by its
   * SHA1 (EVALSHA, reloaded by ioredis when Redis has forgotten it). A cluster runs it on the node of its keys,
   * which must share a hash slot (a hash tag).
   */
  readonly script: (name: string, lua: string, numberOfKeys?: number) => Script
  /**
   * A further connection for subscriptions (SUBSCRIBE takes a connection over), closed with the scope. On a cluster
   * it subscribes with SSUBSCRIBE (sharded pub/sub, Redis 7), at the node of the channel's slot.
   */
  readonly subscriber: Effect.Effect<RedisClient, StartupError, Scope.Scope>
  /**
   * True on a cluster: channels are sharded (SPUBLISH and SSUBSCRIBE, routed by the channel's slot). A plain
   * PUBLISH goes to any node and reaches the subscriber's node over the cluster bus from there, so two messages
   * published one after the other through two nodes could arrive the other way round.
   */
  readonly sharded: boolean
}

/** Runs a script on these keys (one, or `numberOfKeys`; prefixed by the caller) with these arguments. */
type Script = (keys: string | ReadonlyArray<string>, args: ReadonlyArray<string | number>) => Promise<unknown>

const CONNECT_TIMEOUT = Duration.seconds(5)

/** How long after ioredis gave a connection up it is connected again. */
const CONNECT_AGAIN_AFTER_MS = 1_000

/**
 * Waits until `client` is ready; fails after CONNECT_TIMEOUT with the last connection error. ioredis
 * keeps reconnecting on its own, so a Redis that comes up within the timeout is accepted. Afterwards a
 * lost connection is logged once, and the recovery once.
 *
 * A connection ioredis gives up on ("end") is connected again after CONNECT_AGAIN_AFTER_MS, unless the scope is
 * closing it: under Sentinel, a fail-over announced (+switch-master) while the client was already reconnecting
 * made ioredis abandon that attempt and stop for good, every command failing at once (503) until a restart.
 */
const connect = Effect.fnUntraced(function*(create: () => RedisClient, where: string) {
  const runtime = yield* Effect.runtime<never>()
  const log = (effect: Effect.Effect<void>) => Runtime.runFork(runtime)(effect)
  const isReady = yield* Deferred.make<void>()
  let lastError = "no answer"
  let ready = false
  let lost = false
  let closing = false
  const client = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const client = create()
      const onError = (error: Error) => {
        lastError = error.message
        if (ready && !lost) {
          lost = true
          log(Effect.logWarning(`Redis connection to ${where} lost: ${error.message}`))
        }
      }
      client.on("error", onError)
      // A cluster reports a node's lost connection apart from its own errors.
      client.on("node error", onError)
      client.on("ready", () => {
        if (!ready) {
          ready = true
          Deferred.unsafeDone(isReady, Effect.void)
        } else if (lost) {
          lost = false
          log(Effect.logInfo(`Redis connection to ${where} restored`))
        }
      })
      client.on("end", () => {
        if (closing) return
        log(Effect.logWarning(`Redis connection to ${where} given up by the client; connecting again`))
        setTimeout(() => {
          if (!closing && client.status === "end") client.connect().catch(() => undefined)
        }, CONNECT_AGAIN_AFTER_MS).unref()
      })
      return client
    }),
    (client) =>
      Effect.zipRight(
        Effect.sync(() => {
          closing = true
        }),
        client.status === "ready"
          ? Effect.tryPromise(() => client.quit()).pipe(
            Effect.timeout("2 seconds"),
            Effect.ignore,
            Effect.ensuring(Effect.sync(() => client.disconnect()))
          )
          : Effect.sync(() => client.disconnect())
      )
  )
  yield* Deferred.await(isReady).pipe(
    Effect.timeoutFail({
      duration: CONNECT_TIMEOUT,
      onTimeout: () =>
        new StartupError({
          message: `Redis at ${where} is unreachable after ${Duration.format(CONNECT_TIMEOUT)}: ${lastError}`
        })
    })
  )
  return client
})

/**
 * What every connection to a Redis node does, on all three topologies:
 * - a command during an outage (or a fail-over) fails after a few reconnection attempts, a few hundred
 *   milliseconds (and becomes a 503), rather than queueing for a long time; none waits longer than
 *   COMMAND_TIMEOUT in any case;
 * - a write refused with READONLY (the node was demoted to a replica while this connection stayed open to it)
 *   reconnects, which under Sentinel asks the sentinels for the new primary, and sends the command again;
 * - the commands issued in one turn of the event loop leave together in one write (`inOneWrite`; on a cluster, one
 *   write per node): under load, many requests' commands share a write.
 */
const COMMAND_TIMEOUT = Duration.seconds(5)
const nodeOptions = {
  maxRetriesPerRequest: 3,
  commandTimeout: Duration.toMillis(COMMAND_TIMEOUT),
  reconnectOnError: (error: Error) => error.message.startsWith("READONLY") ? 2 : false
} satisfies RedisOptions

/** How often a cluster client asks for the slot table (one `CLUSTER SLOTS`): a changed cluster is followed within it. */
const SLOTS_REFRESH_MS = 5_000

const secret = (value: Option.Option<Redacted.Redacted>) => Option.getOrUndefined(Option.map(value, Redacted.value))

/**
 * `client`, whose commands issued in one turn of the event loop leave in one write: its socket is corked at the turn's
 * first command and uncorked when the turn's I/O is done (setImmediate, as ioredis's auto-pipelining defers), which
 * sends them in one writev. Not auto-pipelining: each of its pipelines defines an accessor with a closure of its own,
 * so V8 gives each pipeline a map of its own in the old generation, and that map kept the pipeline, its commands,
 * their replies and the callbacks into the requests' fibers alive through young-generation collections: nearly
 * everything a request had touched reached the old generation (docs/decisions.md "What reaches the old generation").
 * A command issued while the connection is not ready waits in ioredis's offline queue and is sent through here when
 * it is.
 */
const inOneWrite = (client: Redis): Redis => {
  const send = client.sendCommand
  let corked = false
  client.sendCommand = function(this: Redis, ...args: Parameters<Redis["sendCommand"]>) {
    const socket = this.stream
    if (!corked && this.status === "ready" && socket !== undefined) {
      corked = true
      socket.cork()
      setImmediate(() => {
        corked = false
        socket.uncork()
      })
    }
    return send.apply(this, args)
  }
  return client
}

const create = (target: RedisTarget): RedisClient => {
  switch (target._tag) {
    case "Single":
      return inOneWrite(new Redis(Redacted.value(target.url), nodeOptions))
    case "Sentinel":
      return inOneWrite(new Redis({
        ...nodeOptions,
        sentinels: target.sentinels.map(({ host, port }) => ({ host, port })),
        name: target.name,
        username: Option.getOrUndefined(target.auth.username),
        password: secret(target.auth.password),
        sentinelPassword: secret(target.auth.sentinelPassword),
        // Subscribes to the sentinels' +switch-master: a fail-over is followed at once, not at the next error.
        failoverDetector: true
      }))
    case "Cluster": {
      const cluster = new Cluster(target.nodes.map(({ host, port }) => ({ host, port })), {
        // A cluster has no retry limit or timeout of its own: with its offline queue, a command issued while no
        // node of its slot is connected would wait for as long as the outage lasts. Without, it fails at once
        // (503); a node's own connection still retries as above.
        enableOfflineQueue: false,
        // The slot table asked for again every few seconds, not only on a redirection: the subscription connection
        // sends no keyed commands, so without it, after a slot without a node had one again, that connection's
        // subscribers kept refusing every channel until a restart.
        slotsRefreshInterval: SLOTS_REFRESH_MS,
        redisOptions: {
          ...nodeOptions,
          username: Option.getOrUndefined(target.auth.username),
          password: secret(target.auth.password)
        }
      })
      // ioredis makes a connection to each node as it learns of it (and a new one after a topology change or a lost
      // connection), announcing it before sending it anything: each sends a turn's commands to its node in one write.
      // Connected at once: ioredis would connect it at its first command, and without an offline queue it refuses
      // that turn's other commands to a node still connecting, trying them again 100 ms later.
      cluster.on("+node", (node: Redis) => {
        inOneWrite(node)
        node.connect().catch(() => {}) // a failure is the commands' to meet (503), as on a node already connected
      })
      return cluster
    }
  }
}

/** The connection to `target` with its stores' `prefix`, closed with the scope. */
const connection = Effect.fnUntraced(function*(target: RedisTarget, prefix: string) {
  const where = describeTarget(target)
  const client = yield* connect(() => create(target), where)
  yield* Effect.logDebug(`Connected to Redis at ${where} with key prefix "${prefix}"`)
  return {
    client,
    prefix,
    script: (name, lua, numberOfKeys = 1) => {
      // numberOfKeys fixed: the keys come first, as for any command, and a cluster sends the command to their slot's
      // node (with the count first, to the slot of "1").
      client.defineCommand(name, { lua, numberOfKeys })
      const run = (client as unknown as Record<string, (...args: ReadonlyArray<string | number>) => Promise<unknown>>)[name]!
      return (keys, args) => run.call(client, ...(typeof keys === "string" ? [keys] : keys), ...args)
    },
    // A cluster's duplicate is a cluster of its own, with a subscriber per shard; under Sentinel the duplicate
    // finds the primary through the sentinels too. Never auto-pipelined (said again here, though the client is not
    // either): from an auto-pipeline, a throw of the subscriber group's slot lookup (a slot without a node when the
    // instance started) was uncaught and ended the process; sent directly, it is the subscription's failure
    // (docs/decisions.md "A cluster being changed").
    subscriber: connect(
      () =>
        client instanceof Cluster
          ? client.duplicate(undefined, { shardedSubscribers: true, enableAutoPipelining: false })
          : client.duplicate(),
      where
    ),
    sharded: client instanceof Cluster
  } satisfies RedisConnectionShape
})

export class RedisConnection extends Context.Tag("app/RedisConnection")<RedisConnection, RedisConnectionShape>() {
  static layer(target: RedisTarget, prefix: string): Layer.Layer<RedisConnection, StartupError> {
    return Layer.scoped(RedisConnection, connection(target, prefix))
  }
}
