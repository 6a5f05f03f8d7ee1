-- Idempotency keys of money-moving requests (docs/decisions.md "Idempotency keys"): the first
-- response to each key of a user, written in the same transaction as the money movement it answers.
CREATE TABLE idempotency_keys (
  user_id      bigint NOT NULL REFERENCES users (id),
  key          text NOT NULL,
  -- SHA-256 of the operation and its input: the same key with another request is refused.
  fingerprint  text NOT NULL,
  response     jsonb NOT NULL,
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (user_id, key)
);

-- Keys are kept 24 hours; the cleanup job deletes older ones by age.
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
