-- Deposits paid by someone other than the account holder under JURISDICTION=BR (docs/rules.md#deposit-third-party;
-- issue 31, D22): never credited, returned to the payer through the gateway. REFUND_PENDING from the callback's
-- transaction until the gateway accepts the refund, then REFUNDED with the gateway's refund id.
ALTER TABLE deposits DROP CONSTRAINT deposits_status_check;
ALTER TABLE deposits ADD CONSTRAINT deposits_status_check
  CHECK (status IN ('PENDING', 'CONFIRMED', 'FAILED', 'EXPIRED', 'CANCELLED', 'REFUND_PENDING', 'REFUNDED'));
ALTER TABLE deposits ADD COLUMN refunded_at timestamptz;
ALTER TABLE deposits ADD COLUMN refund_id text;
ALTER TABLE deposits ADD CONSTRAINT deposits_refunded_has_refund
  CHECK ((status = 'REFUNDED') = (refunded_at IS NOT NULL AND refund_id IS NOT NULL));
-- What the refund job retries (docs/rules.md#deposit-refund-retry).
CREATE INDEX deposits_refund_pending_idx ON deposits (id) WHERE status = 'REFUND_PENDING';

ALTER TABLE notifications DROP CONSTRAINT notifications_type_check;
ALTER TABLE notifications ADD CONSTRAINT notifications_type_check
  CHECK (type IN ('DEPOSIT_CONFIRMED', 'DEPOSIT_EXPIRED', 'SECURITY_ALERT', 'RAFFLE_WON', 'WITHDRAWAL_REQUESTED',
                  'WITHDRAWAL_COMPLETED', 'WITHDRAWAL_REJECTED', 'WITHDRAWAL_FAILED', 'DEPOSIT_REFUNDED'));
