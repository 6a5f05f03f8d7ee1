/**
 * Responsible gaming (docs/responsible-gaming.md, D23): the limits players set on money lost and time played,
 * self-exclusion, the centralized exclusion registry under JURISDICTION=BR, and the check every game action makes.
 *
 * Enforcement lives in the statement that takes the stake (src/services/identity/PlayTallies.ts): the tallies sit
 * on the balance's row and the limits' check is in the WHERE of the stake's UPDATE, so an action that would go
 * over a limit moves nothing, and two parallel actions at a limit's edge cannot both pass. When a stake's
 * statement moved nothing, `refusal` says why (a limit, an exclusion) or that it was the balance.
 *
 * Limits take effect at once when lowered or first set; a raise or a removal waits 24 hours (listed as pending;
 * a later lower value cancels it). Self-exclusion is never shortened, by anyone; a fixed period ends by itself.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Deferred, Duration, Effect, Option, Schema } from "effect"
import { AppConfig } from "../../layers/AppConfig"
import { ExclusionRegistry } from "../../layers/ExclusionRegistry"
import type { DebitType } from "../../schema/money/Ledger"
import {
  ExclusionCannotBeShortened,
  type ExclusionStatus,
  type LimitField,
  type Limits,
  LimitsRequired,
  type LimitsUpdate,
  type LimitsView,
  LossLimitReached,
  type PendingLimit,
  type PlayRefusal,
  PlayTimeLimitReached,
  SelfExcluded,
  type SelfExclusionRequest
} from "../../schema/identity/ResponsibleGaming"
import { InsufficientBalance } from "../../schema/platform/Errors"
import { TransactionId, UserId } from "../../schema/platform/Ids"
import { Audit } from "../admin/Audit"
import { Ledger, type StatementMovement } from "../money/Ledger"
import { Withdrawals } from "../money/Withdrawals"
import { Notifications } from "../platform/Notifications"
import { afterCommit, execute, firstOf, inTransaction, rowsOf, singleOf } from "../platform/SqlRows"
import { Identities } from "./Identities"
import { currentTallies, talliesOf, warningSteps, withinLimits } from "./PlayTallies"
import { type PlayWindows, playWindowsAt } from "./PlayWindows"

/** A raise or removal of a limit waits this long (UKGC's cooling-off). */
export const RAISE_DELAY_MS = 24 * 60 * 60 * 1000
/** Every verified player is looked up in the registry at least this often (D23). */
export const REGISTRY_RECHECK_MS = 15 * 24 * 60 * 60 * 1000
/** How long a request waits for its user's daily registry check before going on without it. */
const REGISTRY_WAIT = Duration.seconds(1)
/** After the registry failed to answer a user's daily check, it is asked again on a request this much later. */
const REGISTRY_RETRY_MS = 5 * 60 * 1000

const FIELDS: ReadonlyArray<LimitField> = ["dailyLossCents", "weeklyLossCents", "monthlyLossCents", "dailyPlayMinutes"]
const LOSS_FIELDS = ["dailyLossCents", "weeklyLossCents", "monthlyLossCents"] as const
const WINDOW_OF = { dailyLossCents: "day", weeklyLossCents: "week", monthlyLossCents: "month" } as const

const Cents = Schema.NullOr(Schema.BigInt)
const Minutes = Schema.NullOr(Schema.Number)
const When = Schema.NullOr(Schema.DateFromSelf)

/** A player's `responsible_gaming` row (all null when they have none) with their tallies from `users`. */
const StateRow = Schema.Struct({
  hasRow: Schema.Boolean,
  dailyLossCents: Cents,
  dailyLossNext: Cents,
  dailyLossNextAt: When,
  weeklyLossCents: Cents,
  weeklyLossNext: Cents,
  weeklyLossNextAt: When,
  monthlyLossCents: Cents,
  monthlyLossNext: Cents,
  monthlyLossNextAt: When,
  dailyPlayMinutes: Minutes,
  dailyPlayNext: Minutes,
  dailyPlayNextAt: When,
  excludedAt: When,
  excludedUntil: When,
  excludedIndefinitely: Schema.Boolean,
  registryListed: Schema.Boolean,
  lossDayCents: Schema.BigInt,
  lossWeekCents: Schema.BigInt,
  lossMonthCents: Schema.BigInt,
  playMinutes: Schema.Number,
  playLastMinute: When
})
type StateRow = typeof StateRow.Type

