/**
 * The SQL of the responsible-gaming tallies and limits (docs/responsible-gaming.md#enforcement), shared by the
 * Ledger (which keeps the tallies in the same UPDATE that moves a game's money) and ResponsibleGaming (which
 * decides what an action may do).
 *
 * The tallies live on the player's `users` row, beside the balance: the loss of the current day, ISO week and
 * month (game debits less item sales and battle refunds, signed: a window with more sold than spent is negative),
 * and the distinct minutes played today. A tally counts only while its window key is the current one. A game
 * debit's UPDATE carries `withinLimits` in its WHERE: PostgreSQL re-evaluates that WHERE on the row's newest
 * version when a parallel action changed it first, so two actions at a limit's edge cannot both pass.
 */
import type { SqlClient, Statement } from "@effect/sql"
import type { PlayWindows } from "./PlayWindows"

/** The loss tallies, each with its window's key column and the window it belongs to. */
const LOSS_TALLIES = [
  { key: "loss_day", cents: "loss_day_cents", window: "day" },
  { key: "loss_week", cents: "loss_week_cents", window: "week" },
  { key: "loss_month", cents: "loss_month_cents", window: "month" }
] as const

/**
 * The SET items (none, or comma-separated fragments) of an UPDATE of `users` that adds `lossCents` (negative for money credited back) to the current
 * windows' loss, and with `countsMinute` this minute to today's play minutes (once however many actions it holds).
 * Money credited back counts only in the windows its stake was made in (`stakedAt`: when the play the sold item comes from was staked, when
 * the refunded entry was paid; docs/responsible-gaming.md#loss): a credit never makes room in a later window than
 * the play it comes from. Every right-hand side reads the row as it was, so the order of the items does not matter.
 */
export const tallySet = (
  sql: SqlClient.SqlClient,
  w: PlayWindows,
  change: { readonly lossCents: bigint; readonly countsMinute: boolean; readonly stakedAt?: Date }
): ReadonlyArray<Statement.Fragment> => {
  const items: Array<Statement.Fragment> = []
  if (change.lossCents !== 0n) {
    for (const t of LOSS_TALLIES) {
      if (change.stakedAt !== undefined && change.stakedAt.getTime() < w[t.window].start.getTime()) continue
      const key = w[t.window].key
      items.push(sql`${sql(t.cents)} = CASE WHEN ${sql(t.key)} = ${key}::date THEN ${sql(t.cents)} ELSE 0 END + ${change.lossCents}`)
      items.push(sql`${sql(t.key)} = ${key}::date`)
    }
  }
  if (change.countsMinute) {
    items.push(sql`play_minutes = ${minutesAfter(sql, w, sql`users`)}`)
    items.push(sql`play_day = ${w.day.key}::date`, sql`play_last_minute = ${w.minute}`)
  }
  // Empty when nothing changes: money given back for play of windows that have all passed.
  return items
}

/** Today's play minutes once this minute is counted, from a row of `users` named `row`. */
const minutesAfter = (sql: SqlClient.SqlClient, w: PlayWindows, row: Statement.Fragment) =>
  sql`CASE WHEN ${row}.play_day = ${w.day.key}::date THEN ${row}.play_minutes ELSE 0 END
      + CASE WHEN ${row}.play_day = ${w.day.key}::date AND ${row}.play_last_minute = ${w.minute} THEN 0 ELSE 1 END`

/** A window's loss tally from a row of `users` named `row`: 0 when it belongs to an earlier window. */
const lossOf = (sql: SqlClient.SqlClient, w: PlayWindows, row: Statement.Fragment, t: (typeof LOSS_TALLIES)[number]) =>
  sql`CASE WHEN ${row}.${sql(t.key)} = ${w[t.window].key}::date THEN ${row}.${sql(t.cents)} ELSE 0 END`

/**
 * Whether the player of the `users` row being updated may make a game action of `stakeCents` at `at`
 * (`play_allowed`, sql/0024, with its rules): it goes in that UPDATE's WHERE.
 */
export const withinLimits = (
  sql: SqlClient.SqlClient,
  w: PlayWindows,
  at: Date,
  stakeCents: bigint,
  required: boolean
): Statement.Fragment =>
  sql`play_allowed(users, ${stakeCents}, ${at}, ${w.day.key}::date, ${w.week.key}::date, ${w.month.key}::date, ${w.minute}, ${required})`

