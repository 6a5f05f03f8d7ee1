-- Why a deposit is refunded instead of credited (docs/rules.md#deposit-third-party, docs/rules.md#deposit-excluded):
-- paid by someone other than the account holder under JURISDICTION=BR (THIRD_PARTY, D22), or paid while its owner is
-- excluded, in every jurisdiction (SELF_EXCLUDED, D23). Kept on the row so the refund job, retrying later, tells the
-- owner the right reason. Every refund so far was a third party's.
ALTER TABLE deposits ADD COLUMN refund_reason text;
ALTER TABLE deposits ADD CONSTRAINT deposits_refund_reason_check
  CHECK (refund_reason IN ('THIRD_PARTY', 'SELF_EXCLUDED'));
UPDATE deposits SET refund_reason = 'THIRD_PARTY' WHERE status IN ('REFUND_PENDING', 'REFUNDED');
-- A refund has a reason, and only a refund has one: a deposit with a reason is never CONFIRMED (never credited).
ALTER TABLE deposits ADD CONSTRAINT deposits_refund_has_reason
  CHECK ((status IN ('REFUND_PENDING', 'REFUNDED')) = (refund_reason IS NOT NULL));
