/**
 * Withdrawals (docs/rules.md#withdrawals; docs/decisions.md
 * "Withdrawals"). Every movement of money goes through the Ledger, in the same database transaction
 * as the status change it belongs to:
 *
 * - request: under the user's lock, amount and PIX key checked; with 2FA on, a code when the amount
 *   and the last 24 hours' withdrawals exceed 10000 cents or when no payout has gone to the key yet
 *   (docs/rules.md#withdrawal-2fa). Then ONE transaction locks the user's row, checks the 2FA rule again (so
 *   two instances racing cannot both slip under it), inserts the PENDING row, debits it (WITHDRAWAL) and writes a
 *   WITHDRAWAL_REQUESTED notification: a row exists exactly when its money left the balance.
 * - cancel (owner) and reject (administrator): a conditional update `PENDING -> CANCELLED/REJECTED`
 *   and the refund (WITHDRAWAL_REFUND) in one transaction, so a withdrawal is refunded at most once.
 * - approve: `PENDING -> PROCESSING` is committed before the gateway is asked for the payout, so from
 *   then on cancel, reject and a second approval refuse it. The gateway's answer settles it: paid ->
 *   COMPLETED (with the outbound webhook); a clear refusal -> back to PENDING (502 to the
 *   administrator); no answer (timeout, transport, 5xx) -> stays PROCESSING, because the money may
 *   have left. A PROCESSING withdrawal is settled by the gateway's payout event (`payout.paid`,
 *   `payout.failed`) or by a reconciliation that asks the gateway. A failed payout ends FAILED with
 *   its refund, by a conditional update, so it is refunded exactly once.
 * - payAutomatically (JURISDICTION=BR, docs/rules.md#automatic-payout): after a request has committed, a small
 *   withdrawal of a user with no recent security alert takes the approval's path at once, actor `system`.
 * - payOutExcludedBalance (docs/rules.md#excluded-players-balance, D23): a player the self-exclusion registry lists
 *   is paid the whole balance to their last paid-out key: created like a request (one transaction: PENDING row,
 *   WITHDRAWAL debit, audit) by the service, with no 2FA or bounds, then paid like payAutomatically.
 * - the owner is told how it ended (docs/rules.md#withdrawal-outcome-notifications): WITHDRAWAL_COMPLETED,
 *   WITHDRAWAL_REJECTED (with the administrator's reason) or WITHDRAWAL_FAILED (refunded), written in the
 *   transaction of the conditional update that ended it, so a repeated event or reconciliation, which
 *   matches nothing, tells nothing again.
 *
 * Balance and notification pushes go out after the commit.
 */
import { SqlClient, type Statement as SqlStatement } from "@effect/sql"
import { Clock, Context, Effect, Either, Schema } from "effect"
import { AppConfig } from "../../layers/AppConfig"
import { PaymentGateway, withdrawalOfReference } from "../../layers/PaymentGateway"
import { UserLock } from "../../layers/stores/UserLock"
import {
  FieldError,
  InsufficientBalance,
  NotFound,
  type ServiceUnavailable,
  ValidationError
} from "../../schema/platform/Errors"
import { TwoFactorRequired } from "../../schema/identity/TwoFactor"
import { UserId } from "../../schema/platform/Ids"
import { formatBrl, GatewayUnavailable } from "../../schema/money/Money"
import {
  type AdminWithdrawalView,
  amountProblem,
  maskPixKey,
  normalizePixKey,
  type PayoutEvent,
  PayoutFailed,
  pixKeyProblem,
  PixKeyType,
  TWO_FACTOR_THRESHOLD_CENTS,
  TWO_FACTOR_WINDOW_MS,
  WithdrawalBeingProcessed,
  WithdrawalId,
  WithdrawalMethod,
  WithdrawalNotPending,
  WithdrawalNotProcessing,
  WithdrawalPayoutInProgress,
  type WithdrawalRequest,
  type WithdrawalRequested,
  WithdrawalStatus,
  type WithdrawalView
} from "../../schema/money/Withdrawal"
import { Audit } from "../admin/Audit"
import { Ledger } from "./Ledger"
import type { KeyOwner } from "./PixKeyOwners"
import { Notifications } from "../platform/Notifications"
import { Realtime } from "../platform/Realtime"
import { TwoFactor } from "../identity/TwoFactor"
import { WebhookOutbox } from "../platform/WebhookOutbox"
import type { PageRequest, StatusPageRequest } from "../../schema/platform/Pagination"
import {
  execute,
  firstOf,
  inTransaction,
  type NewestFirst,
  newestPage,
  rowCountOf,
  singleOf,
  type Statement
} from "../platform/SqlRows"
import { moneyMovement } from "../../layers/AppMetrics"

/**
 * A reconciliation moves a PROCESSING withdrawal the gateway has never heard of back to PENDING only
 * once its payout was handed over this long ago: the approval's own call (with its retries) may still
 * be on its way to the gateway until then.
 */
const PAYOUT_SETTLE_MS = 2 * 60_000

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
  payoutStartedAt: Schema.NullOr(Schema.DateFromSelf),
  payoutAttempts: Schema.Number,
  payoutError: Schema.NullOr(Schema.String),
  pixKeyOwnerCpfMasked: Schema.NullOr(Schema.String)
})
type Row = typeof Row.Type

const IdRow = Schema.Struct({ id: WithdrawalId })

/** What docs/rules.md#withdrawal-2fa asks of the user's withdrawals. */
const RecentRow = Schema.Struct({ total: Schema.BigInt, paidToKey: Schema.Boolean })

