/**
 * Withdrawals (SPEC "Deposits and withdrawals" and its Withdrawal rule, D9; docs/decisions.md
 * "Withdrawals"). Every movement of money goes through the Ledger, in the same database transaction
 * as the status change it belongs to:
 *
 * - request: under the user's lock, amount and PIX key checked, 2FA asked for above 10000 cents, then
 *   ONE transaction inserts the PENDING row and debits it (WITHDRAWAL), so a row exists exactly when
 *   its money left the balance, and the conditional debit can never overdraw.
 * - cancel (owner) and reject (administrator): a conditional update `PENDING -> CANCELLED/REJECTED`
 *   and the refund (WITHDRAWAL_REFUND) in one transaction, so a withdrawal is refunded at most once.
 * - approve: the approval first CLAIMS the row (a committed conditional update that also refuses
 *   cancel and reject from then on), calls the gateway outside any transaction, then records the
 *   payout (`PENDING -> COMPLETED`, the outbound webhook, the audit) in one transaction. Two
 *   approvals: the second finds the row claimed or completed and pays nothing. A failed payout
 *   releases the claim: the withdrawal stays PENDING and the administrator gets 502.
 *
 * Balance pushes go out after the commit.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { PaymentGateway } from "../layers/PaymentGateway"
import { UserLock } from "../layers/stores/UserLock"
import {
  BadRequest,
  Conflict,
  FieldError,
  InsufficientBalance,
  NotFound,
  PayoutFailed,
  TwoFactorRequired,
  ValidationError
} from "../schema/Errors"
import { UserId } from "../schema/Ids"
import {
  amountProblem,
  normalizePixKey,
  PixKeyType,
  pixKeyProblem,
  TWO_FACTOR_THRESHOLD_CENTS,
  WithdrawalId,
  WithdrawalMethod,
  type WithdrawalRequest,
  WithdrawalStatus
} from "../schema/Withdrawal"
import { Audit } from "./Audit"
import { Ledger } from "./Ledger"
import { Realtime } from "./Realtime"
import { TwoFactor } from "./TwoFactor"
import { WebhookOutbox } from "./WebhookOutbox"
import { firstOf, inTransaction, rowsOf, type Statement } from "./SqlRows"

/**
 * How long an approval's claim protects its gateway call. An older claim (its approval crashed or
 * hung) may be taken over by a new approval, which calls the gateway again with the same
 * withdrawalId: payouts must be idempotent on it (D9: the adapter sends it as the idempotency key).
 */
export const PAYOUT_CLAIM_TTL_MS = 5 * 60_000

const Row = Schema.Struct({
  id: WithdrawalId,
  userId: UserId,
  username: Schema.String,
  amountCents: Schema.BigInt,
  status: WithdrawalStatus,
  paymentMethod: WithdrawalMethod,
  pixKeyType: PixKeyType,
  pixKey: Schema.String,
  payoutId: Schema.NullOr(Schema.String),
  rejectionReason: Schema.NullOr(Schema.String),
  requestedAt: Schema.DateFromSelf,
  processedAt: Schema.NullOr(Schema.DateFromSelf),
  payoutClaim: Schema.NullOr(Schema.String),
  payoutAttempts: Schema.Number,
  payoutError: Schema.NullOr(Schema.String)
})
type Row = typeof Row.Type

/** Selected from `w` (the withdrawals, or a CTE of updated ones) joined with `u` (users). */
const COLUMNS = `w.id, w.user_id, u.username, w.amount_cents, w.status, w.payment_method, w.pix_key_type, w.pix_key,
  w.payout_id, w.rejection_reason, w.requested_at, w.processed_at, w.payout_claim, w.payout_attempts, w.payout_error`

/** What the owner sees (D9 `GET /withdrawals`). */
export interface WithdrawalView {
  readonly id: WithdrawalId
  readonly amountCents: bigint
  readonly status: WithdrawalStatus
  readonly paymentMethod: WithdrawalMethod
  readonly requestedAt: Date
  readonly processedAt: Date | null
  readonly rejectionReason: string | null
}

/** What an administrator sees: also who, where the money goes, and how the payout went. */
export interface AdminWithdrawalView extends WithdrawalView {
  readonly user: { readonly id: UserId; readonly username: string }
  readonly pixKeyType: PixKeyType
  readonly pixKey: string
  readonly payoutId: string | null
  readonly payoutAttempts: number
  readonly payoutError: string | null
  readonly payoutInProgress: boolean
}

const view = (row: Row): WithdrawalView => ({
  id: row.id,
  amountCents: row.amountCents,
  status: row.status,
  paymentMethod: row.paymentMethod,
  requestedAt: row.requestedAt,
  processedAt: row.processedAt,
  rejectionReason: row.rejectionReason
})

