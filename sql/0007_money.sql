-- Money in and out: deposits, withdrawals, and the outbox of outbound webhooks (SPEC Deposit; D9, D12).

CREATE TABLE deposits (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id         bigint NOT NULL REFERENCES users (id),
  amount_cents    bigint NOT NULL CHECK (amount_cents BETWEEN 500 AND 10000000),
  method          text NOT NULL CHECK (method IN ('PIX', 'CREDIT_CARD', 'CRYPTO')),
  status          text NOT NULL DEFAULT 'PENDING'
                    CHECK (status IN ('PENDING', 'CONFIRMED', 'FAILED', 'EXPIRED', 'CANCELLED')),
  external_id     text NOT NULL UNIQUE,
  expires_at      timestamptz NOT NULL,
  confirmed_at    timestamptz,
  failure_reason  text,
  qr_code         text NOT NULL,
  qr_code_text    text NOT NULL,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  CHECK ((status = 'CONFIRMED') = (confirmed_at IS NOT NULL))
);

CREATE INDEX deposits_user_idx ON deposits (user_id, id DESC);
CREATE INDEX deposits_pending_expiry_idx ON deposits (expires_at) WHERE status = 'PENDING';
CREATE INDEX deposits_status_idx ON deposits (status, id DESC);

CREATE TABLE withdrawals (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id           bigint NOT NULL REFERENCES users (id),
  amount_cents      bigint NOT NULL CHECK (amount_cents BETWEEN 1000 AND 10000000),
  status            text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'COMPLETED', 'REJECTED', 'CANCELLED')),
  payment_method    text NOT NULL CHECK (payment_method = 'PIX'),
  pix_key_type      text NOT NULL CHECK (pix_key_type IN ('EMAIL', 'CPF', 'CNPJ', 'PHONE', 'RANDOM')),
  pix_key           text NOT NULL,
  payout_id         text,
  rejection_reason  text,
  requested_at      timestamptz NOT NULL,
  processed_at      timestamptz,
  CHECK ((status = 'PENDING') = (processed_at IS NULL))
);

CREATE INDEX withdrawals_user_idx ON withdrawals (user_id, id DESC);
CREATE INDEX withdrawals_status_idx ON withdrawals (status, requested_at);

-- One row per (registered webhook, event): written in the event's transaction, delivered by a worker.
CREATE TABLE webhook_deliveries (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  webhook_id       bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event            text NOT NULL,
  -- Exactly the bytes sent, {event, timestamp, data, signature}: text, because jsonb would reorder
  -- keys and the signature covers the serialized form.
  payload          text NOT NULL,
  status           text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL,
  delivered_at     timestamptz,
  created_at       timestamptz NOT NULL
);

CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'PENDING';

CREATE TABLE webhook_attempts (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id   bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempted_at  timestamptz NOT NULL,
  status_code   integer,
  error         text,
  duration_ms   integer NOT NULL
);

CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, id);
