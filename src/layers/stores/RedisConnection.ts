/**
 * The Redis connection shared by the Redis-backed stores (used when REDIS_URL is set, docs/rules.md#embedded-defaults).
 * Every key and channel the stores use starts with `prefix`, so several deployments or test runs can
 * share one Redis.
 */
import { Context, Deferred, Duration, Effect, Layer, Redacted, Runtime, type Scope } from "effect"
import { Redis } from "ioredis"
import { StartupError } from "../AppConfig"

interface RedisConnectionShape {
  readonly client: Redis
  /** Prepended to every key and channel. */
  readonly prefix: string
  /**
   * A Lua script as a command: sent in full once per connection, then by its SHA1 (EVALSHA, reloaded
   * by ioredis when Redis has forgotten it).
   */
  readonly script: (name: string, lua: string) => Script
  /** A further connection (for SUBSCRIBE, which takes a connection over), closed with the scope. */
  readonly duplicate: Effect.Effect<Redis, StartupError, Scope.Scope>
}

/** Runs a script with these keys (prefixed by the caller) and arguments. */
type Script = (keys: ReadonlyArray<string>, args: ReadonlyArray<string | number>) => Promise<unknown>

const CONNECT_TIMEOUT = Duration.seconds(5)

/** host:port only, so a password in the URL never reaches a log line. */
const describe = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.hostname}:${parsed.port || "6379"}`
  } catch {
    return "the configured address"
  }
}

/**
 * Waits until `client` is ready; fails after CONNECT_TIMEOUT with the last connection error. ioredis
 * keeps reconnecting on its own, so a Redis that comes up within the timeout is accepted. Afterwards a
 * lost connection is logged once, and the recovery once.
 */
const connect = (create: () => Redis, where: string): Effect.Effect<Redis, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const log = (effect: Effect.Effect<void>) => Runtime.runFork(runtime)(effect)
    const isReady = yield* Deferred.make<void>()
    let lastError = "no answer"
    let ready = false
    let lost = false
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const client = create()
        client.on("error", (error: Error) => {
          lastError = error.message
          if (ready && !lost) {
            lost = true
            log(Effect.logWarning(`Redis connection to ${where} lost: ${error.message}`))
          }
        })
        client.on("ready", () => {
          if (!ready) {
            ready = true
            Deferred.unsafeDone(isReady, Effect.void)
          } else if (lost) {
            lost = false
            log(Effect.logInfo(`Redis connection to ${where} restored`))
          }
        })
        return client
      }),
      (client) =>
        client.status === "ready"
          ? Effect.tryPromise(() => client.quit()).pipe(
            Effect.timeout("2 seconds"),
            Effect.ignore,
            Effect.ensuring(Effect.sync(() => client.disconnect()))
          )
          : Effect.sync(() => client.disconnect())
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

export class RedisConnection extends Context.Tag("app/RedisConnection")<RedisConnection, RedisConnectionShape>() {
  static layer(url: Redacted.Redacted, prefix: string): Layer.Layer<RedisConnection, StartupError> {
    return Layer.scoped(
      RedisConnection,
      Effect.gen(function*() {
        const where = describe(Redacted.value(url))
        const client = yield* connect(
          // A command during an outage fails after a few retries (and becomes a defect) rather than
          // queueing for a long time. Commands issued while others are on the wire leave together in one
          // write (auto-pipelining): under load, many requests' commands share a round trip.
          () => new Redis(Redacted.value(url), { maxRetriesPerRequest: 3, enableAutoPipelining: true }),
          where
        )
        yield* Effect.logDebug(`Connected to Redis at ${where} with key prefix "${prefix}"`)
        return {
          client,
          prefix,
          script: (name, lua) => {
            client.defineCommand(name, { lua })
            const run = (client as unknown as Record<string, (...args: ReadonlyArray<string | number>) => Promise<unknown>>)[name]!
            return (keys, args) => run.call(client, keys.length, ...keys, ...args)
          },
          duplicate: connect(() => client.duplicate(), where)
        }
      })
    )
  }
}
