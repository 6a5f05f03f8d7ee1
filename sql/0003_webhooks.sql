-- Outbound webhook registrations (SPEC "Webhook registration", DECISIONS D12).
-- The secret keys the HMAC of every delivery, so it is kept; it is never returned by the API.

CREATE TABLE webhooks (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  url         text NOT NULL,
  events      text[] NOT NULL CHECK (cardinality(events) > 0),
  secret      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