const UsageRow = Schema.Struct({ day: Schema.BigInt, week: Schema.BigInt, month: Schema.BigInt })

/** A limit's value, its pending change and when that applies, as stored. */
interface Stored {
  readonly current: bigint | number | null
  readonly next: bigint | number | null
  readonly nextAt: Date | null
}

const storedOf = (row: StateRow, field: LimitField): Stored => {
  switch (field) {
    case "dailyLossCents":
      return { current: row.dailyLossCents, next: row.dailyLossNext, nextAt: row.dailyLossNextAt }
    case "weeklyLossCents":
      return { current: row.weeklyLossCents, next: row.weeklyLossNext, nextAt: row.weeklyLossNextAt }
    case "monthlyLossCents":
      return { current: row.monthlyLossCents, next: row.monthlyLossNext, nextAt: row.monthlyLossNextAt }
    case "dailyPlayMinutes":
      return { current: row.dailyPlayMinutes, next: row.dailyPlayNext, nextAt: row.dailyPlayNextAt }
  }
}

/** A limit in force at `at`: its pending change once due (as the SQL check reads it). */
const effectiveOf = (stored: Stored, at: Date) =>
  stored.nextAt !== null && stored.nextAt.getTime() <= at.getTime() ? stored.next : stored.current

/** Is `a` a tighter limit than `b`? (`null`: no limit, the loosest.) */
const tighter = (a: bigint | number | null, b: bigint | number | null) => a !== null && (b === null || a < b)

const limitsAt = (row: StateRow, at: Date): Limits => ({
  dailyLossCents: effectiveOf(storedOf(row, "dailyLossCents"), at) as bigint | null,
  weeklyLossCents: effectiveOf(storedOf(row, "weeklyLossCents"), at) as bigint | null,
  monthlyLossCents: effectiveOf(storedOf(row, "monthlyLossCents"), at) as bigint | null,
  dailyPlayMinutes: effectiveOf(storedOf(row, "dailyPlayMinutes"), at) as number | null
})

/** The exclusion in force at `at`. */
const exclusionAt = (row: StateRow, at: Date): ExclusionStatus => {
  const indefinite = row.excludedIndefinitely || row.registryListed
  const running = row.excludedUntil !== null && row.excludedUntil.getTime() > at.getTime()
  return {
    excluded: indefinite || running,
    since: indefinite || running ? row.excludedAt : null,
    until: indefinite ? null : running ? row.excludedUntil : null,
    registryListed: row.registryListed
  }
}

/** The tallies of the current windows (0 where the stored one belongs to an earlier window). */
const talliesAt = (row: StateRow & { readonly lossDay: string | null; readonly lossWeek: string | null; readonly lossMonth: string | null; readonly playDay: string | null }, w: PlayWindows) => ({
  day: row.lossDay === w.day.key ? row.lossDayCents : 0n,
  week: row.lossWeek === w.week.key ? row.lossWeekCents : 0n,
  month: row.lossMonth === w.month.key ? row.lossMonthCents : 0n,
  minutes: row.playDay === w.day.key ? row.playMinutes : 0,
  minuteCounted: row.playDay === w.day.key && row.playLastMinute?.getTime() === w.minute.getTime()
})

const WindowKeys = Schema.Struct({
  lossDay: Schema.NullOr(Schema.String),
  lossWeek: Schema.NullOr(Schema.String),
  lossMonth: Schema.NullOr(Schema.String),
  playDay: Schema.NullOr(Schema.String)
})
const FullStateRow = Schema.extend(StateRow, WindowKeys)

/** A stake's statement: its ledger row and the balance after (null: nothing moved), and the limits it warned of. */
const StakedRow = Schema.Struct({
  transactionId: Schema.NullOr(TransactionId),
  referenceId: Schema.NullOr(Schema.BigInt),
  balanceAfterCents: Schema.NullOr(Schema.BigInt),
  warnings: Schema.NullOr(Schema.String)
})

const WARNING_TEXT: Record<LimitField, string> = {
  dailyLossCents: "daily loss limit",
  weeklyLossCents: "weekly loss limit",
  monthlyLossCents: "monthly loss limit",
  dailyPlayMinutes: "daily play time limit"
}

