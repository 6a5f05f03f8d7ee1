/**
 * The delivery worker of outbound webhooks (docs/rules.md#webhook-delivery; docs/decisions.md "Webhook
 * delivery"). It sends what `WebhookOutbox.enqueue` wrote, at least once, from any number of instances:
 *
 * 1. Claim: one statement (its own short transaction) picks due rows (`PENDING`, `next_attempt_at <=
 *    now` by the Effect Clock) with `FOR UPDATE SKIP LOCKED` and pushes their `next_attempt_at` to
 *    now + CLAIM_LEASE (the 10 s timeout plus a margin). The claim commits before anything is sent, so
 *    other instances skip these rows, and if this instance dies the rows fall due again when the
 *    lease ends. The lease value (with `attempts`) is the claim's fencing token.
 * 2. Send: a POST of the stored payload text, exactly, with `content-type: application/json` and
 *    `x-webhook-signature`, cut after 10 s; redirects are not followed (a 3xx is a failure). With
 *    WEBHOOK_BLOCK_PRIVATE_TARGETS the URL is checked again and the agent connects only to public
 *    addresses (DNS rebinding).
 * 3. Record: in one transaction, only if the fence still holds, an attempt row (status code or error,
 *    duration) and the delivery's new state: 2xx DELIVERED; otherwise the next attempt after 1, 2, 4,
 *    ... minutes, and FAILED after the 8th failure.
 *
 * Interrupted while sending (shutdown), the claim is released (due at once, for another instance);
 * should even that fail, the lease runs out. Nothing is lost; a receiver may see an event twice and
 * can tell by the `x-webhook-delivery` header (the delivery id).
 */
import { HttpClient, type HttpClientError, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Cause, Clock, Duration, Effect, Exit, Layer, Option, Schedule, Schema } from "effect"
import { AppConfig } from "../../layers/AppConfig"
import { NotFound } from "../../schema/platform/Errors"
import {
  WebhookAttempt,
  WebhookDeliveryId,
  WebhookDeliveryLog,
  WebhookDeliveryStatus,
  WebhookEvent,
  type WebhookId
} from "../../schema/platform/Webhook"
import { isInternalTarget, publicOnlyLookup } from "./WebhookTargets"
import { execute, inTransaction, pageOf, rowCountOf, rowsOf } from "./SqlRows"
import type { PageRequest } from "../../schema/platform/Pagination"

/** Each POST is cut after this long (docs/rules.md#webhook-delivery). */
const DELIVERY_TIMEOUT = Duration.seconds(10)
/** How long a claim keeps other instances off a delivery: the timeout plus room for the database. */
const CLAIM_LEASE = Duration.seconds(30)
/** Attempts before a delivery is FAILED (docs/rules.md#webhook-delivery). */
export const MAX_ATTEMPTS = 8
/** The wait after the first failure; it doubles after each further one (docs/rules.md#webhook-delivery). */
const FIRST_RETRY_DELAY = Duration.minutes(1)
/**
 * How often the worker looks for due deliveries: a commit is sent within about 1 s
 * (docs/rules.md#webhook-delivery).
 */
const POLL_INTERVAL = Duration.seconds(1)
/** Deliveries claimed (and sent concurrently) at once. */
const CLAIM_BATCH = 25

/** The wait after the `failedAttempts`-th failure: 1 min, 2 min, 4 min, ... */
export const retryDelay = (failedAttempts: number): Duration.Duration =>
  Duration.times(FIRST_RETRY_DELAY, 2 ** (failedAttempts - 1))

/** A claimed delivery; `attempts` and `leaseUntil` fence what this claim may record. */
const Claimed = Schema.Struct({
  id: WebhookDeliveryId,
  url: Schema.String,
  payload: Schema.String,
  attempts: Schema.Int,
  leaseUntil: Schema.DateFromSelf
})
type ClaimedDelivery = typeof Claimed.Type

/** What one attempt came to: an HTTP status, or an error when there was none. */
interface Outcome {
  readonly statusCode: number | null
  readonly error: string | null
}

