-- Responsible gaming (docs/responsible-gaming.md, D23): limits the player sets, self-exclusion, the
-- centralized exclusion registry's verdict, and the tallies the limits are enforced on.

-- The tallies of the current windows (America/Sao_Paulo day, ISO week, month), on the balance's own row:
-- the ledger's statement that moves a game's money updates them in the same UPDATE
-- (src/services/money/Ledger.ts), so they are the ledger's sums by construction, and the limit check in that
-- UPDATE's WHERE is re-evaluated on the row's newest version when two actions race (no overshoot).
-- A tally counts only while its window key is the current one: `loss_day` is the day of `loss_day_cents`.
ALTER TABLE users
  ADD COLUMN loss_day date,
  ADD COLUMN loss_day_cents bigint NOT NULL DEFAULT 0,
  ADD COLUMN loss_week date,
  ADD COLUMN loss_week_cents bigint NOT NULL DEFAULT 0,
  ADD COLUMN loss_month date,
  ADD COLUMN loss_month_cents bigint NOT NULL DEFAULT 0,
  -- Distinct minutes of `play_day` with a game action; `play_last_minute` is the last one counted.
  ADD COLUMN play_day date,
  ADD COLUMN play_minutes integer NOT NULL DEFAULT 0,
  ADD COLUMN play_last_minute timestamptz;