/** Selected from `w` (the withdrawals, or a CTE of updated ones) joined with `u` (users). */
const COLUMNS = `w.id, w.user_id, u.username, w.amount_cents, w.status, w.payment_method, w.pix_key_type, w.pix_key,
  w.payout_id, w.rejection_reason, w.requested_at, w.processed_at, w.payout_started_at, w.payout_attempts, w.payout_error,
  w.pix_key_owner_cpf_masked`

const view = (row: Row): WithdrawalView => ({
  id: row.id,
  amountCents: row.amountCents,
  status: row.status,
  paymentMethod: row.paymentMethod,
  requestedAt: row.requestedAt,
  processedAt: row.processedAt,
  rejectionReason: row.rejectionReason
})

const requested = (row: Row): WithdrawalRequested => ({
  id: row.id,
  amountCents: row.amountCents,
  status: row.status,
  requestedAt: row.requestedAt
})

const adminView = (row: Row): AdminWithdrawalView => ({
  ...view(row),
  user: { id: row.userId, username: row.username },
  pixKeyType: row.pixKeyType,
  pixKey: row.pixKey,
  payoutId: row.payoutId,
  payoutAttempts: row.payoutAttempts,
  payoutError: row.payoutError,
  payoutInProgress: row.status === "PROCESSING",
  ...(row.pixKeyOwnerCpfMasked === null ? {} : { pixKeyOwnerCpf: row.pixKeyOwnerCpfMasked })
})

/** A withdrawal request as `request` validated it: its PIX key normalized and, under BR, the key's owner. */
interface Asked {
  readonly userId: UserId
  readonly input: WithdrawalRequest
  readonly keyOwner: KeyOwner | undefined
  readonly pixKeyType: PixKeyType
  readonly pixKey: string
}

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

/**
 * Run by a request between its first 2FA check and its transaction: nothing, unless a test provides one
 * that holds requests there, so that two instances both pass the first check before either commits.
 */
export class WithdrawalCheckpoint extends Context.Reference<WithdrawalCheckpoint>()("app/Withdrawals/Checkpoint", {
  defaultValue: (): Effect.Effect<void> => Effect.void
}) {}

/** A notification to a withdrawal's owner. */
type Notice = Parameters<Notifications["create"]>[1]

/** How a payout was settled, for the audit trail. */
type SettledBy = "approval" | "automatic" | "excluded" | "event" | "reconcile"

/** Who started a payout: an administrator's approval, or the service itself (docs/rules.md#automatic-payout). */
type Actor = UserId | "system"

/** Names the payout's starter in audit metadata: `adminId`, or `actor: "system"`. */
const actorOf = (actor: Actor): Record<string, string> =>
  actor === "system" ? { actor: "system" } : { adminId: String(actor) }

/** A SECURITY_ALERT this recent keeps a withdrawal from being paid automatically (docs/rules.md#automatic-payout). */
const AUTO_PAYOUT_ALERT_WINDOW_MS = 24 * 60 * 60_000

/** What payOutExcludedBalance did (docs/rules.md#excluded-players-balance). */
export type ExcludedBalancePayout =
  /** A payout of the balance is under way: started now, or already (PENDING or PROCESSING) before. */
  | { readonly _tag: "Started"; readonly withdrawalId: WithdrawalId }
  /** A balance, but no key of the player's was ever paid out to: the `excluded-balance` alert asks an administrator. */
  | { readonly _tag: "NoKey" }
  /** Nothing to pay: the balance is 0. */
  | { readonly _tag: "Empty" }

/** The key of the player's most recent COMPLETED withdrawal, with its owner as checked then. */
const LastKeyRow = Schema.Struct({
  id: WithdrawalId,
  pixKeyType: PixKeyType,
  pixKey: Schema.String,
  pixKeyOwnerCpfMasked: Schema.NullOr(Schema.String)
})
const BalanceRow = Schema.Struct({ balanceCents: Schema.BigInt })

