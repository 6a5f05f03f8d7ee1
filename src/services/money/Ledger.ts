/**
 * The ledger (docs/rules.md#ledger-and-money): the only code that changes `users.balance_cents`.
 *
 * Each movement is ONE statement that updates the balance and inserts its `transactions` row
 * together, so it is atomic by itself and joins the caller's database transaction when there is one
 * (`inTransaction` in the caller): an opening's debit commits or rolls back with the opening.
 * A debit is a conditional update (`balance_cents + amount >= 0`): no race, cache or missing lock
 * can overdraw an account, and the CHECK constraint on users backs it up.
 *
 * A game's movement (a stake, or money a game gives back: GAME_MOVEMENTS) also updates the responsible-gaming tallies
 * on the same row in the same UPDATE (src/services/identity/PlayTallies.ts), so the losses the limits are enforced on
 * are the ledger's own sums; a stake (`debitSteps`) carries the limits' check in that UPDATE's WHERE.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { InsufficientBalance } from "../../schema/platform/Errors"
import { TransactionId, type UserId } from "../../schema/platform/Ids"
import {
  counterpartyOf,
  type CreditType,
  type DebitType,
  type Posting,
  type Reference,
  type TransactionType
} from "../../schema/money/Ledger"
import { firstOf, orUnavailable, rowCountOf, rowsOf } from "../platform/SqlRows"
import { tallySet } from "../identity/PlayTallies"
import { playWindowsAt } from "../identity/PlayWindows"

interface Movement<T> {
  readonly userId: UserId
  readonly type: T
  /** Always positive: the direction follows from the method. */
  readonly amountCents: bigint
  readonly reference?: Reference
  /**
   * Money a game gives back (ITEM_SELL, BATTLE_REFUND): when the stake it comes from was made (the sold item won,
   * the refunded entry paid); it lowers the loss of the windows that hold that moment only.
   */
  readonly stakedAt?: Date
}

/**
 * A reference whose id the statement makes itself, a SQL expression of an earlier step's result: a battle's creation
 * takes the battle's id from its sequence in the statement that debits the entry (`debitSteps` only).
 */
export interface StatementReference {
  readonly type: string
  readonly id: Statement.Fragment
}

/** A movement as one statement's steps post it: its reference may be one the statement makes. */
export type StatementMovement<T> = Omit<Movement<T>, "reference"> & { readonly reference?: Reference | StatementReference }

/**
 * The movements the responsible-gaming tallies count (docs/responsible-gaming.md#loss): stakes add to the loss and
 * count a play minute; item sales and battle refunds take from the loss.
 */
const GAME_MOVEMENTS: Partial<Record<TransactionType, { readonly countsMinute: boolean }>> = {
  CASE_OPEN: { countsMinute: true },
  BATTLE_ENTRY: { countsMinute: true },
  RAFFLE_TICKET: { countsMinute: true },
  ITEM_SELL: { countsMinute: false },
  BATTLE_REFUND: { countsMinute: false }
}

/** The tally items of a movement's UPDATE of `users` (a leading comma included), or nothing. */
const talliesOf = (sql: SqlClient.SqlClient, type: TransactionType, signedCents: bigint, at: Date, stakedAt?: Date) => {
  const game = GAME_MOVEMENTS[type]
  const items = game === undefined
    ? []
    : tallySet(sql, playWindowsAt(at), { lossCents: -signedCents, countsMinute: game.countsMinute, stakedAt })
  return items.length === 0 ? sql`` : sql`, ${sql.csv(items)}`
}

const PostingRow = Schema.Struct({ id: TransactionId, balanceAfterCents: Schema.BigInt })
const BalanceRow = Schema.Struct({ balanceCents: Schema.BigInt })

/**
 * A user whose stored balance differs from the sum of their movements, or is negative; or a user id that movements
 * name without a user.
 */
const DiscrepancyRow = Schema.Struct({
  userId: Schema.String,
  /** Null when movements name a user that does not exist (no key refuses that: sql/0031). */
  balanceCents: Schema.NullOr(Schema.BigInt),
  ledgerSumCents: Schema.BigInt
})

/** A withdrawal without exactly one WITHDRAWAL debit of its amount, and a WITHDRAWAL_REFUND exactly when it ended unpaid. */
const WithdrawalProblemRow = Schema.Struct({
  id: Schema.String,
  status: Schema.String,
  debits: Schema.Number,
  refunds: Schema.Number,
  movements: Schema.Number
})

/** A deposit whose DEPOSIT credits of its amount are not one when CONFIRMED, none otherwise. */
const DepositProblemRow = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  status: Schema.String,
  amountCents: Schema.BigInt,
  credits: Schema.Number,
  movements: Schema.Number
})

