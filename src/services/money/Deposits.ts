/**
 * Deposits (docs/rules.md#deposits; docs/decisions.md "Deposits").
 *
 * - initiate: the gateway creates the charge first (nothing to undo if it fails), then the PENDING
 *   row stores its externalId, expiry and payment code. The charge is for amountCents + feeCents (the
 *   method's fee, paid on top, docs/rules.md#deposit-fees); confirmation credits amountCents. The fee is
 *   outside money that never reaches a balance, so it has no ledger row: it is kept on the deposit.
 * - confirmation (gateway charge.paid, or an administrator): the row is locked, moved to CONFIRMED,
 *   and in the SAME transaction credited through the Ledger (DEPOSIT), notified (DEPOSIT_CONFIRMED),
 *   audited (DEPOSIT_CONFIRMED) and queued for the outbound webhook deposit.confirmed. A deposit is
 *   CONFIRMED at most once, so duplicate or concurrent callbacks credit once; the realtime pushes go
 *   out after the commit.
 * - charge.failed / charge.expired / the expiry job: PENDING -> FAILED / EXPIRED by conditional
 *   updates; nothing moves money.
 * - cancel (the owner): the gateway cancels the charge first, so it can no longer be paid, then
 *   PENDING -> CANCELLED. A charge the gateway reports paid is not cancelled: charge.paid confirms it.
 *
 * The gateway has the last word on money received: charge.paid also confirms a deposit that our
 * expiry job (or an earlier failure event) had already closed, so a late callback never swallows
 * a payment. Administrators confirm only PENDING deposits (docs/rules.md#admin-deposit-confirmation).
 *
 * Under JURISDICTION=BR (docs/rules.md#deposits-br; docs/decisions.md "Third-party deposits refunded"): PIX only,
 * and a charge.paid whose payer (`payerDocument`) is not the account holder is never credited. In the callback's
 * transaction the deposit becomes REFUND_PENDING (audited DEPOSIT_THIRD_PARTY); after the commit the gateway is
 * asked to return the payment (idempotent on `deposit-<id>`), and once it accepts, REFUND_PENDING -> REFUNDED
 * (notified DEPOSIT_REFUNDED, audited DEPOSIT_REFUNDED) by a conditional update. A crash or a failed refund call
 * leaves REFUND_PENDING, which the refund job (every minute) and any later charge.paid ask again.
 *
 * In every jurisdiction (docs/rules.md#deposit-excluded; docs/responsible-gaming.md#self-exclusion): a charge.paid for a
 * deposit whose owner is excluded at that moment (self-excluded, or listed by the registry) is never credited either.
 * It takes the same path: REFUND_PENDING (audited DEPOSIT_EXCLUDED), the refund asked after the commit. When both
 * apply under BR, the third-party rule is checked first (the payer is the reason the money goes back). The reason is
 * kept on the row (`refund_reason`: THIRD_PARTY or SELF_EXCLUDED) so the refund job, later, tells the owner the right
 * one. An administrator cannot confirm an excluded owner's deposit: 403 SELF_EXCLUDED, nothing credited.
 */
import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Clock, Effect, Schema } from "effect"
import { randomBytes, timingSafeEqual } from "node:crypto"
import { AppConfig } from "../../layers/AppConfig"
import { PaymentGateway } from "../../layers/PaymentGateway"
import { cpfDigits, maskCpf } from "../../schema/identity/Compliance"
import {
  type AdminDepositView,
  depositFeeCents,
  DepositId,
  type DepositInitiated,
  depositAmountProblem,
  DepositNotPending,
  type DepositRequest,
  DepositStatus,
  type DepositView,
  type GatewayEvent,
  PaymentMethod,
  PaymentMethodNotAllowed
} from "../../schema/money/Deposit"
import { FieldError, NotFound, ValidationError } from "../../schema/platform/Errors"
import { UserId } from "../../schema/platform/Ids"
import { formatBrl, GatewayUnavailable } from "../../schema/money/Money"
import type { Notification } from "../../schema/platform/Notification"
import { Audit } from "../admin/Audit"
import { Identities } from "../identity/Identities"
import { Ledger } from "./Ledger"
import { ResponsibleGaming } from "../identity/ResponsibleGaming"
import { Notifications } from "../platform/Notifications"
import { Realtime } from "../platform/Realtime"
import { WebhookOutbox } from "../platform/WebhookOutbox"
import type { PageRequest, StatusPageRequest } from "../../schema/platform/Pagination"
import {
  afterCommit,
  firstOf,
  inTransaction,
  type NewestFirst,
  newestPage,
  rowsOf,
  singleOf,
  type Statement
} from "../platform/SqlRows"
import { moneyMovement } from "../../layers/AppMetrics"