export class Withdrawals extends Effect.Service<Withdrawals>()("app/Withdrawals", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const lock = yield* UserLock
    const ledger = yield* Ledger
    const twoFactor = yield* TwoFactor
    const realtime = yield* Realtime
    const notifications = yield* Notifications
    const outbox = yield* WebhookOutbox
    const audit = yield* Audit
    const gateway = yield* PaymentGateway
    const checkpoint = yield* WithdrawalCheckpoint
    const { autoPayoutMaxCents, jurisdiction } = yield* AppConfig
    const columns = sql.literal(COLUMNS)
    const listed: NewestFirst = {
      table: "withdrawals",
      alias: "w",
      select: sql`SELECT ${columns} FROM withdrawals w JOIN users u ON u.id = w.user_id`
    }

    /** The row of a statement selecting COLUMNS. */
    const selectFirst = (statement: Statement) => firstOf(Row, statement)

    const byId = (id: WithdrawalId) => sql`SELECT ${columns} FROM withdrawals w JOIN users u ON u.id = w.user_id WHERE w.id = ${id}`
    const findById = (id: WithdrawalId) => selectFirst(byId(id))
    /** A withdrawal this operation has already found (withdrawals are never deleted): none is a defect. */
    const existing = (id: WithdrawalId) => singleOf(Row, byId(id))

    /** `UPDATE withdrawals SET ... WHERE ... RETURNING *`: the row in COLUMNS' shape, if it matched. */
    const updateOne = (update: SqlStatement.Fragment) =>
      selectFirst(sql`WITH w AS (${update}) SELECT ${columns} FROM w JOIN users u ON u.id = w.user_id`)

    const balanceOf = (userId: UserId) =>
      Effect.flatMap(ledger.balanceOf(userId), (balanceCents) =>
        balanceCents === undefined
          ? Effect.dieMessage(`Withdrawals: user ${userId} does not exist`)
          : Effect.succeed(balanceCents))

    const transaction = inTransaction(sql)

    /**
     * docs/rules.md#withdrawal-2fa: with 2FA on, a code is needed when the amount and the user's withdrawals of
     * the last 24 hours (not refunded) exceed the threshold, or when no payout has gone to the key yet.
     */
    const codeNeeded = Effect.fnUntraced(function*(userId: UserId, amountCents: bigint, pixKeyType: PixKeyType, pixKey: string, now: number) {
      if (!(yield* twoFactor.isEnabled(userId))) return false
      const recent = yield* singleOf(RecentRow, sql`
          SELECT
            COALESCE(sum(amount_cents) FILTER (
              WHERE status IN ('PENDING', 'PROCESSING', 'COMPLETED') AND requested_at > ${new Date(now - TWO_FACTOR_WINDOW_MS)}
            ), 0)::text AS total,
            COALESCE(bool_or(status = 'COMPLETED' AND pix_key_type = ${pixKeyType} AND pix_key = ${pixKey}), false) AS paid_to_key
          FROM withdrawals WHERE user_id = ${userId}`)
      return recent.total + amountCents > TWO_FACTOR_THRESHOLD_CENTS || !recent.paidToKey
    })

    /** `R$ 12.34 to the PIX key (EMAIL) m***@example.com`: the amount and the masked key (docs/rules.md#withdrawal-notification). */
    const amountToKey = (amountCents: bigint, pixKeyType: PixKeyType, pixKey: string) =>
      `${formatBrl(amountCents)} to the PIX key (${pixKeyType}) ${maskPixKey(pixKeyType, pixKey)}`

    const requestedNotice = (amountCents: bigint, pixKeyType: PixKeyType, pixKey: string): Notice => ({
      type: "WITHDRAWAL_REQUESTED",
      title: "Withdrawal requested",
      message: `A withdrawal of ${amountToKey(amountCents, pixKeyType, pixKey)} ` +
        "was requested. If this was not you, cancel it and sign out of all sessions."
    })

    /** How a withdrawal ended, told to its owner (docs/rules.md#withdrawal-outcome-notifications). */
    const completedNotice = (row: Row): Notice => ({
      type: "WITHDRAWAL_COMPLETED",
      title: "Withdrawal completed",
      message: `Your withdrawal of ${amountToKey(row.amountCents, row.pixKeyType, row.pixKey)} was paid out.`
    })

    const rejectedNotice = (reason: string) => (row: Row): Notice => ({
      type: "WITHDRAWAL_REJECTED",
      title: "Withdrawal rejected",
      message: `Your withdrawal of ${amountToKey(row.amountCents, row.pixKeyType, row.pixKey)} was rejected, and ` +
        `${formatBrl(row.amountCents)} was returned to your balance. Reason: ${reason}`
    })

    const failedNotice = (reason: string) => (row: Row): Notice => ({
      type: "WITHDRAWAL_FAILED",
      title: "Withdrawal failed",
      message: `Your withdrawal of ${amountToKey(row.amountCents, row.pixKeyType, row.pixKey)} could not be paid out, and ` +
        `${formatBrl(row.amountCents)} was returned to your balance. Reason: ${reason}`
    })

    /**
     * `keyOwner`: under BR, the key's owner as PixKeyOwners.check found it before (docs/rules.md#pix-key-owner),
     * stored with the withdrawal.
     */
    const request = Effect.fn("Withdrawals.request")(function*(userId: UserId, input: WithdrawalRequest, keyOwner?: KeyOwner) {
      yield* validate(input)
      const { pixKeyType } = input.paymentDetails
      const pixKey = normalizePixKey(pixKeyType, input.paymentDetails.pixKey)
      return yield* lock.withLock(`user:${userId}`, requestLocked({ userId, input, keyOwner, pixKeyType, pixKey }))
    })

    /** What `request` does under the user's lock: the balance and the 2FA code checked, then the withdrawal made. */
    const requestLocked = Effect.fnUntraced(function*(asked: Asked) {
      const { input, pixKey, pixKeyType, userId } = asked
      // Checked before the code, so a typo in the amount does not spend a one-time code. The
      // debit below is conditional anyway: this read is a courtesy, not the guard.
      if ((yield* balanceOf(userId)) < input.amountCents) return yield* new InsufficientBalance()
      const now = yield* Clock.currentTimeMillis
      const withCode = yield* codeNeeded(userId, input.amountCents, pixKeyType, pixKey, now)
      if (withCode) {
        const code = input.twoFactorCode?.trim() ?? ""
        if (code === "") return yield* new TwoFactorRequired()
        yield* twoFactor.require(userId, code)
      }
      yield* checkpoint
      const { balanceCents, notification, row } = yield* transaction(
        requestInTransaction(asked, withCode, now)
      )
      yield* realtime.balanceChanged(userId, balanceCents)
      yield* notifications.push(userId, notification)
      yield* moneyMovement("withdrawal", "requested", input.amountCents)
      return requested(row)
    })

    /** What `request` runs in its transaction: the user's row locked, the 2FA rule asked again, the withdrawal made. */
    const requestInTransaction = Effect.fnUntraced(function*(asked: Asked, withCode: boolean, now: number) {
      const { input, keyOwner, pixKey, pixKeyType, userId } = asked
      // Requests of one user take turns from here, even on instances that share no lock; the
      // rule is asked again of what is committed now.
      yield* execute(sql`SELECT id FROM users WHERE id = ${userId} FOR UPDATE`)
      if (!withCode && (yield* codeNeeded(userId, input.amountCents, pixKeyType, pixKey, now))) {
        return yield* new TwoFactorRequired()
      }
      const { id } = yield* singleOf(IdRow, sql`
        INSERT INTO withdrawals (user_id, amount_cents, payment_method, pix_key_type, pix_key, requested_at,
                                 pix_key_owner_cpf_masked)
        VALUES (${userId}, ${input.amountCents}, ${input.paymentMethod}, ${pixKeyType}, ${pixKey}, ${new Date(now)},
                ${keyOwner?.ownerCpfMasked ?? null})
        RETURNING id`)
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
        metadata: { amountCents: String(input.amountCents), pixKeyType, twoFactor: withCode }
      })
      const notification = yield* notifications.create(userId, requestedNotice(input.amountCents, pixKeyType, pixKey))
      const row = yield* singleOf(Row, byId(id))
      return { balanceCents: posting.balanceAfterCents, notification, row }
    })

    /** The user's withdrawals, newest first. */
    const list = Effect.fn("Withdrawals.list")(function*(
      userId: UserId,
      paging: PageRequest
    ) {
      const { items, page, total } = yield* newestPage(sql, Row, listed, paging, { user_id: userId })
      return { withdrawals: items.map(view), total, page }
    })

    /**
     * Ends a withdrawal with its refund, in one transaction; `end` is the conditional update
     * (returning the row when it matched), `noticeOf` what its owner is told, if anything. Undefined
     * when nothing matched.
     */
    const endWithRefund = Effect.fnUntraced(function*(end: Effect.Effect<Row | undefined, ServiceUnavailable>, auditOf: (row: Row) => Parameters<typeof audit.record>[0], noticeOf?: (row: Row) => Notice) {
      const ended = yield* transaction(endWithRefundInTransaction(end, auditOf, noticeOf))
      if (ended !== undefined) {
        yield* realtime.balanceChanged(ended.row.userId, ended.balanceCents)
        if (ended.notification !== undefined) yield* notifications.push(ended.row.userId, ended.notification)
      }
      return ended
    })

    /** What `endWithRefund` runs in its transaction: the end, then its refund, audit and notice. */
    const endWithRefundInTransaction = Effect.fnUntraced(function*(
      end: Effect.Effect<Row | undefined, ServiceUnavailable>,
      auditOf: (row: Row) => Parameters<typeof audit.record>[0], noticeOf: ((row: Row) => Notice) | undefined
    ) {
      const row = yield* end
      if (row === undefined) return undefined
      const posting = yield* ledger.credit({
        userId: row.userId,
        type: "WITHDRAWAL_REFUND",
        amountCents: row.amountCents,
        reference: { type: "WITHDRAWAL", id: row.id }
      })
      yield* audit.record(auditOf(row))
      const notification = noticeOf === undefined ? undefined : yield* notifications.create(row.userId, noticeOf(row))
      return { row, balanceCents: posting.balanceAfterCents, notification }
    })

    /**
     * The owner's cancellation: PENDING and no payout ever attempted. Once an approval has asked the
     * gateway, only an administrator can end it (the money may be on its way).
     */
    const cancel = Effect.fn("Withdrawals.cancel")(function*(userId: UserId, id: WithdrawalId) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const ended = yield* endWithRefund(
        updateOne(sql`
          UPDATE withdrawals SET status = 'CANCELLED', processed_at = ${now}
          WHERE id = ${id} AND user_id = ${userId} AND status = 'PENDING' AND payout_attempts = 0 AND NOT excluded_payout
          RETURNING *`),
        (row) => ({
          userId,
          action: "WITHDRAWAL_CANCELLED",
          entityType: "Withdrawal",
          entityId: row.id,
          metadata: { amountCents: String(row.amountCents) }
        })
      )
      if (ended === undefined) {
        const row = yield* findById(id)
        if (row === undefined || row.userId !== userId) return yield* NotFound.of("Withdrawal")
        if (row.status === "PENDING" || row.status === "PROCESSING") {
          return yield* new WithdrawalBeingProcessed()
        }
        return yield* new WithdrawalNotPending()
      }
      return { ...view(ended.row), balanceCents: ended.balanceCents }
    })

    /** Every withdrawal (or one user's), newest first, optionally of one status. */
    const adminList = Effect.fn("Withdrawals.adminList")(function*(query: StatusPageRequest<WithdrawalStatus> & { readonly userId?: UserId | undefined }) {
      const { items, page, total } = yield* newestPage(sql, Row, listed, query, { status: query.status, user_id: query.userId })
      return { withdrawals: items.map(adminView), total, page }
    })

    /** Why an administrator's action on a PENDING withdrawal found it in another state. */
    const notActionable = (row: Row | undefined) =>
      row === undefined
        ? Effect.fail(NotFound.of("Withdrawal"))
        : row.status === "PROCESSING"
        ? Effect.fail(new WithdrawalPayoutInProgress())
        : Effect.fail(new WithdrawalNotPending())

    /** A payout event that contradicts what is recorded: kept for a person to look at, never acted on. */
    const conflict = Effect.fnUntraced(function*(row: Row, reported: string, by: SettledBy) {
      yield* Effect.logError(`Withdrawal ${row.id}: the gateway reports the payout ${reported}, but it is ${row.status}`)
      yield* audit.record({
        userId: row.userId,
        action: "WITHDRAWAL_PAYOUT_CONFLICT",
        entityType: "Withdrawal",
        entityId: row.id,
        metadata: { status: row.status, reported, by }
      })
      return row
    })

    /**
     * The gateway paid: PROCESSING (or PENDING after a payout that looked refused) -> COMPLETED with
     * the outbound webhook. Already COMPLETED: nothing to do. Refunded meanwhile: a conflict.
     */
    const complete = Effect.fnUntraced(function*(id: WithdrawalId, payoutId: string, by: SettledBy, actor?: Actor) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const completed = yield* transaction(completeInTransaction(id, payoutId, now, by, actor))
      if (completed !== undefined) {
        yield* notifications.push(completed.row.userId, completed.notification)
        return yield* Effect.as(moneyMovement("withdrawal", "completed", completed.row.amountCents), completed.row)
      }
      const current = (yield* existing(id))
      return current.status === "COMPLETED" ? current : yield* conflict(current, "paid", by)
    })

    /** What `complete` runs in its transaction: COMPLETED with its webhook, audit and notice; undefined otherwise. */
    const completeInTransaction = Effect.fnUntraced(function*(
      id: WithdrawalId,
      payoutId: string,
      now: Date,
      by: SettledBy,
      actor: Actor | undefined
    ) {
      const row = yield* updateOne(sql`
          UPDATE withdrawals SET status = 'COMPLETED', payout_id = ${payoutId}, processed_at = ${now}, payout_error = NULL
          WHERE id = ${id} AND (status = 'PROCESSING' OR (status = 'PENDING' AND payout_attempts > 0))
          RETURNING *`)
      if (row === undefined) return undefined
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
        metadata: {
          ...(actor === undefined ? {} : actorOf(actor)),
          payoutId,
          amountCents: String(row.amountCents),
          by
        }
      })
      return { row, notification: yield* notifications.create(row.userId, completedNotice(row)) }
    })

    /**
     * The gateway reports the payout failed: PROCESSING -> FAILED with its refund, once. A reconciliation's answer is
     * about the attempt it read (`attempt`): once another attempt has started, it moves nothing.
     */
    const fail = Effect.fnUntraced(function*(id: WithdrawalId, reason: string, by: SettledBy, attempt?: number) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const ended = yield* endWithRefund(
        updateOne(sql`
            UPDATE withdrawals SET status = 'FAILED', processed_at = ${now}, rejection_reason = ${`Payout failed: ${reason}`},
                                   payout_error = ${reason}
            WHERE id = ${id} AND status = 'PROCESSING'${attempt === undefined ? sql`` : sql` AND payout_attempts = ${attempt}`}
            RETURNING *`),
        (row) => ({
          userId: row.userId,
          action: "WITHDRAWAL_FAILED",
          entityType: "Withdrawal",
          entityId: row.id,
          metadata: { reason, amountCents: String(row.amountCents), by }
        }),
        failedNotice(reason)
      )
      if (ended !== undefined) return ended.row
      const current = (yield* existing(id))
      // Failed or refused before (PENDING, ended): told again. Paid: a contradiction.
      return current.status === "COMPLETED" ? yield* conflict(current, "failed", by) : current
    })

    /**
     * PROCESSING -> PENDING: nothing was paid (refused, or unknown to the gateway); the administrator decides. Only the
     * attempt of `row`: an answer about it that comes late (a slow refusal, a slow reconciliation) must not put a later
     * attempt, which the gateway may be paying, back in the queue to be rejected and refunded.
     */
    const reopen = Effect.fnUntraced(function*(row: Row, reason: string, actor: Actor, by: SettledBy) {
      const reopened = yield* transaction(reopenInTransaction(row, reason, actor, by))
      return reopened ?? (yield* existing(row.id))
    })

    /** What `reopen` runs in its transaction: PROCESSING -> PENDING, audited; undefined when not PROCESSING at that attempt. */
    const reopenInTransaction = Effect.fnUntraced(function*(row: Row, reason: string, actor: Actor, by: SettledBy) {
      const updated = yield* updateOne(sql`
          UPDATE withdrawals SET status = 'PENDING', payout_error = ${reason}
          WHERE id = ${row.id} AND status = 'PROCESSING' AND payout_attempts = ${row.payoutAttempts}
          RETURNING *`)
      if (updated !== undefined) {
        yield* audit.record({
          userId: row.userId,
          action: "WITHDRAWAL_PAYOUT_FAILED",
          entityType: "Withdrawal",
          entityId: row.id,
          metadata: { ...actorOf(actor), error: reason, by }
        })
      }
      return updated
    })

    /**
     * Asks the gateway for the payout of a withdrawal just moved to PROCESSING (committed) and records the answer:
     * paid -> COMPLETED (right); a clear refusal -> back to PENDING (left: the gateway's message), unless a later attempt
     * started meanwhile (right: as it is); no answer -> stays PROCESSING (right), the money may have left. From the call
     * to the record, not interruptible: a client that hangs up must not leave a payout made and unrecorded. Shared by
     * the approval and the automatic payout.
     */
    const payOut = Effect.fnUntraced(function*(started: Row, actor: Actor, by: SettledBy) {
      const id = started.id
      const payout = yield* Effect.either(gateway.payout({
        withdrawalId: started.id,
        amountCents: started.amountCents,
        pixKeyType: started.pixKeyType,
        pixKey: started.pixKey
      }))
      if (Either.isRight(payout)) return Either.right(yield* complete(id, payout.right.payoutId, by, actor))
      if (payout.left._tag === "PayoutRefused") {
        const now = yield* reopen(started, payout.left.message, actor, by)
        // Refused after another attempt started (or the payout was settled meanwhile): answered as it is now.
        return now.status === "PENDING" && now.payoutAttempts === started.payoutAttempts
          ? Either.left(payout.left.message)
          : Either.right(now)
      }
      // No answer: the money may have left. PROCESSING until the gateway's event or a reconciliation.
      const unknown = `No answer from the gateway (${payout.left.message}); waiting for its payout event`
      return Either.right(
        yield* transaction(payoutUnconfirmedInTransaction(started, id, actor, unknown, payout.left.message))
      )
    }, (effect) => effect.pipe(Effect.uninterruptible))

    /** `payOut` with no answer from the gateway: the withdrawal stays PROCESSING, with why, audited. */
    const payoutUnconfirmedInTransaction = Effect.fnUntraced(function*(
      started: Row,
      id: WithdrawalId,
      actor: Actor,
      unknown: string,
      error: string
    ) {
      const row = yield* updateOne(sql`
        UPDATE withdrawals SET payout_error = ${unknown}
        WHERE id = ${id} AND status = 'PROCESSING' AND payout_attempts = ${started.payoutAttempts}
        RETURNING *`)
      yield* audit.record({
        userId: started.userId,
        action: "WITHDRAWAL_PAYOUT_UNCONFIRMED",
        entityType: "Withdrawal",
        entityId: id,
        metadata: { ...actorOf(actor), error }
      })
      return row ?? (yield* existing(id))
    })

    const approve = Effect.fn("Withdrawals.approve")(function*(adminId: UserId, id: WithdrawalId) {
      const startedAt = new Date(yield* Clock.currentTimeMillis)
      // Committed before the gateway is asked: from here on cancel, reject and other approvals refuse this withdrawal.
      // With the administrator audited, so that a payout whose outcome a crash left unrecorded still names who started it.
      // An earlier attempt's error is cleared: payoutError speaks of the current attempt (the audit keeps the history).
      const started = yield* transaction(Effect.tap(
        updateOne(sql`
          UPDATE withdrawals
          SET status = 'PROCESSING', payout_started_at = ${startedAt}, payout_attempts = payout_attempts + 1,
              payout_error = NULL
          WHERE id = ${id} AND status = 'PENDING'
          RETURNING *`),
        (row) =>
          row === undefined ? Effect.void : audit.record({
            userId: row.userId,
            action: "WITHDRAWAL_PAYOUT_STARTED",
            entityType: "Withdrawal",
            entityId: row.id,
            metadata: { ...actorOf(adminId), attempt: row.payoutAttempts, amountCents: String(row.amountCents) }
          })
      ))
      if (started === undefined) return yield* notActionable(yield* findById(id))
      const settled = yield* payOut(started, adminId, "approval")
      if (Either.isLeft(settled)) {
        return yield* new PayoutFailed({ message: `Payout failed: ${settled.left}. The withdrawal is still pending.` })
      }
      return adminView(settled.right)
    })

    /**
     * The service's own payout of a committed withdrawal never attempted (docs/rules.md#automatic-payout): PENDING ->
     * PROCESSING committed on its own, as an approval's (from then on cancel, reject and approvals refuse it), then the
     * gateway with `system` as the actor. Refused or unanswered, it waits PENDING or PROCESSING. The row as it then is.
     */
    const startPayout = Effect.fnUntraced(function*(userId: UserId, id: WithdrawalId, now: number, by: "automatic" | "excluded") {
      const started = yield* updateOne(sql`
          UPDATE withdrawals
          SET status = 'PROCESSING', payout_started_at = ${new Date(now)}, payout_attempts = payout_attempts + 1
          WHERE id = ${id} AND user_id = ${userId} AND status = 'PENDING' AND payout_attempts = 0
          RETURNING *`)
      if (started === undefined) return yield* existing(id)
      const settled = yield* payOut(started, "system", by)
      if (Either.isLeft(settled)) {
        yield* Effect.logWarning(`Withdrawal ${id}: the ${by} payout was refused (${settled.left}); it waits for an administrator`)
        return yield* existing(id)
      }
      if (settled.right.status === "PROCESSING") {
        yield* Effect.logWarning(`Withdrawal ${id}: no answer from the gateway to the ${by} payout; it waits for the payout event or a reconciliation`)
      }
      return settled.right
    })

    /**
     * docs/rules.md#automatic-payout: under JURISDICTION=BR, once a request has committed (its transaction, and the
     * one of its Idempotency-Key, if any) and its user lock is released, a withdrawal of at most AUTO_PAYOUT_MAX_CENTS
     * whose owner has had no SECURITY_ALERT in the last 24 hours goes the way of an approval (PENDING -> PROCESSING ->
     * the gateway), with `system` as its actor; only one never attempted, so a replayed request or an administrator
     * who got there first is left alone. It never fails: refused, unanswered or not attempted (the database down),
     * the withdrawal waits, PENDING or PROCESSING, for an administrator or a reconciliation (the payout-deadline
     * alert watches it), and the request still answers 201 with the withdrawal as it is then.
     */
    const payAutomatically = Effect.fn("Withdrawals.payAutomatically")(function*(userId: UserId, answer: WithdrawalRequested) {
      if (jurisdiction !== "BR" || answer.amountCents > BigInt(autoPayoutMaxCents)) return answer
      return yield* payAutomaticallyNow(userId, answer).pipe(
        // Started, it is not cut off half-way by a client that hangs up.
        Effect.uninterruptible,
        Effect.catchAllCause((cause) =>
          Effect.as(
            Effect.logWarning(`Withdrawal ${answer.id}: the automatic payout did not go through; it waits for an administrator`, cause),
            answer
          ))
      )
    })

    /** `payAutomatically` of a withdrawal it applies to: its payout, unless its owner had a security alert lately. */
    const payAutomaticallyNow = Effect.fnUntraced(function*(userId: UserId, answer: WithdrawalRequested) {
      const now = yield* Clock.currentTimeMillis
      const alerted = yield* rowCountOf(sql`
        SELECT 1 FROM notifications
        WHERE user_id = ${userId} AND type = 'SECURITY_ALERT' AND created_at > ${new Date(now - AUTO_PAYOUT_ALERT_WINDOW_MS)}
        LIMIT 1`)
      if (alerted > 0) {
        yield* Effect.logDebug(`Withdrawal ${answer.id}: a security alert in the last 24 hours; it waits for an administrator`)
        return answer
      }
      return requested(yield* startPayout(userId, answer.id, now, "automatic"))
    })

    const excludedNotice = (amountCents: bigint, pixKeyType: PixKeyType, pixKey: string): Notice => ({
      type: "WITHDRAWAL_REQUESTED",
      title: "Balance paid out",
      message: `You are listed in the centralized self-exclusion registry, so your whole balance, ` +
        `${amountToKey(amountCents, pixKeyType, pixKey)} you were last paid to, is being paid out to you.`
    })

    /**
     * docs/rules.md#excluded-players-balance (D23): the centralized registry lists the player, so the WHOLE balance is
     * paid out to the player's last used own key = the key (type and key) of their withdrawal COMPLETED most
     * recently (by `processed_at`, then id) — a key money actually reached; under JURISDICTION=BR only one whose
     * owner was checked to be the account holder (`pix_key_owner_cpf_masked` set), whose masked CPF is reused.
     * Under the user's lock, in ONE transaction that locks the user's row: an unpaid (PENDING or PROCESSING) payout
     * of this kind already there -> Started with it (a PENDING one never attempted is started now); a balance of 0
     * -> Empty; no such key -> NoKey (the dashboard's `excluded-balance` alert asks an administrator); else the
     * withdrawal of the balance read under that lock (no 2FA, no minimum, maximum or daily limit), its conditional
     * WITHDRAWAL debit, audit WITHDRAWAL_EXCLUDED_PAYOUT (actor `system`) and a notice to the player. After the
     * commit, paid like payAutomatically (PROCESSING, the gateway, actor `system`); its failure to start is logged
     * and left to an administrator or the next call, the answer is still Started.
     */
    const payOutExcludedBalance = Effect.fn("Withdrawals.payOutExcludedBalance")(function*(userId: UserId) {
      const created = yield* lock.withLock(
        `user:${userId}`,
        payOutExcludedLocked(userId)
      )
      const { now, outcome } = created
      const result: ExcludedBalancePayout = outcome._tag === "Started"
        ? { _tag: "Started", withdrawalId: outcome.withdrawalId }
        : outcome
      if (result._tag !== "Started") return result
      // After the commit and the lock, as a request's automatic payout; one already attempted (refused, and waiting
      // PENDING for an administrator, or PROCESSING) is left as it is by startPayout's `payout_attempts = 0`.
      yield* startPayout(userId, result.withdrawalId, now, "excluded").pipe(
        Effect.uninterruptible,
        Effect.catchAllCause((cause) =>
          Effect.logWarning(
            `Withdrawal ${result.withdrawalId}: the payout of an excluded player's balance did not start; it waits for an administrator`,
            cause
          ))
      )
      return result
    })

    /** What `payOutExcludedBalance` does under the user's lock: the payout committed, its balance and notice pushed. */
    const payOutExcludedLocked = Effect.fnUntraced(function*(userId: UserId) {
      const now = yield* Clock.currentTimeMillis
      const outcome = yield* transaction(payOutExcludedInTransaction(userId, now))
      if (outcome._tag === "Started" && outcome.fresh !== undefined) {
        yield* realtime.balanceChanged(userId, outcome.fresh.balanceCents)
        yield* notifications.push(userId, outcome.fresh.notification)
        yield* moneyMovement("withdrawal", "requested", outcome.fresh.amountCents)
      }
      return { outcome, now }
    })

    /** What `payOutExcludedLocked` runs in its transaction: the user's row locked, then the payout found or made. */
    const payOutExcludedInTransaction = Effect.fnUntraced(function*(userId: UserId, now: number) {
      const locked = yield* firstOf(BalanceRow, sql`SELECT balance_cents FROM users WHERE id = ${userId} FOR UPDATE`)
      if (locked === undefined) return yield* Effect.dieMessage(`Withdrawals: user ${userId} does not exist`)
      const unpaid = yield* firstOf(IdRow, sql`
        SELECT id FROM withdrawals
        WHERE user_id = ${userId} AND excluded_payout AND status IN ('PENDING', 'PROCESSING')`)
      if (unpaid !== undefined) return { _tag: "Started", withdrawalId: unpaid.id, fresh: undefined } as const
      const amountCents = locked.balanceCents
      if (amountCents <= 0n) return { _tag: "Empty" } as const
      const key = yield* firstOf(LastKeyRow, sql`
        SELECT id, pix_key_type, pix_key, pix_key_owner_cpf_masked FROM withdrawals
        WHERE user_id = ${userId} AND status = 'COMPLETED'
          AND (${jurisdiction !== "BR"} OR pix_key_owner_cpf_masked IS NOT NULL)
        ORDER BY processed_at DESC, id DESC
        LIMIT 1`)
      if (key === undefined) return { _tag: "NoKey" } as const
      const { id } = yield* singleOf(IdRow, sql`
        INSERT INTO withdrawals (user_id, amount_cents, payment_method, pix_key_type, pix_key, requested_at,
                                 pix_key_owner_cpf_masked, excluded_payout)
        VALUES (${userId}, ${amountCents}, 'PIX', ${key.pixKeyType}, ${key.pixKey}, ${new Date(now)},
                ${key.pixKeyOwnerCpfMasked}, true)
        RETURNING id`)
      // The balance was read under the row's lock: the conditional debit takes exactly it.
      const posting = yield* ledger.debit({
        userId,
        type: "WITHDRAWAL",
        amountCents,
        reference: { type: "WITHDRAWAL", id }
      }).pipe(Effect.catchTag("InsufficientBalance", () =>
        Effect.dieMessage(`Withdrawals: the locked balance of user ${userId} changed under its lock`)))
      yield* audit.record({
        userId,
        action: "WITHDRAWAL_EXCLUDED_PAYOUT",
        entityType: "Withdrawal",
        entityId: id,
        metadata: {
          actor: "system",
          amountCents: String(amountCents),
          pixKeyType: key.pixKeyType,
          keyOfWithdrawal: String(key.id)
        }
      })
      const notification = yield* notifications.create(userId, excludedNotice(amountCents, key.pixKeyType, key.pixKey))
      return {
        _tag: "Started",
        withdrawalId: id,
        fresh: { balanceCents: posting.balanceAfterCents, notification, amountCents }
      } as const
    })

    /** The administrator's refusal: PENDING only (not while PROCESSING); refunded in the same transaction. */
    const reject = Effect.fn("Withdrawals.reject")(function*(adminId: UserId, id: WithdrawalId, reason: string) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const ended = yield* endWithRefund(
        updateOne(sql`
          UPDATE withdrawals SET status = 'REJECTED', processed_at = ${now}, rejection_reason = ${reason}
          WHERE id = ${id} AND status = 'PENDING'
          RETURNING *`),
        (row) => ({
          userId: row.userId,
          action: "WITHDRAWAL_REJECTED",
          entityType: "Withdrawal",
          entityId: row.id,
          metadata: { adminId: String(adminId), reason, amountCents: String(row.amountCents) }
        }),
        rejectedNotice(reason)
      )
      if (ended === undefined) return yield* notActionable(yield* findById(id))
      return adminView(ended.row)
    })

    /**
     * Settles a PROCESSING withdrawal with what the gateway says about its payout: paid -> COMPLETED,
     * failed -> FAILED and refunded, still processing -> unchanged, never received (and handed over
     * more than PAYOUT_SETTLE_MS ago) -> PENDING again. Failed and never received apply to the attempt read before
     * asking: the gateway's answer may come after another reconciliation reopened it and an approval started the next.
     */
    const reconcile = Effect.fn("Withdrawals.reconcile")(function*(adminId: UserId, id: WithdrawalId) {
      const row = yield* findById(id)
      if (row === undefined) return yield* NotFound.of("Withdrawal")
      if (row.status !== "PROCESSING") return yield* new WithdrawalNotProcessing()
      const status = yield* gateway.payoutStatus(row.id).pipe(Effect.orElseFail(() => new GatewayUnavailable()))
      const now = yield* Clock.currentTimeMillis
      switch (status._tag) {
        case "Paid":
          return adminView(yield* complete(id, status.payoutId, "reconcile", adminId))
        case "Failed":
          return adminView(yield* fail(id, status.reason, "reconcile", row.payoutAttempts))
        case "Unknown":
          if (row.payoutStartedAt !== null && row.payoutStartedAt.getTime() <= now - PAYOUT_SETTLE_MS) {
            return adminView(yield* reopen(row, "The gateway has no payout for this withdrawal", adminId, "reconcile"))
          }
          return adminView(row)
        case "Processing":
          return adminView(row)
      }
    })

    /** `payout.paid` / `payout.failed` from the gateway's signed callback (docs/rules.md#payout-events). */
    const handlePayoutEvent = Effect.fn("Withdrawals.handlePayoutEvent")(function*(event: PayoutEvent) {
      const withdrawalId = withdrawalOfReference(event.data.reference)
      const row = withdrawalId === undefined ? undefined : yield* findById(withdrawalId as WithdrawalId)
      if (row === undefined) return yield* NotFound.of("Withdrawal")
      if (event.event === "payout.paid") yield* complete(row.id, event.data.id, "event")
      else yield* fail(row.id, event.data.failReason ?? "reported by the gateway", "event")
    })

    return { request, payAutomatically, payOutExcludedBalance, list, cancel, adminList, approve, reject, reconcile, handlePayoutEvent } as const
  }),
  dependencies: [Ledger.Default, TwoFactor.Default, Realtime.Default, Notifications.Default, WebhookOutbox.Default, Audit.Default]
}) {}