/** A movement of money in or out (DEPOSIT, WITHDRAWAL, WITHDRAWAL_REFUND) that references no deposit or withdrawal. */
const OrphanRow = Schema.Struct({ id: Schema.String, userId: Schema.String, type: Schema.String, amountCents: Schema.BigInt })

/**
 * Case openings and CASE_OPEN debits that do not pair up: an opening and its debit are written by one statement
 * (same user, case, price and time; the debit references the case), so each group of those must hold as many
 * openings as debits. Ids comma-separated.
 */
const OpeningProblemRow = Schema.Struct({
  userId: Schema.String,
  caseId: Schema.NullOr(Schema.String),
  priceCents: Schema.BigInt,
  at: Schema.DateFromSelf,
  openingIds: Schema.String,
  debitIds: Schema.String
})

/** Statuses whose withdrawal was refunded: it ended without being paid. */
const REFUNDED_WITHDRAWAL = ["CANCELLED", "REJECTED", "FAILED"]

export class Ledger extends Effect.Service<Ledger>()("app/Ledger", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const userExists = (userId: UserId) => Effect.map(rowCountOf(sql`SELECT 1 FROM users WHERE id = ${userId}`), (n) => n > 0)

    /** Posts a signed movement; None when it would take the balance below zero. */
    const post = Effect.fnUntraced(function*(userId: UserId, type: TransactionType, signedCents: bigint, reference?: Reference, reason?: string, stakedAt?: Date) {
      if (signedCents === 0n) return yield* Effect.dieMessage("Ledger: a movement of 0 cents")
      const createdAt = new Date(yield* Clock.currentTimeMillis)
      const tallies = talliesOf(sql, type, signedCents, createdAt, stakedAt)
      const posted = yield* firstOf(PostingRow, sql`
          WITH moved AS (
            UPDATE users SET balance_cents = balance_cents + ${signedCents}, updated_at = ${createdAt}
                             ${tallies}
            WHERE id = ${userId} AND balance_cents + ${signedCents} >= 0
            RETURNING id, balance_cents
          )
          INSERT INTO transactions
            (user_id, type, amount_cents, balance_after_cents, counterparty, reference_type, reference_id, reason, created_at)
          SELECT id, ${type}, ${signedCents}, balance_cents, ${counterpartyOf(type)},
                 ${reference?.type ?? null}, ${reference?.id ?? null}, ${reason ?? null}, ${createdAt}
          FROM moved
          RETURNING id, balance_after_cents`)
      if (posted !== undefined) {
        return Option.some<Posting>({ transactionId: posted.id, balanceAfterCents: posted.balanceAfterCents })
      }
      // Nothing moved: either the balance does not cover it, or the caller named no real user.
      if (!(yield* userExists(userId))) return yield* Effect.dieMessage(`Ledger: no user ${userId}`)
      return Option.none<Posting>()
    }, (effect) => effect.pipe(orUnavailable))

    const positive = (amountCents: bigint) =>
      amountCents > 0n ? Effect.void : Effect.dieMessage(`Ledger: amount must be positive, got ${amountCents}`)

    /** Adds to the balance. */
    const credit = Effect.fn("Ledger.credit")(function*(movement: Movement<CreditType>) {
      yield* positive(movement.amountCents)
      // Money a game gives back must say which play it comes from, else it would make room in windows it does not belong to.
      if (GAME_MOVEMENTS[movement.type] !== undefined && movement.stakedAt === undefined) {
        return yield* Effect.dieMessage(`Ledger: ${movement.type} without stakedAt`)
      }
      const posted = yield* post(movement.userId, movement.type, movement.amountCents, movement.reference, undefined, movement.stakedAt)
      return yield* Option.match(posted, {
        onNone: () => Effect.dieMessage("Ledger: a credit was refused"),
        onSome: Effect.succeed
      })
    })

    /** Takes from the balance, or fails with InsufficientBalance and changes nothing. */
    const debit = Effect.fn("Ledger.debit")(function*(movement: Movement<DebitType>) {
      yield* positive(movement.amountCents)
      const posted = yield* post(movement.userId, movement.type, -movement.amountCents, movement.reference)
      return yield* Option.match(posted, {
        onNone: () => new InsufficientBalance(),
        onSome: Effect.succeed
      })
    })

    /**
     * A debit as two steps of a caller's one-statement write (a data-modifying WITH; the hot path of
     * an opening writes everything it does in one statement): `moved`, the conditional balance
     * update, taken only when `onlyIf` holds, and `posted`, its transactions row. The caller makes its
     * own writes depend on `moved` having a row; when it has none, the balance did not cover the
     * amount (or `onlyIf` did not hold) and nothing moved. `moved` also returns the current windows' tallies
     * (`loss_day_cents`, `loss_week_cents`, `loss_month_cents`, `play_minutes`) as the movement left them.
     */
    const debitSteps = (movement: StatementMovement<DebitType>, at: Date, onlyIf: Statement.Fragment) =>
      movementSteps(movement, -movement.amountCents, at, sql`balance_cents >= ${movement.amountCents} AND ${onlyIf}`)

    /**
     * An item's sale (ITEM_SELL) as the same two steps: `moved` credits the balance when `onlyIf` holds (the caller's
     * own write took place), `posted` is its transactions row. The amount is the item's value (CHECK > 0), and the
     * windows given room back are those of the play that won it (`stakedAt`), as `credit` requires of game credits.
     */
    const saleCreditSteps = (
      movement: Movement<"ITEM_SELL"> & { readonly stakedAt: Date },
      at: Date,
      onlyIf: Statement.Fragment
    ) => movementSteps(movement, movement.amountCents, at, onlyIf, movement.stakedAt)

    const movementSteps = (
      movement: StatementMovement<TransactionType>,
      signedCents: bigint,
      at: Date,
      where: Statement.Fragment,
      stakedAt?: Date
    ) => sql`
        moved AS (
          UPDATE users SET balance_cents = balance_cents ${sql.literal(signedCents < 0n ? "-" : "+")} ${signedCents < 0n ? -signedCents : signedCents},
                           updated_at = ${at} ${talliesOf(sql, movement.type, signedCents, at, stakedAt)}
          WHERE id = ${movement.userId} AND ${where}
          RETURNING id, balance_cents, loss_day_cents, loss_week_cents, loss_month_cents, play_minutes
        ),
        posted AS (
          INSERT INTO transactions
            (user_id, type, amount_cents, balance_after_cents, counterparty, reference_type, reference_id, reason, created_at)
          SELECT id, ${movement.type}, ${signedCents}, balance_cents, ${counterpartyOf(movement.type)},
                 ${movement.reference?.type ?? null}, ${movement.reference?.id ?? null}, NULL, ${at}
          FROM moved
          RETURNING id, reference_id
        )`

    /** An administrator's correction (ADMIN_ADJUSTMENT), signed, with its reason. */
    const adjust = Effect.fn("Ledger.adjust")(function*(
      adjustment: { readonly userId: UserId; readonly amountCents: bigint; readonly reason: string }
    ) {
      const posted = yield* post(adjustment.userId, "ADMIN_ADJUSTMENT", adjustment.amountCents, undefined, adjustment.reason)
      return yield* Option.match(posted, {
        onNone: () => new InsufficientBalance(),
        onSome: Effect.succeed
      })
    })

    /**
     * Reconciliation: every user whose balance is not the sum of their movements, or is negative, and every user id
     * that movements name without a user (balance null). Empty on a healthy ledger; operations can run it at any time.
     */
    const discrepancies = rowsOf(DiscrepancyRow, sql`
      SELECT COALESCE(u.id, t.user_id)::text AS user_id, u.balance_cents, COALESCE(t.sum, 0) AS ledger_sum_cents
      FROM users u FULL JOIN (SELECT user_id, SUM(amount_cents) AS sum FROM transactions GROUP BY user_id) t ON t.user_id = u.id
      WHERE u.id IS NULL OR u.balance_cents <> COALESCE(t.sum, 0) OR u.balance_cents < 0
      ORDER BY COALESCE(u.id, t.user_id)`).pipe(Effect.withSpan("Ledger.discrepancies"))

    const refunded = sql`CASE WHEN w.status = ANY(${REFUNDED_WITHDRAWAL}) THEN 1 ELSE 0 END`
    /** Withdrawals not debited exactly once of their amount, or refunded when they should not be (or not when they should). */
    const withdrawalProblems = rowsOf(WithdrawalProblemRow, sql`
      SELECT w.id::text AS id, w.status,
             count(t.id) FILTER (WHERE t.type = 'WITHDRAWAL' AND t.amount_cents = -w.amount_cents)::int AS debits,
             count(t.id) FILTER (WHERE t.type = 'WITHDRAWAL_REFUND' AND t.amount_cents = w.amount_cents)::int AS refunds,
             count(t.id)::int AS movements
      FROM withdrawals w
      LEFT JOIN transactions t ON t.reference_type = 'WITHDRAWAL' AND t.reference_id = w.id
      GROUP BY w.id
      HAVING count(t.id) FILTER (WHERE t.type = 'WITHDRAWAL' AND t.amount_cents = -w.amount_cents) <> 1
          OR count(t.id) FILTER (WHERE t.type = 'WITHDRAWAL_REFUND' AND t.amount_cents = w.amount_cents) <> ${refunded}
          OR count(t.id) <> 1 + ${refunded}
      ORDER BY w.id`).pipe(Effect.withSpan("Ledger.withdrawalProblems"))

    /** WITHDRAWAL and WITHDRAWAL_REFUND movements without their withdrawal. */
    const withdrawalOrphans = rowsOf(OrphanRow, sql`
      SELECT t.id::text AS id, t.user_id::text AS user_id, t.type, t.amount_cents FROM transactions t
      LEFT JOIN withdrawals w ON t.reference_type = 'WITHDRAWAL' AND w.id = t.reference_id
      WHERE t.type IN ('WITHDRAWAL', 'WITHDRAWAL_REFUND') AND w.id IS NULL
      ORDER BY t.id`).pipe(Effect.withSpan("Ledger.withdrawalOrphans"))

    /** Deposits not credited exactly once (CONFIRMED) or credited at all (any other status). */
    const depositProblems = rowsOf(DepositProblemRow, sql`
      SELECT d.id::text AS id, d.user_id::text AS user_id, d.status, d.amount_cents,
             count(t.id) FILTER (WHERE t.type = 'DEPOSIT' AND t.amount_cents = d.amount_cents AND t.user_id = d.user_id)::int AS credits,
             count(t.id)::int AS movements
      FROM deposits d
      LEFT JOIN transactions t ON t.reference_type = 'DEPOSIT' AND t.reference_id = d.id
      GROUP BY d.id
      HAVING count(t.id) FILTER (WHERE t.type = 'DEPOSIT' AND t.amount_cents = d.amount_cents AND t.user_id = d.user_id)
               <> CASE WHEN d.status = 'CONFIRMED' THEN 1 ELSE 0 END
          OR count(t.id) <> CASE WHEN d.status = 'CONFIRMED' THEN 1 ELSE 0 END
      ORDER BY d.id`).pipe(Effect.withSpan("Ledger.depositProblems"))

    /** DEPOSIT movements without their deposit. */
    const depositOrphans = rowsOf(OrphanRow, sql`
      SELECT t.id::text AS id, t.user_id::text AS user_id, t.type, t.amount_cents FROM transactions t
      LEFT JOIN deposits d ON t.reference_type = 'DEPOSIT' AND d.id = t.reference_id
      WHERE t.type = 'DEPOSIT' AND d.id IS NULL
      ORDER BY t.id`).pipe(Effect.withSpan("Ledger.depositOrphans"))

    /** Openings without their CASE_OPEN debit of the price, and CASE_OPEN debits without their opening. */
    const openingProblems = rowsOf(OpeningProblemRow, sql`
      WITH o AS (
        SELECT user_id, case_id, price_paid_cents AS cents, created_at AS at, count(*) AS n,
               string_agg(id::text, ',' ORDER BY id) AS ids
        FROM case_openings GROUP BY 1, 2, 3, 4
      ), t AS (
        SELECT user_id, CASE WHEN reference_type = 'CASE' THEN reference_id END AS case_id, -amount_cents AS cents,
               created_at AS at, count(*) AS n, string_agg(id::text, ',' ORDER BY id) AS ids
        FROM transactions WHERE type = 'CASE_OPEN' GROUP BY 1, 2, 3, 4
      )
      SELECT user_id::text AS user_id, case_id::text AS case_id, cents AS price_cents, at,
             COALESCE(o.ids, '') AS opening_ids, COALESCE(t.ids, '') AS debit_ids
      FROM o FULL JOIN t USING (user_id, case_id, cents, at)
      WHERE COALESCE(o.n, 0) <> COALESCE(t.n, 0)
      ORDER BY at, user_id`).pipe(Effect.withSpan("Ledger.openingProblems"))

    /**
     * Every check of the ledger (`npm run cli -- ledger check`, docs/rules.md#ledger-checks): each list is empty on
     * a healthy ledger.
     */
    const check = Effect.all({
      balances: discrepancies,
      deposits: depositProblems,
      depositOrphans,
      withdrawals: withdrawalProblems,
      withdrawalOrphans,
      openings: openingProblems
    }).pipe(Effect.withSpan("Ledger.check"))

    /** The user's balance as stored; undefined when there is no such user. */
    const balanceOf = (userId: UserId) =>
      Effect.map(firstOf(BalanceRow, sql`SELECT balance_cents FROM users WHERE id = ${userId}`), (row) => row?.balanceCents)

    return {
      credit,
      debit,
      debitSteps,
      saleCreditSteps,
      adjust,
      discrepancies,
      withdrawalProblems,
      withdrawalOrphans,
      depositProblems,
      depositOrphans,
      openingProblems,
      check,
      balanceOf
    } as const
  })
}) {}
