-- Case economics and deposit fees (D21).

-- A promotional case (free or event cases) may pay back more than its house edge on purpose; every
-- other case is refused when it would (see src/services/CaseEconomics.ts).
ALTER TABLE cases ADD COLUMN promotional boolean NOT NULL DEFAULT false;