const adminView = (row: Row): AdminWithdrawalView => ({
  ...view(row),
  user: { id: row.userId, username: row.username },
  pixKeyType: row.pixKeyType,
  pixKey: row.pixKey,
  payoutId: row.payoutId,
  payoutAttempts: row.payoutAttempts,
  payoutError: row.payoutError,
  payoutInProgress: row.payoutClaim !== null
})

const notPending = () => new BadRequest({ message: "Withdrawal is not pending" })
const inProgress = () => new Conflict({ message: "Withdrawal payout is in progress" })

/** The same rules as the HTTP payload schema, for callers that do not come through HTTP. */
const validate = (input: WithdrawalRequest) => {
  const errors: Array<FieldError> = []
  const amount = amountProblem(input.amountCents)
  if (amount !== undefined) errors.push(new FieldError({ field: "amountCents", message: amount }))
  if (input.paymentMethod !== "PIX") errors.push(new FieldError({ field: "paymentMethod", message: "must be PIX" }))
  const key = pixKeyProblem(input.paymentDetails.pixKeyType, input.paymentDetails.pixKey)
  if (key !== undefined) errors.push(new FieldError({ field: "paymentDetails.pixKey", message: key }))
  return errors.length === 0 ? Effect.void : Effect.fail(new ValidationError({ errors }))
}