/** What an attempt leaves: its number, the delivery's next state, when it finished and when it is next due. */
interface AttemptResult {
  readonly attempt: number
  readonly delivered: boolean
  readonly status: WebhookDeliveryStatus
  readonly finished: Date
  /** The next attempt's time while PENDING; else the attempt's end. */
  readonly next: Date
}

/** The result of `delivery`'s attempt that came to `outcome` at `finishedAt` (MAX_ATTEMPTS, `retryDelay`). */
const resultOf = (delivery: ClaimedDelivery, outcome: Outcome, finishedAt: number): AttemptResult => {
  const attempt = delivery.attempts + 1
  const delivered = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300
  const status: WebhookDeliveryStatus = delivered ? "DELIVERED" : attempt >= MAX_ATTEMPTS ? "FAILED" : "PENDING"
  const finished = new Date(finishedAt)
  const next = status === "PENDING" ? new Date(finishedAt + Duration.toMillis(retryDelay(attempt))) : finished
  return { attempt, delivered, status, finished, next }
}

const SignatureField = Schema.parseJson(Schema.Struct({ signature: Schema.String }))

/** An attempt's error column: the timeout, or the transport's reason (refused, reset, private target). */
const describe = (error: HttpClientError.HttpClientError | Cause.TimeoutException): string => {
  if (error._tag === "TimeoutException") return `Timed out after ${Duration.format(DELIVERY_TIMEOUT)}`
  const cause = error.cause as { readonly message?: unknown; readonly code?: unknown } | undefined
  const detail = typeof cause?.message === "string" && cause.message !== "" ? cause.message : cause?.code
  return `${error.reason} error${detail === undefined ? "" : `: ${String(detail)}`}`.slice(0, 500)
}

const DeliveryRow = Schema.Struct({
  id: WebhookDeliveryId,
  event: WebhookEvent,
  status: WebhookDeliveryStatus,
  nextAttemptAt: Schema.DateFromSelf,
  deliveredAt: Schema.NullOr(Schema.DateFromSelf),
  createdAt: Schema.DateFromSelf
})

const AttemptRow = Schema.Struct({
  deliveryId: Schema.String,
  attemptedAt: Schema.DateFromSelf,
  statusCode: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  durationMs: Schema.Int
})