/** Deposits the expiry job closes per transaction. */
const EXPIRY_BATCH = 200
/** REFUND_PENDING deposits the refund job asks the gateway about per run. */
const REFUND_BATCH = 100

/** How a payer's document is named in the audit trail: a CPF masked, never its digits (docs/rules.md#identity-masking). */
const payerShown = (payerDocument: string | undefined): string | null => {
  if (payerDocument === undefined) return null
  const digits = cpfDigits(payerDocument)
  return digits.length === 11 ? maskCpf(digits) : "not a CPF"
}

/** The payer's document is the holder's CPF (both digits), compared in constant time. */
const sameCpf = (payerDocument: string, holder: string): boolean => {
  const payer = Buffer.from(cpfDigits(payerDocument))
  const expected = Buffer.from(holder)
  return payer.length === expected.length && timingSafeEqual(payer, expected)
}

/** Why a REFUND_PENDING/REFUNDED deposit is not credited (sql/0026): paid by a third party (BR), or its owner excluded. */
const RefundReason = Schema.Literal("THIRD_PARTY", "SELF_EXCLUDED")
type RefundReason = typeof RefundReason.Type

/** The DEPOSIT_REFUNDED notification's message, by reason (docs/rules.md#deposit-third-party, #deposit-excluded). */
const refundedMessage = (reason: RefundReason | null, amountCents: bigint): string =>
  reason === "SELF_EXCLUDED"
    ? `Your deposit of ${formatBrl(amountCents)} arrived while you were self-excluded, so it was not credited: ` +
      "the payment has been returned to the payer."
    : `Your deposit of ${formatBrl(amountCents)} was paid from an account that is not in your name, ` +
      "so it was not credited: the payment has been returned to the payer."

const Row = Schema.Struct({
  id: DepositId,
  userId: UserId,
  username: Schema.String,
  amountCents: Schema.BigInt,
  feeCents: Schema.BigInt,
  method: PaymentMethod,
  status: DepositStatus,
  externalId: Schema.String,
  expiresAt: Schema.DateFromSelf,
  confirmedAt: Schema.NullOr(Schema.DateFromSelf),
  failureReason: Schema.NullOr(Schema.String),
  qrCode: Schema.String,
  qrCodeText: Schema.String,
  createdAt: Schema.DateFromSelf,
  refundReason: Schema.NullOr(RefundReason)
})
type Row = typeof Row.Type

/** Selected from `d` (the deposits, or a CTE of changed ones) joined with `u` (users). */
const COLUMNS = `d.id, d.user_id, u.username, d.amount_cents, d.fee_cents, d.method, d.status, d.external_id, d.expires_at,
  d.confirmed_at, d.failure_reason, d.qr_code, d.qr_code_text, d.created_at, d.refund_reason`

export const depositView = (row: Row): DepositView => ({
  id: row.id,
  amountCents: row.amountCents,
  feeCents: row.feeCents,
  totalCents: row.amountCents + row.feeCents,
  amountFormatted: formatBrl(row.amountCents),
  method: row.method,
  status: row.status,
  externalId: row.externalId,
  expiresAt: row.expiresAt,
  createdAt: row.createdAt,
  confirmedAt: row.confirmedAt,
  failureReason: row.failureReason
})

