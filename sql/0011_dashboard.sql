-- The administration dashboard (SPEC "Administration and dashboard", D15): indexes for "today"
-- figures, and a cache of closed days for the revenue chart.

CREATE INDEX users_created_idx ON users (created_at);
-- (time, id): also the order of the recent-activity feed, read newest first.
CREATE INDEX case_openings_created_idx ON case_openings (created_at, id);
CREATE INDEX upgrades_created_idx ON upgrades (created_at, id);
CREATE INDEX battles_created_idx ON battles (created_at, id);
CREATE INDEX deposits_created_idx ON deposits (created_at);
CREATE INDEX deposits_confirmed_idx ON deposits (confirmed_at, id) WHERE status = 'CONFIRMED';
CREATE INDEX withdrawals_processed_idx ON withdrawals (processed_at) WHERE status = 'COMPLETED';
CREATE INDEX withdrawals_requested_idx ON withdrawals (requested_at, id);

-- Chart figures of UTC days that are over (their rows can no longer change): computed once, on first
-- need, then read. Today (and a day that ended less than an hour ago) is always computed live.
CREATE TABLE dashboard_days (
  day                date PRIMARY KEY,
  revenue_cents      bigint NOT NULL,
  deposits_cents     bigint NOT NULL,
  withdrawals_cents  bigint NOT NULL,
  computed_at        timestamptz NOT NULL
);