export class ResponsibleGaming extends Effect.Service<ResponsibleGaming>()("app/ResponsibleGaming", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const ledger = yield* Ledger
    const notifications = yield* Notifications
    const audit = yield* Audit
    const identities = yield* Identities
    const registry = yield* ExclusionRegistry
    const withdrawals = yield* Withdrawals
    const transaction = inTransaction(sql)
    /** Under BR a verified player must set limits before playing, and the registry is consulted. */
    const br = config.jurisdiction === "BR"
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const stateOf = (userId: UserId, lock = false) =>
      singleOf(FullStateRow, sql`
        SELECT g.user_id IS NOT NULL AS has_row,
               g.daily_loss_cents, g.daily_loss_next, g.daily_loss_next_at, g.weekly_loss_cents, g.weekly_loss_next,
               g.weekly_loss_next_at, g.monthly_loss_cents, g.monthly_loss_next, g.monthly_loss_next_at,
               g.daily_play_minutes, g.daily_play_next, g.daily_play_next_at, g.excluded_at, g.excluded_until,
               COALESCE(g.excluded_indefinitely, false) AS excluded_indefinitely,
               COALESCE(g.registry_listed, false) AS registry_listed,
               u.loss_day::text, u.loss_day_cents, u.loss_week::text, u.loss_week_cents, u.loss_month::text,
               u.loss_month_cents, u.play_day::text, u.play_minutes, u.play_last_minute
        FROM users u LEFT JOIN responsible_gaming g ON g.user_id = u.id
        WHERE u.id = ${userId} ${lock ? sql`FOR UPDATE OF u` : sql``}`)

    /** The condition a stake of `stakeCents` meets in its UPDATE of `users` (see PlayTallies.withinLimits). */
    const within = (stakeCents: bigint) => (at: Date) => withinLimits(sql, playWindowsAt(at), at, stakeCents, br)

    /**
     * Why a game action of `stakeCents` at `at` may not be made, if anything of responsible gaming stops it (in
     * the order a player can act on: an exclusion, limits to set, play time, a loss limit); None when nothing
     * does, so that whatever stopped the stake was the balance.
     */
    const refusal = (userId: UserId, stakeCents: bigint, at: Date) =>
      Effect.map(stateOf(userId), (row): Option.Option<PlayRefusal> => {
        const exclusion = exclusionAt(row, at)
        if (exclusion.excluded) return Option.some(new SelfExcluded({ until: exclusion.until }))
        const limits = limitsAt(row, at)
        if (
          br && (LOSS_FIELDS.every((field) => limits[field] === null) || limits.dailyPlayMinutes === null)
        ) return Option.some(new LimitsRequired())
        const w = playWindowsAt(at)
        const used = talliesAt(row, w)
        const minutesAfter = used.minutes + (used.minuteCounted ? 0 : 1)
        if (limits.dailyPlayMinutes !== null && minutesAfter > limits.dailyPlayMinutes) {
          return Option.some(new PlayTimeLimitReached({ resetsAt: w.day.end }))
        }
        const need = stakeCents > 0n ? stakeCents : 1n
        const lossIn = { day: used.day, week: used.week, month: used.month }
        const blocking = LOSS_FIELDS.filter((field) => {
          const limit = limits[field]
          return limit !== null && lossIn[WINDOW_OF[field]] + need > limit
        })
        if (blocking.length > 0) {
          // Playing is possible again once every window that blocks has passed.
          const resetsAt = new Date(Math.max(...blocking.map((field) => w[WINDOW_OF[field]].end.getTime())))
          return Option.some(new LossLimitReached({ resetsAt }))
        }
        return Option.none()
      })

    /** A stake's refusal: the responsible-gaming reason when there is one, else the balance. */
    const refused = <E>(userId: UserId, stakeCents: bigint, at: Date, otherwise: E) =>
      Effect.flatMap(
        refusal(userId, stakeCents, at),
        (why): Effect.Effect<never, E | PlayRefusal> => Option.isSome(why) ? Effect.fail(why.value) : Effect.fail(otherwise)
      )

    /**
     * Sends the RESPONSIBLE_GAMING notification for the limits a game action took to 80 % of (their names,
     * comma-separated, as `warningSteps` returns them; empty or null: none).
     */
    const warn = (userId: UserId, limits: string | null) => {
      if (limits === null || limits === "") return Effect.void
      const names = limits.split(",").map((field) => WARNING_TEXT[field as LimitField])
      return notifications.notify(userId, {
        type: "RESPONSIBLE_GAMING",
        title: "You are close to your limit",
        message: `You have used 80% of your ${names.join(", ")}. You can review your limits at any time, or take a break.`
      }).pipe(Effect.asVoid)
    }

    /**
     * A statement's warning steps (`warned`: the limits a game action took to 80 %; `warn` them after the commit), from
     * `tallies` (an opening's debit step `moved`), else from the player's row as earlier statements of the
     * transaction left it (an upgrade's write, after its stake counted the minute).
     */
    const playWarningSteps = (userId: UserId, at: Date, tallies?: Statement.Fragment) => {
      const w = playWindowsAt(at)
      return warningSteps(sql, w, at, userId, tallies ?? talliesOf(sql, w, userId))
    }

    /**
     * A game stake through the ledger (battle entries, raffle tickets), with the limits checked in its UPDATE:
     * InsufficientBalance, or the responsible-gaming refusal, and nothing moved. Options, for a caller that writes
     * with the stake in its one statement (a battle's creation writes the battle so):
     *   - `before`: steps ahead of the debit, which its reference may use (the battle's id from its sequence);
     *   - `steps`: steps after it, which write only when the debit (`moved`) has its row;
     *   - `onlyIf`: a further condition of the debit (what the caller read is still so); when it fails, the stake is
     *     refused as above, and the caller that gave it tells the cases apart.
     * The posting has the reference's id as written (the one the statement made, for a StatementReference).
     */
    const stake = Effect.fn("ResponsibleGaming.stake")(function*(
      movement: StatementMovement<DebitType>,
      options: { readonly before?: Statement.Fragment; readonly steps?: Statement.Fragment; readonly onlyIf?: Statement.Fragment } = {}
    ) {
      if (movement.amountCents <= 0n) return yield* Effect.dieMessage(`ResponsibleGaming: a stake of ${movement.amountCents} cents`)
      const at = yield* now
      const { before, steps, onlyIf = sql`true` } = options
      // The debit and the 80 % warnings it brings, in one statement (as an opening's); the warning is sent after the commit.
      const staked = yield* singleOf(StakedRow, sql`
        WITH ${before === undefined ? sql`` : sql`${before}, `}${
        ledger.debitSteps(movement, at, sql`${within(movement.amountCents)(at)} AND ${onlyIf}`)},
        ${playWarningSteps(movement.userId, at, sql`moved`)}${steps === undefined ? sql`` : sql`, ${steps}`}
        SELECT (SELECT id FROM posted) AS transaction_id, (SELECT reference_id FROM posted) AS reference_id,
               (SELECT balance_cents FROM moved) AS balance_after_cents, (SELECT limits FROM warned) AS warnings`)
      if (staked.transactionId === null || staked.balanceAfterCents === null) {
        return yield* refused(movement.userId, movement.amountCents, at, new InsufficientBalance())
      }
      yield* afterCommit(warn(movement.userId, staked.warnings))
      return { transactionId: staked.transactionId, balanceAfterCents: staked.balanceAfterCents, referenceId: staked.referenceId }
    })

    /**
     * A game action that stakes no money (an upgrade), as a step `played` of the caller's statement: the play minute
     * counted, when the exclusion and the limits allow the action at `at` (and `onlyIf` holds); no row otherwise
     * (`playRefusal` says why). Its row has the player's current tallies, for `playWarningSteps` in the same statement.
     */
    const playStep = (userId: UserId, at: Date, onlyIf: Statement.Fragment = sql`true`) => {
      const w = playWindowsAt(at)
      return sql`
        played AS (
          UPDATE users SET play_minutes = CASE WHEN play_day = ${w.day.key}::date THEN play_minutes ELSE 0 END
                             + CASE WHEN play_day = ${w.day.key}::date AND play_last_minute = ${w.minute} THEN 0 ELSE 1 END,
                           play_day = ${w.day.key}::date, play_last_minute = ${w.minute}
          WHERE id = ${userId} AND ${within(0n)(at)} AND ${onlyIf}
          RETURNING id, ${currentTallies(sql, w, sql`users`)}
        )`
    }

    /** Why a `playStep` at `at` counted nothing. */
    const playRefusal = (userId: UserId, at: Date) =>
      Effect.flatMap(refusal(userId, 0n, at), (why): Effect.Effect<never, PlayRefusal> =>
        // The check refused, so a reason exists; were it ever not found, the action must not go ahead anyway.
        Option.isNone(why)
          ? Effect.dieMessage(`ResponsibleGaming: user ${userId}'s play refused without a reason`)
          : Effect.fail(why.value))

    /** Deposits are closed to an excluded player (403 SELF_EXCLUDED). */
    const requireNotExcluded = Effect.fn("ResponsibleGaming.requireNotExcluded")(function*(userId: UserId) {
      const at = yield* now
      const exclusion = exclusionAt(yield* stateOf(userId), at)
      if (exclusion.excluded) return yield* new SelfExcluded({ until: exclusion.until })
    })

    /** `GET /users/me/limits`: the limits in force, what is used of each window (loss from the ledger), what is pending. */
    const limitsOf = Effect.fn("ResponsibleGaming.limits")(function*(userId: UserId) {
      const at = yield* now
      const w = playWindowsAt(at)
      const row = yield* stateOf(userId)
      const since = w.week.start.getTime() < w.month.start.getTime() ? w.week.start : w.month.start
      // Money given back counts in the windows of the play it comes from: a sale from when that play was staked, a
      // battle refund from when its entry was paid (as the Ledger's tallies count it).
      const loss = yield* singleOf(UsageRow, sql`
        SELECT COALESCE(-SUM(t.amount_cents) FILTER (WHERE t.created_at >= ${w.day.start} AND t.staked_at >= ${w.day.start}), 0) AS day,
               COALESCE(-SUM(t.amount_cents) FILTER (WHERE t.created_at >= ${w.week.start} AND t.staked_at >= ${w.week.start}), 0) AS week,
               COALESCE(-SUM(t.amount_cents) FILTER (WHERE t.created_at >= ${w.month.start} AND t.staked_at >= ${w.month.start}), 0) AS month
        FROM (
          SELECT m.amount_cents, m.created_at,
                 CASE m.type
                   WHEN 'ITEM_SELL' THEN (SELECT COALESCE(ii.staked_at, ii.acquired_at) FROM inventory_items ii WHERE ii.id = m.reference_id)
                   WHEN 'BATTLE_REFUND' THEN (SELECT e.created_at FROM transactions e
                                             WHERE e.user_id = m.user_id AND e.type = 'BATTLE_ENTRY' AND e.reference_type = 'BATTLE'
                                               AND e.reference_id = m.reference_id AND e.id < m.id
                                             ORDER BY e.id DESC LIMIT 1)
                   ELSE m.created_at
                 END AS staked_at
          FROM transactions m
          WHERE m.user_id = ${userId} AND m.created_at >= ${since} AND m.created_at < ${w.month.end}
            AND m.type IN ('CASE_OPEN', 'BATTLE_ENTRY', 'RAFFLE_TICKET', 'ITEM_SELL', 'BATTLE_REFUND')
        ) t`)
      const pending: Array<PendingLimit> = []
      for (const field of FIELDS) {
        const stored = storedOf(row, field)
        if (stored.nextAt !== null && stored.nextAt.getTime() > at.getTime()) {
          pending.push({ field, value: stored.next === null ? null : Number(stored.next), effectiveAt: stored.nextAt })
        }
      }
      return {
        ...limitsAt(row, at),
        usage: {
          lossTodayCents: loss.day,
          lossWeekCents: loss.week,
          lossMonthCents: loss.month,
          playMinutesToday: talliesAt(row, w).minutes
        },
        pending
      } satisfies LimitsView
    })

    /** The player's row, created when missing, locked for the rest of the transaction. */
    const lockedState = (userId: UserId) =>
      Effect.zipRight(
        execute(sql`INSERT INTO responsible_gaming (user_id) VALUES (${userId}) ON CONFLICT (user_id) DO NOTHING`),
        singleOf(FullStateRow, sql`
          SELECT true AS has_row, g.daily_loss_cents, g.daily_loss_next, g.daily_loss_next_at, g.weekly_loss_cents,
                 g.weekly_loss_next, g.weekly_loss_next_at, g.monthly_loss_cents, g.monthly_loss_next, g.monthly_loss_next_at,
                 g.daily_play_minutes, g.daily_play_next, g.daily_play_next_at, g.excluded_at, g.excluded_until,
                 g.excluded_indefinitely, g.registry_listed, u.loss_day::text, u.loss_day_cents, u.loss_week::text,
                 u.loss_week_cents, u.loss_month::text, u.loss_month_cents, u.play_day::text, u.play_minutes, u.play_last_minute
          FROM responsible_gaming g JOIN users u ON u.id = g.user_id
          WHERE g.user_id = ${userId} FOR UPDATE OF g`)
      )

    /**
     * `PUT /users/me/limits` (docs/responsible-gaming.md#setting-limits): for each limit sent, a tighter value than
     * the one in force applies at once and cancels a pending change; a looser one or `null` becomes pending for 24
     * hours (replacing an earlier pending one); the value in force again cancels a pending change.
     */
    const setLimits = Effect.fn("ResponsibleGaming.setLimits")(function*(userId: UserId, update: LimitsUpdate) {
      const at = yield* now
      yield* transaction(setLimitsInTransaction(userId, update, at))
      return yield* limitsOf(userId)
    })

    /** What `setLimits` runs in its transaction: the limits in force and pending written, the changes audited. */
    const setLimitsInTransaction = Effect.fnUntraced(function*(userId: UserId, update: LimitsUpdate, at: Date) {
      const row = yield* lockedState(userId)
      const next: Record<LimitField, Stored> = {} as Record<LimitField, Stored>
      const changed: Array<{ field: LimitField; value: string | null; at: "now" | Date }> = []
      for (const field of FIELDS) {
        const stored = storedOf(row, field)
        const inForce = effectiveOf(stored, at)
        // A pending change already due is written back as the value in force.
        const settled: Stored = stored.nextAt !== null && stored.nextAt.getTime() <= at.getTime()
          ? { current: inForce, next: null, nextAt: null }
          : stored
        const sent = update[field]
        if (sent === undefined) {
          next[field] = settled
        } else if (tighter(sent, inForce)) {
          next[field] = { current: sent, next: null, nextAt: null }
          changed.push({ field, value: String(sent), at: "now" })
        } else if (sent === inForce) {
          next[field] = { current: inForce, next: null, nextAt: null }
        } else {
          const effectiveAt = new Date(at.getTime() + RAISE_DELAY_MS)
          next[field] = { current: inForce, next: sent, nextAt: effectiveAt }
          changed.push({ field, value: sent === null ? null : String(sent), at: effectiveAt })
        }
      }
      const v = (field: LimitField) => next[field]
      yield* execute(sql`
        UPDATE responsible_gaming SET
          daily_loss_cents = ${v("dailyLossCents").current}, daily_loss_next = ${v("dailyLossCents").next},
          daily_loss_next_at = ${v("dailyLossCents").nextAt},
          weekly_loss_cents = ${v("weeklyLossCents").current}, weekly_loss_next = ${v("weeklyLossCents").next},
          weekly_loss_next_at = ${v("weeklyLossCents").nextAt},
          monthly_loss_cents = ${v("monthlyLossCents").current}, monthly_loss_next = ${v("monthlyLossCents").next},
          monthly_loss_next_at = ${v("monthlyLossCents").nextAt},
          daily_play_minutes = ${v("dailyPlayMinutes").current}, daily_play_next = ${v("dailyPlayMinutes").next},
          daily_play_next_at = ${v("dailyPlayMinutes").nextAt},
          updated_at = ${at}
        WHERE user_id = ${userId}`)
      if (changed.length > 0) {
        yield* audit.record({
          userId,
          action: "RESPONSIBLE_GAMING_LIMITS",
          metadata: { changes: changed.map((c) => ({ ...c, at: c.at === "now" ? "now" : c.at.toISOString() })) }
        })
      }
    })

    const exclusionOf = Effect.fn("ResponsibleGaming.exclusion")(function*(userId: UserId) {
      return exclusionAt(yield* stateOf(userId), yield* now)
    })

    /**
     * `POST /users/me/self-exclusion` (docs/responsible-gaming.md#self-exclusion): from now, for `days` or for ever.
     * An exclusion in force is only ever extended: an earlier end is 409 `Self-exclusion cannot be shortened`.
     */
    const selfExclude = Effect.fn("ResponsibleGaming.selfExclude")(function*(userId: UserId, request: SelfExclusionRequest) {
      const at = yield* now
      yield* transaction(selfExcludeInTransaction(userId, request, at))
      return yield* exclusionOf(userId)
    })

    /** What `selfExclude` runs in its transaction: the exclusion, never shortened, and its audit. */
    const selfExcludeInTransaction = Effect.fnUntraced(function*(
      userId: UserId,
      request: SelfExclusionRequest,
      at: Date
    ) {
      const row = yield* lockedState(userId)
      const current = exclusionAt({ ...row, registryListed: false }, at)
      const indefinite = "indefinite" in request
      const until = indefinite ? null : new Date(at.getTime() + request.days * 86_400_000)
      if (current.excluded) {
        const shorter = current.until === null ? !indefinite : until !== null && until.getTime() < current.until.getTime()
        if (shorter) return yield* new ExclusionCannotBeShortened()
      }
      const since = current.excluded ? current.since ?? at : at
      yield* execute(sql`
        UPDATE responsible_gaming SET excluded_at = ${since}, excluded_until = ${until},
               excluded_indefinitely = ${indefinite}, updated_at = ${at}
        WHERE user_id = ${userId}`)
      yield* audit.record({
        userId,
        action: "SELF_EXCLUDED",
        metadata: { source: "player", until: until?.toISOString() ?? null, extended: current.excluded }
      })
    })

    // --- The centralized registry (JURISDICTION=BR) ---

    /**
     * Each user's daily check, as far as this instance knows: the day it was done, when to try again after a failure,
     * or the check under way (which the user's other requests wait for rather than start their own).
     */
    const checkedToday = new Map<UserId, string | number | Deferred.Deferred<void>>()
    let checkedDay = ""

    /**
     * Records the registry's answer for a player: listed, they are excluded while listed (audit SELF_EXCLUDED, source
     * registry, when newly listed); no longer listed, that exclusion ends. Returns whether they became listed now.
     */
    const recordVerdict = Effect.fnUntraced(function*(userId: UserId, listed: boolean, at: Date) {
      const row = yield* lockedState(userId)
      const own = exclusionAt({ ...row, registryListed: false }, at)
      const newlyListed = listed && !row.registryListed
      yield* execute(sql`
        UPDATE responsible_gaming SET registry_listed = ${listed}, registry_checked_at = ${at}, updated_at = ${at},
               excluded_at = ${newlyListed && !own.excluded ? at : row.excludedAt}
        WHERE user_id = ${userId}`)
      if (newlyListed) yield* audit.record({ userId, action: "SELF_EXCLUDED", metadata: { source: "registry" } })
      if (!listed && row.registryListed) yield* audit.record({ userId, action: "REGISTRY_DELISTED" })
      return newlyListed
    }, (effect) => effect.pipe(transaction))

    /**
     * Looks a verified player up in the registry and records the verdict; a player listed now has their whole balance
     * paid out to their own account (docs/rules.md#excluded-players-balance), or, with no key to pay to, waits for an
     * administrator (the dashboard's `excluded-balance` alert). False for a player not verified.
     */
    const consultRegistry = Effect.fnUntraced(function*(userId: UserId, at: Date) {
      const holder = yield* identities.holderCpf(userId)
      if (holder === undefined) return false
      const listed = yield* registry.isListed(holder.digits)
      const newlyListed = yield* recordVerdict(userId, listed, at)
      if (newlyListed) {
        const payout = yield* withdrawals.payOutExcludedBalance(userId)
        yield* Effect.logDebug(`Exclusion registry: user ${userId} is listed; balance payout: ${payout._tag}`)
      }
      return newlyListed
    })

    /** The daily check itself: the registry asked unless the stored date says it was today; whether it was done. */
    const dailyCheck = Effect.fnUntraced(function*(userId: UserId, at: Date, w: PlayWindows) {
      const last = yield* firstOf(
        Schema.Struct({ checkedAt: Schema.NullOr(Schema.DateFromSelf) }),
        sql`SELECT registry_checked_at AS checked_at FROM responsible_gaming WHERE user_id = ${userId}`
      )
      if (last?.checkedAt == null || last.checkedAt.getTime() < w.day.start.getTime()) yield* consultRegistry(userId, at)
      checkedToday.set(userId, w.day.key)
    }, (effect, userId) => effect.pipe(Effect.catchAll((error) =>
          Effect.zipRight(
            Effect.logWarning("Exclusion registry: the daily check failed; asking again later", { error: error._tag }),
            Effect.map(Clock.currentTimeMillis, (ms) => void checkedToday.set(userId, ms + REGISTRY_RETRY_MS))
          )
        ), Effect.withSpan("ResponsibleGaming.dailyRegistryCheck")))

    /**
     * The first authenticated request of each day (America/Sao_Paulo) of a verified player, under BR: the registry
     * is consulted unless it was today already. It never fails the request and never holds it long: the check runs
     * on its own fiber, which the user's requests wait for at most REGISTRY_WAIT (usually it is done well within,
     * and the request sees its verdict); a registry that does not answer is logged and asked again on a request 5
     * minutes later. A user's parallel requests share one check.
     */
    const checkRegistryToday = (userId: UserId): Effect.Effect<void> => {
      if (!br) return Effect.void
      return awaitDailyCheck(userId)
    }

    /** `checkRegistryToday` under BR: the day's check started unless done or under way, then waited for. */
    const awaitDailyCheck = Effect.fnUntraced(function*(userId: UserId) {
      const at = yield* now
      const w = playWindowsAt(at)
      if (checkedDay !== w.day.key) {
        checkedToday.clear()
        checkedDay = w.day.key
      }
      const known = checkedToday.get(userId)
      if (known === w.day.key || (typeof known === "number" && known > at.getTime())) return
      const running = known !== undefined && typeof known === "object" ? known : yield* startDailyCheck(userId, at, w)
      yield* Effect.timeoutOption(Deferred.await(running), REGISTRY_WAIT)
    })

    /** The user's daily check on a fiber of its own, noted as under way; the deferred it completes when it ends. */
    const startDailyCheck = Effect.fnUntraced(function*(userId: UserId, at: Date, w: PlayWindows) {
      const done = yield* Deferred.make<void>()
      checkedToday.set(userId, done)
      yield* Effect.forkDaemon(Effect.ensuring(dailyCheck(userId, at, w), Deferred.succeed(done, undefined)))
      return done
    })

    /**
     * The 15-day job (docs/responsible-gaming.md#registry): every verified player not looked up in the last 15 days,
     * up to `batch` of them, longest ago first. Returns how many were looked up; one the registry fails on is left
     * for the next run.
     */
    const recheckRegistry = Effect.fn("ResponsibleGaming.recheckRegistry")(function*(batch = 500) {
      if (!br) return 0
      const at = yield* now
      const due = yield* rowsOf(Schema.Struct({ userId: UserId }), sql`
        SELECT i.user_id FROM user_identities i LEFT JOIN responsible_gaming g ON g.user_id = i.user_id
        WHERE i.status = 'VERIFIED'
          AND (g.registry_checked_at IS NULL OR g.registry_checked_at <= ${new Date(at.getTime() - REGISTRY_RECHECK_MS)})
        ORDER BY g.registry_checked_at NULLS FIRST, i.user_id LIMIT ${batch}`)
      let checked = 0
      for (const { userId } of due) {
        const ok = yield* Effect.either(consultRegistry(userId, at))
        if (ok._tag === "Right") checked++
        else yield* Effect.logWarning("Exclusion registry: a periodic check failed; next run", { error: ok.left._tag })
      }
      return checked
    })

    return {
      within,
      refusal,
      refused,
      stake,
      playStep,
      playRefusal,
      warn,
      playWarningSteps,
      requireNotExcluded,
      limitsOf,
      setLimits,
      exclusionOf,
      selfExclude,
      checkRegistryToday,
      recheckRegistry
    } as const
  }),
  dependencies: [Ledger.Default, Notifications.Default, Audit.Default, Identities.Default, Withdrawals.Default]
}) {}