/**
 * Two steps of a statement that follow a game action (docs/responsible-gaming.md#warnings): `due`, the limits of
 * `userId` whose window has reached 80 % and not been warned of yet (never for an excluded player), read from
 * `tallies` (a row with `loss_day_cents`, `loss_week_cents`, `loss_month_cents`, `play_minutes` of the current
 * windows), and `warned`, which marks them warned for their window and returns their names, comma-separated, as
 * `limits`.
 */
export const warningSteps = (
  sql: SqlClient.SqlClient,
  w: PlayWindows,
  at: Date,
  userId: bigint,
  tallies: Statement.Fragment
): Statement.Fragment => {
  return sql`
    keys AS (SELECT ${w.day.key}::date AS day, ${w.week.key}::date AS week, ${w.month.key}::date AS month),
    due AS (
      SELECT l.daily_loss IS NOT NULL AND t.loss_day_cents * 5 >= l.daily_loss * 4
               AND g.warned_daily_loss IS DISTINCT FROM keys.day AS daily,
             l.weekly_loss IS NOT NULL AND t.loss_week_cents * 5 >= l.weekly_loss * 4
               AND g.warned_weekly_loss IS DISTINCT FROM keys.week AS weekly,
             l.monthly_loss IS NOT NULL AND t.loss_month_cents * 5 >= l.monthly_loss * 4
               AND g.warned_monthly_loss IS DISTINCT FROM keys.month AS monthly,
             l.daily_play IS NOT NULL AND t.play_minutes * 5 >= l.daily_play * 4
               AND g.warned_daily_play IS DISTINCT FROM keys.day AS play,
             keys.day, keys.week, keys.month
      FROM responsible_gaming g CROSS JOIN LATERAL limits_in_force(g, ${at}) l, ${tallies} t, keys
      WHERE g.user_id = ${userId} AND NOT g.excluded_indefinitely AND NOT g.registry_listed
        AND (g.excluded_until IS NULL OR g.excluded_until <= ${at})
    ),
    warned AS (
      UPDATE responsible_gaming g SET
        warned_daily_loss = CASE WHEN due.daily THEN due.day ELSE g.warned_daily_loss END,
        warned_weekly_loss = CASE WHEN due.weekly THEN due.week ELSE g.warned_weekly_loss END,
        warned_monthly_loss = CASE WHEN due.monthly THEN due.month ELSE g.warned_monthly_loss END,
        warned_daily_play = CASE WHEN due.play THEN due.day ELSE g.warned_daily_play END
      FROM due
      -- Checked again on the row itself: of two actions that race past 80 %, the second finds it warned.
      WHERE g.user_id = ${userId}
        AND ((due.daily AND g.warned_daily_loss IS DISTINCT FROM due.day)
          OR (due.weekly AND g.warned_weekly_loss IS DISTINCT FROM due.week)
          OR (due.monthly AND g.warned_monthly_loss IS DISTINCT FROM due.month)
          OR (due.play AND g.warned_daily_play IS DISTINCT FROM due.day))
      RETURNING concat_ws(',', CASE WHEN due.daily THEN 'dailyLossCents' END, CASE WHEN due.weekly THEN 'weeklyLossCents' END,
                          CASE WHEN due.monthly THEN 'monthlyLossCents' END, CASE WHEN due.play THEN 'dailyPlayMinutes' END)
                AS limits
    )`
}

/**
 * The current windows' tallies (`loss_day_cents`, `loss_week_cents`, `loss_month_cents`, `play_minutes`) of a row of
 * `users` named `row`, as `warningSteps` reads them: a select list, or an UPDATE's RETURNING list.
 */
export const currentTallies = (sql: SqlClient.SqlClient, w: PlayWindows, row: Statement.Fragment): Statement.Fragment =>
  sql`${lossOf(sql, w, row, LOSS_TALLIES[0])} AS loss_day_cents, ${lossOf(sql, w, row, LOSS_TALLIES[1])} AS loss_week_cents,
      ${lossOf(sql, w, row, LOSS_TALLIES[2])} AS loss_month_cents,
      CASE WHEN ${row}.play_day = ${w.day.key}::date THEN ${row}.play_minutes ELSE 0 END AS play_minutes`

/** The current windows' tallies of a player, as `warningSteps` reads them, from their `users` row. */
export const talliesOf = (sql: SqlClient.SqlClient, w: PlayWindows, userId: bigint): Statement.Fragment =>
  sql`(SELECT ${currentTallies(sql, w, sql`u`)} FROM users u WHERE u.id = ${userId})`
