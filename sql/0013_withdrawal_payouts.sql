-- Withdrawals (D18): a payout whose outcome is not known keeps its withdrawal PROCESSING until the
-- gateway's payout event or a reconciliation settles it; FAILED is a payout the gateway reported
-- failed, refunded. PROCESSING replaces the approval's claim (0008), and every withdrawal request
-- is announced to its owner by a notification of the new type WITHDRAWAL_REQUESTED.

ALTER TABLE withdrawals
  DROP CONSTRAINT withdrawals_claim_only_pending,
  DROP CONSTRAINT withdrawals_status_check,
  DROP CONSTRAINT withdrawals_check,
  DROP CONSTRAINT withdrawals_rejected_has_reason,
  -- When the latest approval handed the payout to the gateway.
  ADD COLUMN payout_started_at timestamptz;

-- An approval in flight while this runs: its outcome is unknown to us from here on.
UPDATE withdrawals SET status = 'PROCESSING', payout_started_at = payout_claimed_at
WHERE payout_claim IS NOT NULL AND status = 'PENDING';

ALTER TABLE withdrawals
  DROP CONSTRAINT withdrawals_claim_consistent,
  DROP COLUMN payout_claim,
  DROP COLUMN payout_claimed_at,
  ADD CONSTRAINT withdrawals_status_check
    CHECK (status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'REJECTED', 'CANCELLED', 'FAILED')),
  ADD CONSTRAINT withdrawals_open_not_processed CHECK ((status IN ('PENDING', 'PROCESSING')) = (processed_at IS NULL)),
  ADD CONSTRAINT withdrawals_processing_started CHECK (status <> 'PROCESSING' OR payout_started_at IS NOT NULL),
  -- REJECTED: the administrator's reason; FAILED: the gateway's.
  ADD CONSTRAINT withdrawals_ended_has_reason CHECK ((status IN ('REJECTED', 'FAILED')) = (rejection_reason IS NOT NULL));

-- The rolling 24 hours of a user's withdrawals (D18's 2FA threshold).
CREATE INDEX withdrawals_user_requested_idx ON withdrawals (user_id, requested_at);

ALTER TABLE notifications DROP CONSTRAINT notifications_type_check;
ALTER TABLE notifications ADD CONSTRAINT notifications_type_check
  CHECK (type IN ('DEPOSIT_CONFIRMED', 'DEPOSIT_EXPIRED', 'SECURITY_ALERT', 'RAFFLE_WON', 'WITHDRAWAL_REQUESTED'));