export class Withdrawals extends Effect.Service<Withdrawals>()("app/Withdrawals", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const lock = yield* UserLock
    const ledger = yield* Ledger
    const twoFactor = yield* TwoFactor
    const realtime = yield* Realtime
    const outbox = yield* WebhookOutbox
    const audit = yield* Audit
    const gateway = yield* PaymentGateway
    const columns = sql.literal(COLUMNS)

    /** Rows of statements selecting COLUMNS. */
    const selectRows = (statement: Statement) => rowsOf(Row, statement)
    const selectFirst = (statement: Statement) => firstOf(Row, statement)

    const findById = (id: WithdrawalId) =>
      selectFirst(sql`SELECT ${columns} FROM withdrawals w JOIN users u ON u.id = w.user_id WHERE w.id = ${id}`)

    const balanceOf = (userId: UserId) =>
      sql<{ balanceCents: string }>`SELECT balance_cents FROM users WHERE id = ${userId}`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) =>
          rows.length === 0
            ? Effect.dieMessage(`Withdrawals: user ${userId} does not exist`)
            : Effect.succeed(BigInt(rows[0]!.balanceCents))
        )
      )

    const transaction = inTransaction(sql)

    /** SPEC Withdrawal rule: 2FA on and more than 10000 cents -> a code, and a good one. */
    const checkTwoFactor = (userId: UserId, input: WithdrawalRequest) =>
      Effect.gen(function*() {
        if (input.amountCents <= TWO_FACTOR_THRESHOLD_CENTS) return
        if (!(yield* twoFactor.isEnabled(userId))) return
        const code = input.twoFactorCode?.trim() ?? ""
        if (code === "") return yield* new TwoFactorRequired()
        yield* twoFactor.require(userId, code)
      })

    const request = Effect.fn("Withdrawals.request")(function*(userId: UserId, input: WithdrawalRequest) {
      yield* validate(input)
      const { pixKeyType } = input.paymentDetails
      const pixKey = normalizePixKey(pixKeyType, input.paymentDetails.pixKey)
      return yield* lock.withLock(
        `user:${userId}`,
        Effect.gen(function*() {
          // Checked before the code, so a typo in the amount does not spend a one-time code. The
          // debit below is conditional anyway: this read is a courtesy, not the guard.
          if ((yield* balanceOf(userId)) < input.amountCents) return yield* new InsufficientBalance()
          yield* checkTwoFactor(userId, input)
          const now = new Date(yield* Clock.currentTimeMillis)
          const { balanceCents, row } = yield* transaction(Effect.gen(function*() {
            const [inserted] = yield* sql<{ id: string }>`
              INSERT INTO withdrawals (user_id, amount_cents, payment_method, pix_key_type, pix_key, requested_at)
              VALUES (${userId}, ${input.amountCents}, ${input.paymentMethod}, ${pixKeyType}, ${pixKey}, ${now})
              RETURNING id`
            const id = BigInt(inserted!.id) as WithdrawalId
            const posting = yield* ledger.debit({
              userId,
              type: "WITHDRAWAL",
              amountCents: input.amountCents,
              reference: { type: "WITHDRAWAL", id }
            })
            yield* audit.record({
              userId,
              action: "WITHDRAWAL_REQUESTED",
              entityType: "Withdrawal",
              entityId: id,
              metadata: { amountCents: String(input.amountCents), pixKeyType }
            })
            const row = yield* findById(id)
            return { balanceCents: posting.balanceAfterCents, row: row! }
          }))
          yield* realtime.balanceChanged(userId, balanceCents)
          return { ...view(row), balanceCents }
        })
      )
    })

    /** The user's withdrawals, newest first. */
    const list = Effect.fn("Withdrawals.list")(function*(
      userId: UserId,
      paging: { readonly page: number; readonly limit: number }
    ) {
      const rows = yield* selectRows(sql`
        SELECT ${columns} FROM withdrawals w JOIN users u ON u.id = w.user_id
        WHERE w.user_id = ${userId}
        ORDER BY w.id DESC LIMIT ${paging.limit} OFFSET ${(paging.page - 1) * paging.limit}`)
      const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM withdrawals WHERE user_id = ${userId}`
        .pipe(Effect.orDie)
      return { withdrawals: rows.map(view), total: Number(count!.n), page: paging.page }
    })

    /**
     * Ends a PENDING withdrawal with its refund, in one transaction; `end` is the conditional update
     * (returning the row when it matched). When nothing matched, says why.
     */
    const endWithRefund = (
      id: WithdrawalId,
      end: Effect.Effect<Row | undefined>,
      why: (row: Row | undefined) => Effect.Effect<never, NotFound | BadRequest | Conflict>,
      auditOf: (row: Row) => Parameters<typeof audit.record>[0]
    ) =>
      Effect.gen(function*() {
        const ended = yield* transaction(Effect.gen(function*() {
          const row = yield* end
          if (row === undefined) return undefined
          const posting = yield* ledger.credit({
            userId: row.userId,
            type: "WITHDRAWAL_REFUND",
            amountCents: row.amountCents,
            reference: { type: "WITHDRAWAL", id: row.id }
          })
          yield* audit.record(auditOf(row))
          return { row, balanceCents: posting.balanceAfterCents }
        }))
        if (ended === undefined) return yield* why(yield* findById(id))
        yield* realtime.balanceChanged(ended.row.userId, ended.balanceCents)
        return ended
      })

    /**
     * The owner's cancellation: PENDING and no payout ever attempted. Once an approval has asked the
     * gateway, only an administrator can end it (the money may be on its way).
     */
    const cancel = Effect.fn("Withdrawals.cancel")(function*(userId: UserId, id: WithdrawalId) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const ended = yield* endWithRefund(
        id,
        selectFirst(sql`
          WITH w AS (
            UPDATE withdrawals SET status = 'CANCELLED', processed_at = ${now}
            WHERE id = ${id} AND user_id = ${userId} AND status = 'PENDING'
              AND payout_claim IS NULL AND payout_attempts = 0
            RETURNING *
          )
          SELECT ${columns} FROM w JOIN users u ON u.id = w.user_id`),
        (row) =>
          row === undefined || row.userId !== userId
            ? Effect.fail(NotFound.of("Withdrawal"))
            : row.status !== "PENDING"
            ? Effect.fail(notPending())
            : Effect.fail(new Conflict({ message: "Withdrawal is already being processed" })),
        (row) => ({
          userId,
          action: "WITHDRAWAL_CANCELLED",
          entityType: "Withdrawal",
          entityId: row.id,
          metadata: { amountCents: String(row.amountCents) }
        })
      )
      return { ...view(ended.row), balanceCents: ended.balanceCents }
    })

    /** Every withdrawal, newest first, optionally of one status. */
    const adminList = Effect.fn("Withdrawals.adminList")(function*(query: {
      readonly status?: WithdrawalStatus | undefined
      readonly page: number
      readonly limit: number
    }) {
      const status = query.status ?? null
      const rows = yield* selectRows(sql`
        SELECT ${columns} FROM withdrawals w JOIN users u ON u.id = w.user_id
        WHERE (${status}::text IS NULL OR w.status = ${status}::text)
        ORDER BY w.id DESC LIMIT ${query.limit} OFFSET ${(query.page - 1) * query.limit}`)
      const [count] = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM withdrawals WHERE (${status}::text IS NULL OR status = ${status}::text)`
        .pipe(Effect.orDie)
      return { withdrawals: rows.map(adminView), total: Number(count!.n), page: query.page }
    })

    /** Why an approval could not claim the withdrawal. */
    const unclaimable = (row: Row | undefined) =>
      row === undefined
        ? Effect.fail(NotFound.of("Withdrawal"))
        : row.status !== "PENDING"
        ? Effect.fail(notPending())
        : Effect.fail(inProgress())

    const approve = Effect.fn("Withdrawals.approve")(function*(adminId: UserId, id: WithdrawalId) {
      const token = randomBytes(16).toString("hex")
      const claimedAt = new Date(yield* Clock.currentTimeMillis)
      const staleBefore = new Date(claimedAt.getTime() - PAYOUT_CLAIM_TTL_MS)
      // Committed on its own: from here on, cancel and reject refuse this withdrawal, and so does a
      // second approval (until the claim is released or goes stale).
      const claimed = yield* selectFirst(sql`
        WITH w AS (
          UPDATE withdrawals
          SET payout_claim = ${token}, payout_claimed_at = ${claimedAt}, payout_attempts = payout_attempts + 1
          WHERE id = ${id} AND status = 'PENDING' AND (payout_claim IS NULL OR payout_claimed_at < ${staleBefore})
          RETURNING *
        )
        SELECT ${columns} FROM w JOIN users u ON u.id = w.user_id`)
      if (claimed === undefined) return yield* unclaimable(yield* findById(id))

      // From the claim to the record, not interruptible: a client that hangs up must not leave a
      // payout made and unrecorded.
      const completed = yield* Effect.uninterruptible(Effect.gen(function*() {
        const payout = yield* Effect.either(gateway.payout({
          withdrawalId: claimed.id,
          amountCents: claimed.amountCents,
          pixKeyType: claimed.pixKeyType,
          pixKey: claimed.pixKey
        }))
        const now = new Date(yield* Clock.currentTimeMillis)
        if (Either.isLeft(payout)) {
          const reason = payout.left.message
          yield* transaction(Effect.gen(function*() {
            yield* sql`
              UPDATE withdrawals SET payout_claim = NULL, payout_claimed_at = NULL, payout_error = ${reason}
              WHERE id = ${id} AND payout_claim = ${token}`
            yield* audit.record({
              userId: claimed.userId,
              action: "WITHDRAWAL_PAYOUT_FAILED",
              entityType: "Withdrawal",
              entityId: id,
              metadata: { adminId: String(adminId), error: reason }
            })
          }))
          return Either.left(reason)
        }
        const { payoutId } = payout.right
        return Either.right(yield* transaction(Effect.gen(function*() {
          const row = yield* selectFirst(sql`
            WITH w AS (
              UPDATE withdrawals
              SET status = 'COMPLETED', payout_id = ${payoutId}, processed_at = ${now},
                  payout_claim = NULL, payout_claimed_at = NULL, payout_error = NULL
              WHERE id = ${id} AND status = 'PENDING' AND payout_claim = ${token}
              RETURNING *
            )
            SELECT ${columns} FROM w JOIN users u ON u.id = w.user_id`)
          if (row === undefined) {
            // Our claim went stale and a later approval took over; with the same withdrawalId the
            // gateway paid once, and whoever records first wins. Anything else is a broken invariant.
            const current = yield* findById(id)
            if (current?.status === "COMPLETED") return current
            return yield* Effect.dieMessage(`Withdrawals: lost the claim on withdrawal ${id} after its payout`)
          }
          yield* outbox.enqueue("withdrawal.completed", {
            withdrawalId: String(row.id),
            userId: String(row.userId),
            amountCents: Number(row.amountCents)
          })
          yield* audit.record({
            userId: row.userId,
            action: "WITHDRAWAL_APPROVED",
            entityType: "Withdrawal",
            entityId: row.id,
            metadata: { adminId: String(adminId), payoutId, amountCents: String(row.amountCents) }
          })
          return row
        })))
      }))
      if (Either.isLeft(completed)) {
        return yield* new PayoutFailed({
          message: `Payout failed: ${completed.left}. The withdrawal is still pending.`
        })
      }
      return adminView(completed.right)
    })

    /** The administrator's refusal: PENDING, no payout in flight; refunded in the same transaction. */
    const reject = Effect.fn("Withdrawals.reject")(function*(adminId: UserId, id: WithdrawalId, reason: string) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const ended = yield* endWithRefund(
        id,
        selectFirst(sql`
          WITH w AS (
            UPDATE withdrawals SET status = 'REJECTED', processed_at = ${now}, rejection_reason = ${reason}
            WHERE id = ${id} AND status = 'PENDING' AND payout_claim IS NULL
            RETURNING *
          )
          SELECT ${columns} FROM w JOIN users u ON u.id = w.user_id`),
        unclaimable,
        (row) => ({
          userId: row.userId,
          action: "WITHDRAWAL_REJECTED",
          entityType: "Withdrawal",
          entityId: row.id,
          metadata: { adminId: String(adminId), reason, amountCents: String(row.amountCents) }
        })
      )
      return adminView(ended.row)
    })

    return { request, list, cancel, adminList, approve, reject } as const
  }),
  // TwoFactor lives in DomainLive's upper tier; the outbox may not be in DomainLive yet. Both are
  // memoized by reference, so DomainLive still builds each once.
  dependencies: [TwoFactor.DefaultWithoutDependencies, WebhookOutbox.Default]
}) {}
