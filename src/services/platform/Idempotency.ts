/**
 * Idempotency keys (docs/rules.md#idempotency-keys; docs/decisions.md "Idempotency keys"): a money-moving
 * request that carries `Idempotency-Key` runs at most once per user and key within 24 hours, so a client that lost the
 * answer (a timeout, a cut connection, a crashed instance) can safely send the request again.
 *
 * Under the user's lock, ONE database transaction looks the key up, runs the operation (whose own
 * transaction becomes part of this one) and stores its response with the key: a crash can never leave
 * the key without the money movement, or the movement without the key. The operation's publications
 * (balance pushes, live drops) wait for that commit. A repeat of the request answers the stored
 * response; the same key with a different request is refused (422). An operation that fails leaves
 * nothing behind (its transaction rolled back), so a retry runs it again.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Duration, Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import { UserLock } from "../../layers/stores/UserLock"
import { IdempotencyKeyReused, PleaseRetry } from "../../schema/platform/Errors"
import type { UserId } from "../../schema/platform/Ids"
import { firstOf, inTransaction, orUnavailable, rowCountOf } from "./SqlRows"

/** How long a key answers with its first response. */
const IDEMPOTENCY_KEY_TTL = Duration.hours(24)

interface IdempotentRequest<A, I> {
  readonly userId: UserId
  /** The client's key; undefined: the operation simply runs. */
  readonly key: string | undefined
  /** Names the operation (e.g. `cases.open`); with `input`, what makes two requests "the same". */
  readonly operation: string
  readonly input: unknown
  /** Encodes the response to store and decodes it for a replay. */
  readonly response: Schema.Schema<A, I>
}

interface IdempotentOutcome<A> {
  readonly value: A
  /** True when this is the stored response of an earlier request with the same key. */
  readonly replayed: boolean
}

/** JSON with object keys sorted at every level, bigints as decimal strings: equal inputs, equal text. */
const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) => {
    if (typeof v === "bigint") return v.toString()
    if (v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Date)) {
      return Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    }
    return v
  })

const fingerprintOf = (operation: string, input: unknown): string =>
  createHash("sha256").update(`${operation}\n${canonicalJson(input)}`).digest("hex")

const FORGET_BATCH = 5_000

const KeyRow = Schema.Struct({ fingerprint: Schema.String, response: Schema.Unknown })

/** Another request stored the key between this one's look-up and its write (only when a lock expired). */
class KeyTaken extends Data.TaggedError("KeyTaken") {}

export class Idempotency extends Effect.Service<Idempotency>()("app/Idempotency", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const lock = yield* UserLock

    const once = <A, I, E, R>(request: IdempotentRequest<A, I>, operation: Effect.Effect<A, E, R>) => {
      const key = request.key
      if (key === undefined) return Effect.map(operation, (value): IdempotentOutcome<A> => ({ value, replayed: false }))
      const fingerprint = fingerprintOf(request.operation, request.input)

      const attempt = attemptOnce(request, operation, key, fingerprint).pipe(inTransaction(sql))

      // After a lost race the transaction rolled back; the second look-up finds the winner's response.
      return lock.withLock(
        `user:${request.userId}`,
        attempt.pipe(Effect.catchTag("KeyTaken", () => attempt), Effect.catchTag("KeyTaken", () => new PleaseRetry()))
      ).pipe(Effect.withSpan("Idempotency.once", { attributes: { operation: request.operation } }))
    }

    /** One attempt of `once`, in a transaction: the stored response replayed, or the operation run and stored. */
    const attemptOnce = Effect.fnUntraced(function*<A, I, E, R>(
      request: IdempotentRequest<A, I>,
      operation: Effect.Effect<A, E, R>,
      key: string,
      fingerprint: string
    ) {
      const now = yield* Clock.currentTimeMillis
      const fresh = new Date(now - Duration.toMillis(IDEMPOTENCY_KEY_TTL))
      const found = yield* firstOf(KeyRow, sql`
        SELECT fingerprint, response FROM idempotency_keys
        WHERE user_id = ${request.userId} AND key = ${key} AND created_at > ${fresh}`)
      if (found !== undefined) {
        if (found.fingerprint !== fingerprint) return yield* new IdempotencyKeyReused()
        const value = yield* Schema.decodeUnknown(request.response)(found.response).pipe(orUnavailable)
        return { value, replayed: true } satisfies IdempotentOutcome<A>
      }
      const value = yield* operation
      const response = yield* Schema.encode(request.response)(value).pipe(orUnavailable)
      // A key older than 24 hours is taken over; a fresh one means another request won a race.
      const stored = yield* rowCountOf(sql`
        INSERT INTO idempotency_keys (user_id, key, fingerprint, response, created_at)
        VALUES (${request.userId}, ${key}, ${fingerprint}, ${JSON.stringify(response)}::jsonb, ${new Date(now)})
        ON CONFLICT (user_id, key) DO UPDATE
          SET fingerprint = EXCLUDED.fingerprint, response = EXCLUDED.response, created_at = EXCLUDED.created_at
          WHERE idempotency_keys.created_at <= ${fresh}
        RETURNING 1`)
      if (stored === 0) return yield* new KeyTaken()
      return { value, replayed: false } satisfies IdempotentOutcome<A>
    })

    /** Forgets keys older than 24 hours (the cleanup job), in batches; returns how many were deleted. */
    const forgetExpired = Effect.fn("Idempotency.forgetExpired")(function*() {
      const cutoff = new Date((yield* Clock.currentTimeMillis) - Duration.toMillis(IDEMPOTENCY_KEY_TTL))
      let total = 0
      while (true) {
        const deleted = yield* rowCountOf(sql`
          DELETE FROM idempotency_keys WHERE ctid IN (
            SELECT ctid FROM idempotency_keys WHERE created_at <= ${cutoff} LIMIT ${FORGET_BATCH})
          RETURNING 1`)
        total += deleted
        if (deleted < FORGET_BATCH) return total
      }
    })

    return { once, forgetExpired } as const
  })
}) {}