-- The current windows' losses of existing players, from the ledger: game debits less item sales and battle refunds,
-- each given back counted in the windows of the play it comes from (when the item was won, the entry paid), as the
-- Ledger counts them from now on (docs/responsible-gaming.md#loss).
UPDATE users u SET
  loss_day = t.day, loss_day_cents = t.day_loss,
  loss_week = t.week, loss_week_cents = t.week_loss,
  loss_month = t.month, loss_month_cents = t.month_loss
FROM (
  SELECT user_id, w.day, w.week, w.month,
         COALESCE(-SUM(amount_cents) FILTER (WHERE local::date = w.day AND staked::date = w.day), 0) AS day_loss,
         COALESCE(-SUM(amount_cents) FILTER (WHERE date_trunc('week', local)::date = w.week
                                               AND date_trunc('week', staked)::date = w.week), 0) AS week_loss,
         COALESCE(-SUM(amount_cents) FILTER (WHERE date_trunc('month', local)::date = w.month
                                               AND date_trunc('month', staked)::date = w.month), 0) AS month_loss
  FROM (SELECT m.user_id, m.amount_cents, m.created_at AT TIME ZONE 'America/Sao_Paulo' AS local,
               CASE m.type
                 WHEN 'ITEM_SELL' THEN (SELECT ii.acquired_at FROM inventory_items ii WHERE ii.id = m.reference_id)
                 WHEN 'BATTLE_REFUND' THEN (SELECT e.created_at FROM transactions e
                                           WHERE e.user_id = m.user_id AND e.type = 'BATTLE_ENTRY'
                                             AND e.reference_type = 'BATTLE' AND e.reference_id = m.reference_id
                                             AND e.id < m.id ORDER BY e.id DESC LIMIT 1)
                 ELSE m.created_at
               END AT TIME ZONE 'America/Sao_Paulo' AS staked
        FROM transactions m
        WHERE m.type IN ('CASE_OPEN', 'BATTLE_ENTRY', 'RAFFLE_TICKET', 'ITEM_SELL', 'BATTLE_REFUND')
          AND m.created_at >= now() - interval '32 days') g
  CROSS JOIN (SELECT (now() AT TIME ZONE 'America/Sao_Paulo')::date AS day,
                     date_trunc('week', now() AT TIME ZONE 'America/Sao_Paulo')::date AS week,
                     date_trunc('month', now() AT TIME ZONE 'America/Sao_Paulo')::date AS month) w
  GROUP BY user_id, w.day, w.week, w.month
) t
WHERE t.user_id = u.id;

-- One row per player who set a limit or was excluded; no row: no limits, not excluded.
CREATE TABLE responsible_gaming (
  user_id                bigint PRIMARY KEY REFERENCES users (id),
  -- The limits in force (NULL: none). A raise or a removal waits 24 h as `<limit>_next` (NULL: removal) from
  -- `<limit>_next_at`; until then the old value holds, and from then the next one, even before it is written back.
  daily_loss_cents       bigint CHECK (daily_loss_cents >= 0),
  weekly_loss_cents      bigint CHECK (weekly_loss_cents >= 0),
  monthly_loss_cents     bigint CHECK (monthly_loss_cents >= 0),
  daily_play_minutes     integer CHECK (daily_play_minutes BETWEEN 1 AND 1440),
  daily_loss_next        bigint CHECK (daily_loss_next >= 0),
  daily_loss_next_at     timestamptz,
  weekly_loss_next       bigint CHECK (weekly_loss_next >= 0),
  weekly_loss_next_at    timestamptz,
  monthly_loss_next      bigint CHECK (monthly_loss_next >= 0),
  monthly_loss_next_at   timestamptz,
  daily_play_next        integer CHECK (daily_play_next BETWEEN 1 AND 1440),
  daily_play_next_at     timestamptz,
  -- Self-exclusion: from `excluded_at` until `excluded_until`, or for ever; never shortened.
  excluded_at            timestamptz,
  excluded_until         timestamptz,
  excluded_indefinitely  boolean NOT NULL DEFAULT false,
  -- The centralized registry's last verdict: listed means excluded while listed.
  registry_listed        boolean NOT NULL DEFAULT false,
  registry_checked_at    timestamptz,
  -- The window (day, ISO week's Monday, month's first day) each 80 % warning was last sent for.
  warned_daily_loss      date,
  warned_weekly_loss     date,
  warned_monthly_loss    date,
  warned_daily_play      date,
  updated_at             timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT responsible_gaming_exclusion_dated CHECK (
    (excluded_until IS NULL AND NOT excluded_indefinitely) OR excluded_at IS NOT NULL)
);
-- The limits of a player's row in force at `p_at`: a pending change once due (docs/responsible-gaming.md#setting-limits).
-- PL/pgSQL rather than SQL: these run inside the hot path's statement, and a SQL function that cannot be inlined is
-- planned again on every statement, where PL/pgSQL keeps its plans for the connection (measured: bench:vs-pgbench).
CREATE FUNCTION limits_in_force(g responsible_gaming, p_at timestamptz,
  OUT daily_loss bigint, OUT weekly_loss bigint, OUT monthly_loss bigint, OUT daily_play integer)
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  daily_loss := CASE WHEN g.daily_loss_next_at <= p_at THEN g.daily_loss_next ELSE g.daily_loss_cents END;
  weekly_loss := CASE WHEN g.weekly_loss_next_at <= p_at THEN g.weekly_loss_next ELSE g.weekly_loss_cents END;
  monthly_loss := CASE WHEN g.monthly_loss_next_at <= p_at THEN g.monthly_loss_next ELSE g.monthly_loss_cents END;
  daily_play := CASE WHEN g.daily_play_next_at <= p_at THEN g.daily_play_next ELSE g.daily_play_minutes END;
END
$$;

-- Whether the player of the `users` row `u` may make a game action staking `p_stake` at `p_at`, whose windows start on
-- `p_day`, `p_week`, `p_month` (America/Sao_Paulo) in the minute `p_minute` (docs/responsible-gaming.md#enforcement):
-- not excluded (by themselves or by the registry); with `p_required` (JURISDICTION=BR) a loss limit and a play limit
-- set; no window's loss over its limit once the stake is added (a limit reached stops even an action without a stake:
-- it needs 1 cent of room); this minute within the day's play minutes. No `responsible_gaming` row: no limits, not
-- excluded. Called in the WHERE of the stake's UPDATE of `users`, so a racing action's tallies are seen.
CREATE FUNCTION play_allowed(u users, p_stake bigint, p_at timestamptz, p_day date, p_week date, p_month date,
                             p_minute timestamptz, p_required boolean)
RETURNS boolean LANGUAGE plpgsql STABLE AS $$
DECLARE
  g responsible_gaming;
  l record;
  need bigint := GREATEST(p_stake, 1);
BEGIN
  SELECT * INTO g FROM responsible_gaming WHERE user_id = u.id;
  IF NOT FOUND THEN
    RETURN NOT p_required;
  END IF;
  IF g.excluded_indefinitely OR g.registry_listed OR g.excluded_until > p_at THEN
    RETURN false;
  END IF;
  l := limits_in_force(g, p_at);
  IF p_required AND ((l.daily_loss IS NULL AND l.weekly_loss IS NULL AND l.monthly_loss IS NULL) OR l.daily_play IS NULL) THEN
    RETURN false;
  END IF;
  RETURN (l.daily_loss IS NULL
          OR CASE WHEN u.loss_day = p_day THEN u.loss_day_cents ELSE 0 END + need <= l.daily_loss)
     AND (l.weekly_loss IS NULL
          OR CASE WHEN u.loss_week = p_week THEN u.loss_week_cents ELSE 0 END + need <= l.weekly_loss)
     AND (l.monthly_loss IS NULL
          OR CASE WHEN u.loss_month = p_month THEN u.loss_month_cents ELSE 0 END + need <= l.monthly_loss)
     AND (l.daily_play IS NULL
          OR CASE WHEN u.play_day = p_day THEN u.play_minutes ELSE 0 END
             + CASE WHEN u.play_day = p_day AND u.play_last_minute = p_minute THEN 0 ELSE 1 END <= l.daily_play);
END
$$;

-- The 15-day registry job's walk: verified players checked longest ago first.
CREATE INDEX responsible_gaming_registry_checked_idx ON responsible_gaming (registry_checked_at);

ALTER TABLE notifications DROP CONSTRAINT notifications_type_check;
ALTER TABLE notifications ADD CONSTRAINT notifications_type_check
  CHECK (type IN ('DEPOSIT_CONFIRMED', 'DEPOSIT_EXPIRED', 'SECURITY_ALERT', 'RAFFLE_WON', 'WITHDRAWAL_REQUESTED',
                  'WITHDRAWAL_COMPLETED', 'WITHDRAWAL_REJECTED', 'WITHDRAWAL_FAILED', 'DEPOSIT_REFUNDED',
                  'RESPONSIBLE_GAMING'));
