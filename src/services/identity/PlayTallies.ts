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
 * Money credited back counts only in the windows its stake was made in (`stakedAt`: when the sold item was won, when
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

/** The four limits of `responsible_gaming`, with their pending changes and their tallies. */
const LIMIT_COLUMNS = {
  dailyLossCents: { column: "daily_loss_cents", next: "daily_loss_next", nextAt: "daily_loss_next_at", tally: LOSS_TALLIES[0] },
  weeklyLossCents: { column: "weekly_loss_cents", next: "weekly_loss_next", nextAt: "weekly_loss_next_at", tally: LOSS_TALLIES[1] },
  monthlyLossCents: { column: "monthly_loss_cents", next: "monthly_loss_next", nextAt: "monthly_loss_next_at", tally: LOSS_TALLIES[2] },
  dailyPlayMinutes: { column: "daily_play_minutes", next: "daily_play_next", nextAt: "daily_play_next_at", tally: undefined }
} as const

/** A limit of the `responsible_gaming` row `g` in force at `at`: its pending change once that is due. */
const effective = (sql: SqlClient.SqlClient, at: Date, limit: keyof typeof LIMIT_COLUMNS) => {
  const c = LIMIT_COLUMNS[limit]
  return sql`(CASE WHEN g.${sql(c.nextAt)} <= ${at} THEN g.${sql(c.next)} ELSE g.${sql(c.column)} END)`
}

/**
 * Whether the player of the `users` row being updated may make a game action of `stakeCents` at `at`: not
 * excluded (by themselves or by the registry); under `required` (JURISDICTION=BR) with a loss limit and a play
 * limit; no window's loss over its limit once the stake is added (a limit reached stops even actions without a
 * stake); and this minute within the day's play minutes. A player without a `responsible_gaming` row has no
 * limits and is not excluded.
 */
export const withinLimits = (
  sql: SqlClient.SqlClient,
  w: PlayWindows,
  at: Date,
  stakeCents: bigint,
  required: boolean
): Statement.Fragment => {
  // A stake of nothing still needs the limit not to be reached: loss + 1 <= limit.
  const need = stakeCents > 0n ? stakeCents : 1n
  const row = sql`users`
  const loss = (limit: "dailyLossCents" | "weeklyLossCents" | "monthlyLossCents") =>
    sql`(${effective(sql, at, limit)} IS NULL OR ${lossOf(sql, w, row, LIMIT_COLUMNS[limit].tally)} + ${need} <= ${effective(sql, at, limit)})`
  const play = effective(sql, at, "dailyPlayMinutes")
  return sql`COALESCE((
    SELECT NOT g.excluded_indefinitely AND NOT g.registry_listed AND (g.excluded_until IS NULL OR g.excluded_until <= ${at})
      AND ${required ? sql`(${effective(sql, at, "dailyLossCents")} IS NOT NULL OR ${effective(sql, at, "weeklyLossCents")} IS NOT NULL
                            OR ${effective(sql, at, "monthlyLossCents")} IS NOT NULL) AND ${play} IS NOT NULL` : sql`true`}
      AND ${loss("dailyLossCents")} AND ${loss("weeklyLossCents")} AND ${loss("monthlyLossCents")}
      AND (${play} IS NULL OR ${minutesAfter(sql, w, row)} <= ${play})
    FROM responsible_gaming g WHERE g.user_id = users.id), ${!required})`
}

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
  const reached = (limit: keyof typeof LIMIT_COLUMNS, used: Statement.Fragment, warned: string, key: string) =>
    sql`${effective(sql, at, limit)} IS NOT NULL AND ${used} * 5 >= ${effective(sql, at, limit)} * 4
        AND g.${sql(warned)} IS DISTINCT FROM ${key}::date`
  return sql`
    due AS (
      SELECT ${reached("dailyLossCents", sql`t.loss_day_cents`, "warned_daily_loss", w.day.key)} AS daily,
             ${reached("weeklyLossCents", sql`t.loss_week_cents`, "warned_weekly_loss", w.week.key)} AS weekly,
             ${reached("monthlyLossCents", sql`t.loss_month_cents`, "warned_monthly_loss", w.month.key)} AS monthly,
             ${reached("dailyPlayMinutes", sql`t.play_minutes`, "warned_daily_play", w.day.key)} AS play
      FROM responsible_gaming g, ${tallies} t
      WHERE g.user_id = ${userId} AND NOT g.excluded_indefinitely AND NOT g.registry_listed
        AND (g.excluded_until IS NULL OR g.excluded_until <= ${at})
    ),
    warned AS (
      UPDATE responsible_gaming g SET
        warned_daily_loss = CASE WHEN due.daily THEN ${w.day.key}::date ELSE g.warned_daily_loss END,
        warned_weekly_loss = CASE WHEN due.weekly THEN ${w.week.key}::date ELSE g.warned_weekly_loss END,
        warned_monthly_loss = CASE WHEN due.monthly THEN ${w.month.key}::date ELSE g.warned_monthly_loss END,
        warned_daily_play = CASE WHEN due.play THEN ${w.day.key}::date ELSE g.warned_daily_play END
      FROM due
      -- Checked again on the row itself: of two actions that race past 80 %, the second finds it warned.
      WHERE g.user_id = ${userId}
        AND ((due.daily AND g.warned_daily_loss IS DISTINCT FROM ${w.day.key}::date)
          OR (due.weekly AND g.warned_weekly_loss IS DISTINCT FROM ${w.week.key}::date)
          OR (due.monthly AND g.warned_monthly_loss IS DISTINCT FROM ${w.month.key}::date)
          OR (due.play AND g.warned_daily_play IS DISTINCT FROM ${w.day.key}::date))
      RETURNING concat_ws(',', CASE WHEN due.daily THEN 'dailyLossCents' END, CASE WHEN due.weekly THEN 'weeklyLossCents' END,
                          CASE WHEN due.monthly THEN 'monthlyLossCents' END, CASE WHEN due.play THEN 'dailyPlayMinutes' END)
                AS limits
    )`
}

/** The current windows' tallies of a player, as `warningSteps` reads them, from their `users` row. */
export const talliesOf = (sql: SqlClient.SqlClient, w: PlayWindows, userId: bigint): Statement.Fragment =>
  sql`(SELECT ${lossOf(sql, w, sql`u`, LOSS_TALLIES[0])} AS loss_day_cents, ${lossOf(sql, w, sql`u`, LOSS_TALLIES[1])} AS loss_week_cents,
              ${lossOf(sql, w, sql`u`, LOSS_TALLIES[2])} AS loss_month_cents,
              CASE WHEN u.play_day = ${w.day.key}::date THEN u.play_minutes ELSE 0 END AS play_minutes
       FROM users u WHERE u.id = ${userId})`
