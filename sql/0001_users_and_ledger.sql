-- Users and the money ledger (DECISIONS D2, D4).
-- A balance changes only together with a row in transactions, in one database transaction;
-- the CHECK constraint is the last line of defence against an overdraft.

CREATE TABLE users (
  id                       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  idp_id                   text NOT NULL UNIQUE,
  username                 text NOT NULL,
  role                     text NOT NULL DEFAULT 'USER' CHECK (role IN ('USER', 'ADMIN')),
  balance_cents            bigint NOT NULL DEFAULT 0 CHECK (balance_cents >= 0),
  two_factor_secret        text,
  two_factor_enabled       boolean NOT NULL DEFAULT false,
  two_factor_backup_codes  text[] NOT NULL DEFAULT '{}',
  banned_at                timestamptz,
  ban_reason               text,
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE transactions (
  id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id              bigint NOT NULL REFERENCES users (id),
  type                 text NOT NULL CHECK (type IN (
                         'DEPOSIT', 'WITHDRAWAL', 'WITHDRAWAL_REFUND', 'CASE_OPEN', 'BATTLE_ENTRY',
                         'BATTLE_REFUND', 'ITEM_SELL', 'RAFFLE_TICKET', 'ADMIN_ADJUSTMENT')),
  amount_cents         bigint NOT NULL CHECK (amount_cents <> 0),
  balance_after_cents  bigint NOT NULL CHECK (balance_after_cents >= 0),
  counterparty         text NOT NULL CHECK (counterparty IN ('HOUSE', 'EXTERNAL')),
  reference_type       text,
  reference_id         bigint,
  reason               text,
  created_at           timestamptz NOT NULL DEFAULT now(),
  -- The sign and the counterparty follow from the type (D4); the database refuses any other pairing.
  CONSTRAINT transactions_sign_by_type CHECK (
    (type IN ('DEPOSIT', 'WITHDRAWAL_REFUND', 'BATTLE_REFUND', 'ITEM_SELL') AND amount_cents > 0)
    OR (type IN ('WITHDRAWAL', 'CASE_OPEN', 'BATTLE_ENTRY', 'RAFFLE_TICKET') AND amount_cents < 0)
    OR type = 'ADMIN_ADJUSTMENT'),
  CONSTRAINT transactions_counterparty_by_type CHECK (
    (type IN ('DEPOSIT', 'WITHDRAWAL', 'WITHDRAWAL_REFUND')) = (counterparty = 'EXTERNAL')),
  CONSTRAINT transactions_adjustment_has_reason CHECK (type <> 'ADMIN_ADJUSTMENT' OR reason IS NOT NULL)
);

CREATE INDEX transactions_user_created_idx ON transactions (user_id, created_at DESC, id DESC);
CREATE INDEX transactions_type_created_idx ON transactions (type, created_at);
CREATE INDEX transactions_reference_idx ON transactions (reference_type, reference_id);
