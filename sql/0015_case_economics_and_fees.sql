-- Case economics and deposit fees (D21).

-- A promotional case (free or event cases) may pay back more than its house edge on purpose; every
-- other case is refused when it would (see src/services/CaseEconomics.ts).
ALTER TABLE cases ADD COLUMN promotional boolean NOT NULL DEFAULT false;

-- The fee the payer pays on top of the amount (SPEC deposit rule 6): the gateway charges
-- amount_cents + fee_cents, the user is credited amount_cents. Deposits made before fees were
-- charged paid none.
ALTER TABLE deposits ADD COLUMN fee_cents bigint NOT NULL DEFAULT 0 CHECK (fee_cents >= 0);