const initiated = (row: Row): DepositInitiated => ({
  depositId: row.id,
  qrCode: row.qrCode,
  qrCodeText: row.qrCodeText,
  expiresAt: row.expiresAt,
  amountCents: row.amountCents,
  feeCents: row.feeCents,
  totalCents: row.amountCents + row.feeCents,
  externalId: row.externalId
})

const adminView = (row: Row): AdminDepositView => ({ ...depositView(row), user: { id: row.userId, username: row.username } })

const depositNotFound = () => NotFound.of("Deposit")

/** Who confirms: the gateway's charge.paid, or an administrator (docs/rules.md#admin-deposit-confirmation). */
type Confirmer = { readonly _tag: "Gateway" } | { readonly _tag: "Admin"; readonly adminId: UserId }

export class Deposits extends Effect.Service<Deposits>()("app/Deposits", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const gateway = yield* PaymentGateway
    const identities = yield* Identities
    const responsibleGaming = yield* ResponsibleGaming
    const ledger = yield* Ledger
    const notifications = yield* Notifications
    const realtime = yield* Realtime
    const audit = yield* Audit
    const outbox = yield* WebhookOutbox
    const columns = sql.literal(COLUMNS)
    const listed: NewestFirst = {
      table: "deposits",
      alias: "d",
      select: sql`SELECT ${columns} FROM deposits d JOIN users u ON u.id = d.user_id`
    }

    /** Rows of statements selecting COLUMNS. */
    const selectRows = (statement: Statement) => rowsOf(Row, statement)
    const selectFirst = (statement: Statement) => firstOf(Row, statement)
    const transaction = inTransaction(sql)
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const findByExternalId = (externalId: string) =>
      selectFirst(sql`SELECT ${columns} FROM deposits d JOIN users u ON u.id = d.user_id WHERE d.external_id = ${externalId}`)

    const initiate = Effect.fn("Deposits.initiate")(function*(userId: UserId, input: DepositRequest) {
      // docs/rules.md#deposit-methods-br: under BR money comes in by PIX only.
      if (config.jurisdiction === "BR" && input.method !== "PIX") return yield* new PaymentMethodNotAllowed()
      const amountCents = BigInt(input.amountCents)
      const problem = depositAmountProblem(amountCents)
      if (problem !== undefined) {
        return yield* new ValidationError({ message: problem, errors: [new FieldError({ field: "amountCents", message: problem })] })
      }
      // docs/responsible-gaming.md#self-exclusion: no money comes in while the player is excluded.
      yield* responsibleGaming.requireNotExcluded(userId)
      const feeCents = depositFeeCents(input.method, amountCents)
      const charge = yield* gateway.createCharge({
        amountCents: amountCents + feeCents,
        method: input.method,
        reference: `dep_${randomBytes(12).toString("hex")}`
      }).pipe(
        Effect.tapError((error) => Effect.logWarning("Deposit: the gateway refused a charge", error.message)),
        Effect.mapError(() => new GatewayUnavailable())
      )
      const at = yield* now
      const row = yield* singleOf(Row, sql`
        WITH d AS (
          INSERT INTO deposits (user_id, amount_cents, fee_cents, method, external_id, expires_at, qr_code, qr_code_text,
                                created_at, updated_at)
          VALUES (${userId}, ${amountCents}, ${feeCents}, ${input.method}, ${charge.externalId}, ${charge.expiresAt},
                  ${charge.qrCode}, ${charge.qrCodeText}, ${at}, ${at})
          RETURNING *
        )
        SELECT ${columns} FROM d JOIN users u ON u.id = d.user_id`)
      yield* moneyMovement("deposit", "initiated", amountCents)
      return initiated(row)
    })

    const list = Effect.fn("Deposits.list")(function*(
      userId: UserId,
      paging: PageRequest
    ) {
      const { items, page, total } = yield* newestPage(sql, Row, listed, paging, { user_id: userId })
      return { deposits: items.map(depositView), total, page }
    })

    const adminList = Effect.fn("Deposits.adminList")(function*(query: StatusPageRequest<DepositStatus> & { readonly userId?: UserId | undefined }) {
      const { items, page, total } = yield* newestPage(sql, Row, listed, query, { status: query.status, user_id: query.userId })
      return { deposits: items.map(adminView), total, page }
    })

    /**
     * Inside the caller's transaction, with the row locked and not yet CONFIRMED: every effect of a
     * confirmation that must commit with it.
     */
    const confirmLocked = Effect.fnUntraced(function*(locked: Row, by: Confirmer) {
      const at = yield* now
      const row = yield* singleOf(Row, sql`
          WITH d AS (
            UPDATE deposits SET status = 'CONFIRMED', confirmed_at = ${at}, updated_at = ${at}
            WHERE id = ${locked.id} AND status <> 'CONFIRMED'
            RETURNING *
          )
          SELECT ${columns} FROM d JOIN users u ON u.id = d.user_id`)
      const posting = yield* ledger.credit({
        userId: row.userId,
        type: "DEPOSIT",
        amountCents: row.amountCents,
        reference: { type: "DEPOSIT", id: row.id }
      })
      const notification = yield* notifications.create(row.userId, {
        type: "DEPOSIT_CONFIRMED",
        title: "Deposit confirmed",
        message: `${formatBrl(row.amountCents)} has been added to your balance.`
      })
      yield* audit.record({
        userId: row.userId,
        action: "DEPOSIT_CONFIRMED",
        entityType: "Deposit",
        entityId: row.id,
        metadata: { amount: Number(row.amountCents), method: row.method, externalId: row.externalId }
      })
      if (by._tag === "Admin") {
        yield* audit.record({
          userId: by.adminId,
          action: "ADMIN_CONFIRM_DEPOSIT",
          entityType: "Deposit",
          entityId: row.id,
          metadata: { depositUserId: String(row.userId) }
        })
      }
      if (locked.status !== "PENDING") {
        // Money the gateway received after we had closed the deposit: credited, and flagged for review.
        yield* audit.record({
          userId: row.userId,
          action: "DEPOSIT_PAID_LATE",
          entityType: "Deposit",
          entityId: row.id,
          metadata: { previousStatus: locked.status, externalId: row.externalId }
        })
      }
      yield* outbox.enqueue("deposit.confirmed", {
        depositId: String(row.id),
        userId: String(row.userId),
        amountCents: Number(row.amountCents)
      })
      return { row, balanceCents: posting.balanceAfterCents, notification }
    })

    /** After the commit: the user's balance and the new notification, pushed. */
    const announce = (confirmed: { readonly row: Row; readonly balanceCents: bigint; readonly notification: Notification }) =>
      Effect.all([
        moneyMovement("deposit", "confirmed", confirmed.row.amountCents),
        realtime.balanceChanged(confirmed.row.userId, confirmed.balanceCents),
        notifications.push(confirmed.row.userId, confirmed.notification)
      ], { discard: true })

    /**
     * Under BR: whether the payer is the account holder (docs/rules.md#deposit-third-party). No document, no
     * verified identity, or another document: not the holder.
     */
    const paidByHolder = (userId: UserId, payerDocument: string | undefined) =>
      payerDocument === undefined
        ? Effect.succeed(false)
        : Effect.map(identities.holderCpf(userId), (holder) => holder !== undefined && sameCpf(payerDocument, holder.digits))

    /**
     * Inside the callback's transaction, the row locked: not credited, REFUND_PENDING with its reason (which words the
     * owner's notification when the refund is taken), audited as `why.action` with what the case needs.
     */
    const markForRefund = Effect.fnUntraced(function*(locked: Row, why: {
        readonly reason: "THIRD_PARTY" | "SELF_EXCLUDED"
        readonly action: "DEPOSIT_THIRD_PARTY" | "DEPOSIT_EXCLUDED"
        readonly details: Record<string, unknown>
        readonly log: string
      }) {
      const at = yield* now
      const row = yield* singleOf(Row, sql`
          WITH d AS (
            UPDATE deposits SET status = 'REFUND_PENDING', refund_reason = ${why.reason}, updated_at = ${at}
            WHERE id = ${locked.id}
            RETURNING *
          )
          SELECT ${columns} FROM d JOIN users u ON u.id = d.user_id`)
      yield* audit.record({
        userId: row.userId,
        action: why.action,
        entityType: "Deposit",
        entityId: row.id,
        metadata: { externalId: row.externalId, amount: Number(row.amountCents), previousStatus: locked.status, ...why.details }
      })
      yield* Effect.logWarning(`Deposit ${row.id}: ${why.log}; not credited, refunding it`)
      return row
    })

    /** A payer other than the account holder (docs/rules.md#deposit-third-party): audited DEPOSIT_THIRD_PARTY. */
    const markThirdParty = (locked: Row, payerDocument: string | undefined) =>
      markForRefund(locked, {
        reason: "THIRD_PARTY",
        action: "DEPOSIT_THIRD_PARTY",
        details: { payer: payerShown(payerDocument) },
        log: "paid by someone other than the account holder"
      })

    /** Its owner excluded now (docs/rules.md#deposit-excluded): audited DEPOSIT_EXCLUDED. */
    const markExcluded = (locked: Row, exclusion: { readonly until: Date | null; readonly registryListed: boolean }) =>
      markForRefund(locked, {
        reason: "SELF_EXCLUDED",
        action: "DEPOSIT_EXCLUDED",
        details: { until: exclusion.until === null ? null : exclusion.until.toISOString(), registryListed: exclusion.registryListed },
        log: "paid while its owner is self-excluded"
      })

    /**
     * Asks the gateway to return a REFUND_PENDING deposit's payment (idempotent on `deposit-<id>`); once it accepts,
     * REFUND_PENDING -> REFUNDED with DEPOSIT_REFUNDED notified and audited, by a conditional update, so however often
     * it runs (the callback, a later charge.paid, the job, several instances) the owner is told once. A failure leaves
     * REFUND_PENDING for the next try (docs/rules.md#deposit-refund-retry). Whether it ended REFUNDED.
     */
    const requestRefund = Effect.fnUntraced(function*(pending: Row) {
      const answer = yield* Effect.either(gateway.refund({
        depositId: pending.id,
        externalId: pending.externalId,
        amountCents: pending.amountCents + pending.feeCents
      }))
      if (answer._tag === "Left") {
        yield* Effect.logWarning(
          `Deposit ${pending.id}: the gateway did not take its refund (${answer.left.message}); the refund job asks again`
        )
        return false
      }
      const at = yield* now
      const refunded = yield* transaction(refundedInTransaction(pending, answer.right.refundId, at))
      if (refunded === undefined) return false
      yield* notifications.push(refunded.row.userId, refunded.notification)
      yield* moneyMovement("deposit", "refunded", refunded.row.amountCents)
      return true
    })

    /** What `requestRefund` runs in its transaction once the gateway took the refund: REFUNDED, notified, audited. */
    const refundedInTransaction = Effect.fnUntraced(function*(pending: Row, refundId: string, at: Date) {
      const row = yield* selectFirst(sql`
          WITH d AS (
            UPDATE deposits SET status = 'REFUNDED', refunded_at = ${at}, refund_id = ${refundId.slice(0, 200)},
                                updated_at = ${at}
            WHERE id = ${pending.id} AND status = 'REFUND_PENDING'
            RETURNING *
          )
          SELECT ${columns} FROM d JOIN users u ON u.id = d.user_id`)
      if (row === undefined) return undefined
      const notification = yield* notifications.create(row.userId, {
        type: "DEPOSIT_REFUNDED",
        title: "Deposit refunded",
        message: refundedMessage(row.refundReason, row.amountCents)
      })
      yield* audit.record({
        userId: row.userId,
        action: "DEPOSIT_REFUNDED",
        entityType: "Deposit",
        entityId: row.id,
        metadata: { externalId: row.externalId, refundId, amount: Number(row.amountCents + row.feeCents) }
      })
      return { row, notification }
    })

    /**
     * charge.paid: confirms once; an already CONFIRMED deposit is left as it is (idempotent,
     * docs/rules.md#deposit-states). Under BR a payer other than the account holder: REFUND_PENDING, and the
     * refund asked after the commit (docs/rules.md#deposit-third-party); then, in every jurisdiction, an owner excluded
     * now: REFUND_PENDING the same way (docs/rules.md#deposit-excluded). A REFUND_PENDING or REFUNDED deposit is
     * never credited (a REFUND_PENDING one has its refund asked again).
     */
    const confirmFromGateway = Effect.fn("Deposits.confirmFromGateway")(function*(externalId: string, payerDocument: string | undefined) {
      const outcome = yield* transaction(confirmFromGatewayInTransaction(externalId, payerDocument))
      if (outcome._tag === "Confirmed") yield* announce(outcome.confirmed)
      // After the commit of the transaction around this one (the gateway event's): never ask before REFUND_PENDING stands.
      if (outcome._tag === "Refund") yield* afterCommit(requestRefund(outcome.row))
    })

    /** What `confirmFromGateway` runs in its transaction: the deposit locked; confirmed, marked for refund or left. */
    const confirmFromGatewayInTransaction = Effect.fnUntraced(function*(
      externalId: string,
      payerDocument: string | undefined
    ) {
      const locked = yield* selectFirst(sql`
        SELECT ${columns} FROM deposits d JOIN users u ON u.id = d.user_id
        WHERE d.external_id = ${externalId} FOR UPDATE OF d`)
      if (locked === undefined) return yield* depositNotFound()
      if (locked.status === "CONFIRMED" || locked.status === "REFUNDED") return { _tag: "Unchanged" } as const
      if (locked.status === "REFUND_PENDING") return { _tag: "Refund", row: locked } as const
      if (config.jurisdiction === "BR" && !(yield* paidByHolder(locked.userId, payerDocument))) {
        return { _tag: "Refund", row: yield* markThirdParty(locked, payerDocument) } as const
      }
      // D23: from the moment of the exclusion deposits are closed, including one started before it and paid now.
      const exclusion = yield* responsibleGaming.exclusionOf(locked.userId)
      if (exclusion.excluded) return { _tag: "Refund", row: yield* markExcluded(locked, exclusion) } as const
      if (locked.status !== "PENDING") {
        yield* Effect.logWarning(`Deposit ${locked.id}: paid while ${locked.status}; crediting it`)
      }
      return { _tag: "Confirmed", confirmed: yield* confirmLocked(locked, { _tag: "Gateway" }) } as const
    })

    /**
     * The refund job's run (docs/rules.md#deposit-refund-retry): every REFUND_PENDING deposit's refund asked again;
     * how many ended REFUNDED.
     */
    const retryRefunds = Effect.fn("Deposits.retryRefunds")(function*() {
      const pending = yield* selectRows(sql`
        SELECT ${columns} FROM deposits d JOIN users u ON u.id = d.user_id
        WHERE d.status = 'REFUND_PENDING' ORDER BY d.id LIMIT ${REFUND_BATCH}`)
      let refunded = 0
      for (const row of pending) {
        if (yield* requestRefund(row)) refunded++
      }
      return refunded
    })

    /**
     * PENDING only, answered with `{id, status, confirmedAt}` (docs/rules.md#admin-deposit-confirmation). An owner
     * excluded now: 403 SELF_EXCLUDED, nothing written (the deposit stays PENDING; paid later, it is refunded).
     */
    const confirmByAdmin = Effect.fn("Deposits.confirmByAdmin")(function*(adminId: UserId, id: DepositId) {
      const confirmed = yield* transaction(confirmByAdminInTransaction(adminId, id))
      yield* announce(confirmed)
      return { id: confirmed.row.id, status: confirmed.row.status, confirmedAt: confirmed.row.confirmedAt! }
    })

    /** What `confirmByAdmin` runs in its transaction: the deposit locked, checked, and confirmed. */
    const confirmByAdminInTransaction = Effect.fnUntraced(function*(adminId: UserId, id: DepositId) {
      const locked = yield* selectFirst(sql`
        SELECT ${columns} FROM deposits d JOIN users u ON u.id = d.user_id WHERE d.id = ${id} FOR UPDATE OF d`)
      if (locked === undefined) return yield* depositNotFound()
      if (locked.status !== "PENDING") return yield* new DepositNotPending()
      yield* responsibleGaming.requireNotExcluded(locked.userId)
      return yield* confirmLocked(locked, { _tag: "Admin", adminId })
    })

    /**
     * The owner's cancellation of a PENDING deposit. Nothing is written unless the gateway cancelled
     * the charge; a deposit that stopped being PENDING meanwhile is left as the other path made it.
     */
    const cancel = Effect.fn("Deposits.cancel")(function*(userId: UserId, id: DepositId) {
      const deposit = yield* selectFirst(sql`
        SELECT ${columns} FROM deposits d JOIN users u ON u.id = d.user_id WHERE d.id = ${id} AND d.user_id = ${userId}`)
      if (deposit === undefined) return yield* depositNotFound()
      if (deposit.status !== "PENDING") return yield* new DepositNotPending()
      yield* gateway.cancelCharge(deposit.externalId).pipe(
        Effect.catchTags({
          ChargeAlreadyPaid: () => new DepositNotPending(),
          GatewayError: (error) =>
            Effect.zipRight(Effect.logWarning("Deposit: the gateway did not cancel a charge", error.message), new GatewayUnavailable())
        })
      )
      const at = yield* now
      const cancelled = yield* transaction(cancelInTransaction(userId, id, at))
      return depositView(cancelled)
    })

    /** What `cancel` runs in its transaction, once the gateway cancelled the charge: the deposit CANCELLED, audited. */
    const cancelInTransaction = Effect.fnUntraced(function*(userId: UserId, id: DepositId, at: Date) {
      const row = yield* selectFirst(sql`
        WITH d AS (
          UPDATE deposits SET status = 'CANCELLED', updated_at = ${at}
          WHERE id = ${id} AND status = 'PENDING'
          RETURNING *
        )
        SELECT ${columns} FROM d JOIN users u ON u.id = d.user_id`)
      if (row === undefined) return yield* new DepositNotPending()
      yield* audit.record({
        userId,
        action: "DEPOSIT_CANCELLED",
        entityType: "Deposit",
        entityId: row.id,
        metadata: { externalId: row.externalId, amount: Number(row.amountCents) }
      })
      return row
    })

    /** charge.failed: PENDING -> FAILED with the gateway's reason; otherwise nothing. */
    const failFromGateway = Effect.fn("Deposits.failFromGateway")(function*(externalId: string, reason: string | undefined) {
      const at = yield* now
      const failureReason = reason?.trim().slice(0, 500) || "Payment failed"
      const failed = yield* transaction(failInTransaction(externalId, failureReason, at))
      if (failed === undefined && (yield* findByExternalId(externalId)) === undefined) return yield* depositNotFound()
    })

    /** What `failFromGateway` runs in its transaction: a PENDING deposit FAILED, and its audit; undefined otherwise. */
    const failInTransaction = Effect.fnUntraced(function*(externalId: string, failureReason: string, at: Date) {
      const row = yield* selectFirst(sql`
        WITH d AS (
          UPDATE deposits SET status = 'FAILED', failure_reason = ${failureReason}, updated_at = ${at}
          WHERE external_id = ${externalId} AND status = 'PENDING'
          RETURNING *
        )
        SELECT ${columns} FROM d JOIN users u ON u.id = d.user_id`)
      if (row === undefined) return undefined
      yield* audit.record({
        userId: row.userId,
        action: "DEPOSIT_FAILED",
        entityType: "Deposit",
        entityId: row.id,
        metadata: { externalId, reason: failureReason }
      })
      return row
    })

    /**
     * Inside a transaction: PENDING deposits chosen by `condition` -> EXPIRED, each with its
     * DEPOSIT_EXPIRED notification and audit. Rows another instance holds are skipped.
     */
    const expireWhere = Effect.fnUntraced(function*(condition: Fragment, limit: number) {
      const at = yield* now
      const rows = yield* selectRows(sql`
          WITH due AS (
            SELECT id FROM deposits WHERE status = 'PENDING' AND ${condition}
            ORDER BY expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
          ),
          d AS (
            UPDATE deposits SET status = 'EXPIRED', updated_at = ${at}
            FROM due WHERE deposits.id = due.id
            RETURNING deposits.*
          )
          SELECT ${columns} FROM d JOIN users u ON u.id = d.user_id`)
      const expired: Array<{ readonly row: Row; readonly notification: Notification }> = []
      for (const row of rows) {
        const notification = yield* notifications.create(row.userId, {
          type: "DEPOSIT_EXPIRED",
          title: "Deposit expired",
          message: `Your deposit of ${formatBrl(row.amountCents)} expired before it was paid.`
        })
        yield* audit.record({
          userId: row.userId,
          action: "DEPOSIT_EXPIRED",
          entityType: "Deposit",
          entityId: row.id,
          metadata: { externalId: row.externalId }
        })
        expired.push({ row, notification })
      }
      return expired
    })

    const pushAll = (expired: ReadonlyArray<{ readonly row: Row; readonly notification: Notification }>) =>
      Effect.forEach(expired, ({ notification, row }) => notifications.push(row.userId, notification), { discard: true })

    /** charge.expired: the gateway will not take this payment any more, whatever our clock says. */
    const expireFromGateway = Effect.fn("Deposits.expireFromGateway")(function*(externalId: string) {
      const expired = yield* transaction(expireWhere(sql`external_id = ${externalId}`, 1))
      yield* pushAll(expired)
      if (expired.length === 0 && (yield* findByExternalId(externalId)) === undefined) return yield* depositNotFound()
    })

    /**
     * The expiry job's run: every PENDING deposit past its expiry -> EXPIRED, in batches. Safe with
     * several instances (SKIP LOCKED: each deposit is expired, and notified, by one of them).
     */
    const expireDue = Effect.fn("Deposits.expireDue")(function*() {
      let total = 0
      while (true) {
        const at = yield* now
        const expired = yield* transaction(expireWhere(sql`expires_at <= ${at}`, EXPIRY_BATCH))
        yield* pushAll(expired)
        total += expired.length
        if (expired.length < EXPIRY_BATCH) return total
      }
    })

    /** The events handled (docs/rules.md#gateway-callback); any other is acknowledged without action. */
    const handleGatewayEvent = Effect.fn("Deposits.handleGatewayEvent")(function*(event: GatewayEvent) {
      switch (event.event) {
        case "charge.paid":
          return yield* confirmFromGateway(event.data.id, event.data.payerDocument)
        case "charge.failed":
          return yield* failFromGateway(event.data.id, event.data.failReason)
        case "charge.expired":
          return yield* expireFromGateway(event.data.id)
        default:
          yield* Effect.logDebug(`Gateway event ${event.event} acknowledged without action`)
      }
    })

    return {
      initiate,
      list,
      adminList,
      findByExternalId,
      confirmByAdmin,
      cancel,
      handleGatewayEvent,
      expireDue,
      retryRefunds
    } as const
  }),
  dependencies: [
    Ledger.Default,
    Notifications.Default,
    Realtime.Default,
    Audit.Default,
    WebhookOutbox.Default,
    Identities.Default,
    ResponsibleGaming.Default
  ]
}) {}
