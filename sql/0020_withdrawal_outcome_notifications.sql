-- A withdrawal's owner is told how it ended (docs/rules.md#withdrawal-outcome-notifications; issue 31, D22):
-- paid out, rejected by an administrator (with the reason) or failed at the gateway (refunded).
ALTER TABLE notifications DROP CONSTRAINT notifications_type_check;
ALTER TABLE notifications ADD CONSTRAINT notifications_type_check
  CHECK (type IN ('DEPOSIT_CONFIRMED', 'DEPOSIT_EXPIRED', 'SECURITY_ALERT', 'RAFFLE_WON', 'WITHDRAWAL_REQUESTED',
                  'WITHDRAWAL_COMPLETED', 'WITHDRAWAL_REJECTED', 'WITHDRAWAL_FAILED'));
