-- Withdrawals (D9; docs/decisions.md "Withdrawals"): the claim an approval holds while it asks the
-- gateway for the payout, so that two approvals pay out once and nobody cancels or rejects (refunds)
-- a withdrawal whose money may be on its way out.

ALTER TABLE withdrawals
  -- Random token of the approval calling the gateway right now; NULL when none is.
  ADD COLUMN payout_claim       text,
  ADD COLUMN payout_claimed_at  timestamptz,
  -- Payout calls started; after the first, only an administrator can end the withdrawal.
  ADD COLUMN payout_attempts    integer NOT NULL DEFAULT 0 CHECK (payout_attempts >= 0),
  -- The gateway's message for the last failed payout, for the administrator.
  ADD COLUMN payout_error       text,
  ADD CONSTRAINT withdrawals_claim_consistent CHECK ((payout_claim IS NULL) = (payout_claimed_at IS NULL)),
  ADD CONSTRAINT withdrawals_claim_only_pending CHECK (payout_claim IS NULL OR status = 'PENDING'),
  ADD CONSTRAINT withdrawals_completed_has_payout CHECK ((status = 'COMPLETED') = (payout_id IS NOT NULL)),
  ADD CONSTRAINT withdrawals_rejected_has_reason CHECK ((status = 'REJECTED') = (rejection_reason IS NOT NULL));
