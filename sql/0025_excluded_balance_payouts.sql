-- The payout of an excluded player's balance (docs/rules.md#excluded-players-balance, D23): when the centralized
-- self-exclusion registry lists a player, the service pays the WHOLE balance out to the player's own key, whatever
-- its amount. So a request's bounds (1000 to 10000000 cents) hold for the players' own requests only, and the
-- service's payouts are marked, at most one of them unpaid (PENDING or PROCESSING) per player at a time.
ALTER TABLE withdrawals
  ADD COLUMN excluded_payout boolean NOT NULL DEFAULT false,
  DROP CONSTRAINT withdrawals_amount_cents_check,
  ADD CONSTRAINT withdrawals_amount_cents_check
    CHECK (amount_cents > 0 AND (excluded_payout OR amount_cents BETWEEN 1000 AND 10000000));

CREATE UNIQUE INDEX withdrawals_one_excluded_payout_idx ON withdrawals (user_id)
  WHERE excluded_payout AND status IN ('PENDING', 'PROCESSING');