export class WebhookDelivery extends Effect.Service<WebhookDelivery>()("app/WebhookDelivery", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const transaction = inTransaction(sql)
    const config = yield* AppConfig
    // Its own agent: without keep-alive, so every connection is resolved (and, when private targets
    // are blocked, checked) afresh. No trace headers to third parties; redirects are never followed.
    const agent = yield* NodeHttpClient.makeAgent(
      config.webhookBlockPrivateTargets ? { lookup: publicOnlyLookup } : {}
    )
    const client = (yield* NodeHttpClient.make.pipe(Effect.provideService(NodeHttpClient.HttpAgent, agent))).pipe(
      HttpClient.withTracerPropagation(false),
      HttpClient.withScope
    )


    /**
     * Claims up to CLAIM_BATCH due deliveries and commits, without sending. A claim never followed by
     * a send (the instance died) is taken again once its lease ends. Used by `runOnce`; public for tests.
     */
    const claimDue = Effect.fn("WebhookDelivery.claimDue")(function*() {
      const now = yield* Clock.currentTimeMillis
      const leaseUntil = new Date(now + Duration.toMillis(CLAIM_LEASE))
      return yield* rowsOf(Claimed, sql`
        WITH due AS (
          SELECT id FROM webhook_deliveries
          WHERE status = 'PENDING' AND next_attempt_at <= ${new Date(now)}
          ORDER BY next_attempt_at, id
          LIMIT ${CLAIM_BATCH}
          FOR UPDATE SKIP LOCKED
        )
        UPDATE webhook_deliveries AS d SET next_attempt_at = ${leaseUntil}
        FROM due, webhooks AS w
        WHERE d.id = due.id AND w.id = d.webhook_id
        RETURNING d.id, w.url, d.payload, d.attempts, d.next_attempt_at AS lease_until`)
    })

    /** One POST; never fails: the outcome says what happened. */
    const send = Effect.fnUntraced(function*(delivery: ClaimedDelivery) {
      if (config.webhookBlockPrivateTargets && (yield* isInternalTarget(delivery.url))) {
        return { statusCode: null, error: "Target resolves to a loopback or private address" }
      }
      const signature = Schema.decodeUnknownOption(SignatureField)(delivery.payload)
      if (Option.isNone(signature)) return { statusCode: null, error: "Stored payload has no signature" }
      const request = HttpClientRequest.post(delivery.url).pipe(
        HttpClientRequest.setHeaders({
          "x-webhook-signature": signature.value.signature,
          "x-webhook-delivery": String(delivery.id),
          "user-agent": `${config.serviceName}-Webhooks`
        }),
        HttpClientRequest.bodyText(delivery.payload, "application/json")
      )
      // The status line is all that counts; closing the scope drops the connection and any body.
      return yield* client.execute(request).pipe(
        Effect.map((response): Outcome => ({ statusCode: response.status, error: null })),
        Effect.timeout(DELIVERY_TIMEOUT),
        Effect.scoped,
        Effect.catchAll((error) => Effect.succeed<Outcome>({ statusCode: null, error: describe(error) }))
      )
    })

    /** Writes the attempt and the delivery's next state, if this claim still holds the delivery. */
    const record = Effect.fnUntraced(function*(delivery: ClaimedDelivery, outcome: Outcome, startedAt: number, finishedAt: number) {
      const result = resultOf(delivery, outcome, finishedAt)
      const { attempt, delivered, next, status } = result
      const recorded = yield* transaction(recordInTransaction(delivery, outcome, startedAt, result))
      if (!recorded) {
        yield* Effect.logWarning("Webhook delivery was taken over or removed during its attempt; not recorded")
      } else if (!delivered) {
        yield* Effect.logWarning(
          status === "FAILED" ? "Webhook delivery failed for good" : "Webhook delivery attempt failed"
        ).pipe(Effect.annotateLogs({ attempt, statusCode: outcome.statusCode, error: outcome.error, next }))
      }
    }, (effect, delivery) => effect.pipe(Effect.annotateLogs({ webhookDeliveryId: String(delivery.id) })))

    /** What `record` runs in its transaction: the next state, if this claim still holds the delivery; the attempt. */
    const recordInTransaction = Effect.fnUntraced(function*(
      delivery: ClaimedDelivery,
      outcome: Outcome,
      startedAt: number,
      { attempt, delivered, finished, next, status }: AttemptResult
    ) {
      const updated = yield* rowCountOf(sql`
          UPDATE webhook_deliveries
          SET attempts = ${attempt}, status = ${status}, next_attempt_at = ${next},
              delivered_at = ${delivered ? finished : null}
          WHERE id = ${delivery.id} AND status = 'PENDING'
            AND attempts = ${delivery.attempts} AND next_attempt_at = ${delivery.leaseUntil}
          RETURNING id`)
      if (updated === 0) return false
      yield* execute(sql`
          INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, error, duration_ms)
          VALUES (${delivery.id}, ${new Date(startedAt)}, ${outcome.statusCode}, ${outcome.error},
                  ${Math.max(0, Math.round(finished.getTime() - startedAt))})`)
      return true
    })

    /** Sends and records one claimed delivery. Interrupted while sending: nothing is recorded. */
    const deliver = (delivery: ClaimedDelivery) =>
      Effect.uninterruptibleMask((restore) => sendAndRecord(delivery, restore)).pipe(
        // One delivery's trouble (a database error while recording) must not stop the others: the
        // lease brings it back.
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.logError("Webhook delivery error", cause)
        ),
        Effect.withSpan("WebhookDelivery.deliver", { attributes: { webhookDeliveryId: String(delivery.id) } })
      )

    /** `deliver`'s send (interruptible through `restore`) and its record. */
    const sendAndRecord = Effect.fnUntraced(function*(
      delivery: ClaimedDelivery,
      restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    ) {
      const startedAt = yield* Clock.currentTimeMillis
      const outcome = yield* restore(send(delivery))
      const finishedAt = yield* Clock.currentTimeMillis
      yield* record(delivery, outcome, startedAt, finishedAt)
    })

    /** Makes unrecorded claims due again at once (still fenced: recorded ones are left alone). */
    const release = Effect.fnUntraced(function*(claimed: ReadonlyArray<ClaimedDelivery>) {
      const now = new Date(yield* Clock.currentTimeMillis)
      for (const delivery of claimed) {
        yield* execute(sql`
            UPDATE webhook_deliveries SET next_attempt_at = ${now}
            WHERE id = ${delivery.id} AND status = 'PENDING'
              AND attempts = ${delivery.attempts} AND next_attempt_at = ${delivery.leaseUntil}`)
      }
    }, (effect) => effect.pipe(Effect.ignore))

    /** One claim and its sends; the number of deliveries attempted. */
    const runBatch = Effect.uninterruptibleMask(Effect.fnUntraced(function*(restore) {
      const claimed = yield* claimDue()
      yield* restore(Effect.forEach(claimed, deliver, { concurrency: "unbounded", discard: true })).pipe(
        Effect.onExit((exit) => Exit.isFailure(exit) ? release(claimed) : Effect.void)
      )
      return claimed.length
    })
    )

    /** Sends every delivery due now, batch after batch; the number attempted. For tests and the loop. */
    const runOnce = Effect.fn("WebhookDelivery.runOnce")(function*() {
      let total = 0
      while (true) {
        const count = yield* runBatch
        total += count
        if (count < CLAIM_BATCH) return total
      }
    })

    /** `runOnce` every POLL_INTERVAL (on the Effect Clock) until interrupted; a failed round is logged. */
    const poll = runOnce().pipe(
      Effect.catchAllCause((cause) => Effect.logError("Webhook delivery round failed", cause)),
      Effect.repeat(Schedule.spaced(POLL_INTERVAL)),
      Effect.asVoid,
      Effect.interruptible
    )


    /** The administrator's delivery log of one receiver, newest first, each with its attempts. */
    const deliveries = Effect.fn("WebhookDelivery.deliveries")(
      function*(webhookId: WebhookId, paging: PageRequest) {
        const exists = yield* rowCountOf(sql`SELECT 1 FROM webhooks WHERE id = ${webhookId}`)
        if (exists === 0) return yield* NotFound.of("Webhook")
        const { items, page, total } = yield* pageOf(
          DeliveryRow,
          paging,
          (window) =>
            sql`SELECT id, event, status, next_attempt_at, delivered_at, created_at FROM webhook_deliveries
                WHERE webhook_id = ${webhookId} ORDER BY id DESC LIMIT ${window.limit} OFFSET ${window.offset}`,
          sql`SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ${webhookId}`
        )
        const attempts = items.length === 0 ? [] : yield* rowsOf(AttemptRow, sql`
          SELECT delivery_id, attempted_at, status_code, error, duration_ms FROM webhook_attempts
          WHERE delivery_id = ANY(${items.map((row) => row.id)}::bigint[]) ORDER BY id`)
        return {
          total,
          page,
          deliveries: items.map((row) =>
            new WebhookDeliveryLog({
              ...row,
              nextAttemptAt: row.status === "PENDING" ? row.nextAttemptAt : null,
              attempts: attempts.filter((a) => a.deliveryId === String(row.id)).map(({ deliveryId: _, ...a }) =>
                new WebhookAttempt(a)
              )
            })
          )
        }
      }
    )

    return { claimDue, runOnce, poll, deliveries } as const
  })
}) {}

/** Runs the delivery loop for as long as the application runs (src/App.ts). */
export const WebhookDeliveryWorker: Layer.Layer<never, never, WebhookDelivery> = Layer.scopedDiscard(
  Effect.flatMap(WebhookDelivery, (delivery) => Effect.forkScoped(delivery.poll))
)
