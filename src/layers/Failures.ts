/**
 * The one policy (docs/rules.md#dependency-outage) for what PostgreSQL and Redis answer, used by every
 * statement and store call:
 * - an outage (a refused, lost or terminated connection, a server shutting down or starting up, too
 *   many connections, a pool or lock or statement timeout, Redis giving up on a command) is the typed
 *   ServiceUnavailable: 503 with Retry-After, and the client may retry;
 * - a transient conflict (serialization failure, deadlock, a prepared statement whose result's columns
 *   changed under it) is retried by `inTransaction` a few times, then is ServiceUnavailable too;
 * - anything else is a bug: a defect, 500, logged with its cause.
 * Errors are looked at down their `cause` chain, since @effect/sql wraps the driver's error.
 */
import { Effect, type Exit } from "effect"
import { ServiceUnavailable } from "../schema/platform/Errors"

/** Socket-level failures of Node's net module. */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH", "EAI_AGAIN"])

/**
 * PostgreSQL SQLSTATEs of a server that is going away, starting or not taking connections, and of a
 * lock or statement that timed out (class 08, connection exceptions, is matched by prefix).
 */
const UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03", "57P05", "53300", "55P03", "57014", "25P03"])

/** PostgreSQL SQLSTATEs worth running the transaction again for. */
const CONFLICT_STATES = new Set(["40001", "40P01"])

const CONNECTION_MESSAGES = [
  "Connection terminated", // pg: the server closed the connection
  "not queryable", // pg: a client whose connection broke ("Client has encountered a connection error...")
  "timeout exceeded when trying to connect", // pg pool
  "Cannot use a pool after calling end", // pg pool closing at shutdown
  "Client was closed", // pg
  "Connection is closed", // ioredis
  "Reached the max retries per request limit", // ioredis during an outage (MaxRetriesPerRequestError)
  "Command timed out", // ioredis: no answer within its commandTimeout
  // A Redis primary lost, being replaced or starting: a fail-over under Sentinel or in a cluster.
  "CLUSTERDOWN",
  "TRYAGAIN",
  "MASTERDOWN",
  "LOADING",
  "READONLY",
  "Too many Cluster redirections", // ioredis: the slots kept moving
  "Failed to refresh slots cache", // ioredis: no cluster node answered
  "None of startup nodes is available", // ioredis: no cluster node reachable
  "Cluster isn't ready", // ioredis: no connected node for the command's slot
  "Cluster is ended", // ioredis: a command waiting between a cluster's retries when the client closes (a shutdown)
  "No subscriber for the cluster", // ioredis: no node to subscribe on
  "No sharded subscriber for slot", // ioredis: the subscribers' table names a node the pool no longer has
  "All sentinels are unreachable" // ioredis
]

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** `test` on the error and its causes (and an AggregateError's errors, as Node's connect gives). */
const somewhere = (error: unknown, test: (error: Record<string, unknown>) => boolean): boolean => {
  let current: unknown = error
  for (let depth = 0; depth < 6 && isRecord(current); depth++) {
    if (test(current)) return true
    if (Array.isArray(current.errors) && current.errors.some((inner) => isRecord(inner) && test(inner))) return true
    current = current.cause
  }
  return false
}

const codeOf = (error: Record<string, unknown>) => typeof error.code === "string" ? error.code : ""

/**
 * ioredis (5.x) in a cluster whose slot table has no node for a slot (the client started while the slot was
 * unassigned, on a cluster that serves its other slots meanwhile): its sharded subscribers' group throws a TypeError
 * as it looks the slot's node up, before any command is sent. Told apart from a bug of ours by the message and by the
 * function that threw it: the stack's first frame, read after the message, which could hold lines of its own. (A
 * keyed command for that slot goes to another node, whose CLUSTERDOWN or redirections end as an outage above.)
 */
const SLOT_LOOKUPS = new Set(["getResponsibleSubscriber"])
const isSlotWithoutNode = (e: Record<string, unknown>) => {
  if (e.name !== "TypeError" || typeof e.stack !== "string" || typeof e.message !== "string") return false
  if (!e.message.startsWith("Cannot read properties of undefined")) return false
  const afterMessage = e.stack.slice(e.stack.indexOf(e.message) + e.message.length)
  const thrower = /^\n\s+at (?:[\w$]+\.)?([\w$]+) /.exec(afterMessage)?.[1]
  return thrower !== undefined && SLOT_LOOKUPS.has(thrower)
}

/** A dependency is unreachable or refused to serve: not the request's fault, and worth retrying later. */
export const isUnavailable = (error: unknown): boolean =>
  somewhere(error, (e) => {
    const code = codeOf(e)
    const message = typeof e.message === "string" ? e.message : ""
    return NETWORK_CODES.has(code) || UNAVAILABLE_STATES.has(code) || code.startsWith("08") ||
      e.name === "MaxRetriesPerRequestError" || CONNECTION_MESSAGES.some((text) => message.includes(text)) ||
      isSlotWithoutNode(e)
  })

/**
 * A prepared statement whose result's columns changed under it (a migration while this instance runs):
 * its text is prepared afresh on its next use (src/layers/PreparedStatements.ts), so running it again works.
 */
const isReplanned = (e: Record<string, unknown>) =>
  codeOf(e) === "0A000" && typeof e.message === "string" && e.message.includes("cached plan must not change result type")

/** A serialization failure, a deadlock or a replanned statement: the transaction was rolled back and may simply run again. */
export const isTransientConflict = (error: unknown): boolean =>
  somewhere(error, (e) => CONFLICT_STATES.has(codeOf(e)) || isReplanned(e))

/**
 * ServiceUnavailable for an outage (logged as a warning) or a transient conflict (marked, so that
 * `inTransaction` runs the transaction again), a defect for anything else.
 */
export const unavailableOrDie = (error: unknown): Effect.Effect<never, ServiceUnavailable> =>
  isTransientConflict(error)
    ? Effect.fail(new ServiceUnavailable({ conflict: true }))
    : isUnavailable(error)
    ? Effect.zipRight(Effect.logWarning("A dependency is unavailable", error), Effect.fail(new ServiceUnavailable()))
    : Effect.die(error)

/** A call to a store (Redis) under the policy: its promise, with an outage as ServiceUnavailable. */
export const storeCall = <A>(call: () => Promise<A>): Effect.Effect<A, ServiceUnavailable> =>
  Effect.tryPromise({ try: call, catch: (error) => error }).pipe(Effect.catchAll(unavailableOrDie))

/**
 * A store command sent now, when this is called, and answered when the returned effect is awaited, once or more:
 * a caller can send it, send others in the same round trip, and wait for it later, without a fiber of its own. Its
 * outcome is kept once known, so a failure is classified and logged once; a throw becomes the answer's failure, and
 * an answer nobody awaits is never an unhandled rejection.
 */
export const sentNow = <A>(call: () => Promise<A>): Effect.Effect<A, ServiceUnavailable> => {
  const reply = new Promise<A>((resolve) => resolve(call()))
  reply.catch(() => {})
  const answer = storeCall(() => reply)
  let answered: Exit.Exit<A, ServiceUnavailable> | undefined
  return Effect.suspend(() => answered ?? Effect.flatMap(Effect.exit(answer), (exit) => (answered = exit)))
}
