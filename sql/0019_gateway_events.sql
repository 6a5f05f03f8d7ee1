-- The payment gateway's callbacks (docs/rules.md#gateway-event-ids; docs/decisions.md "Gateway callback
-- replays"): one row per event taken, written in the transaction of the effect the event caused, so a
-- replay of the same event finds its row and moves nothing, and a crash never keeps one without the other.
CREATE TABLE gateway_events (
  -- SHA-256 (hex) of what the signature covers: `timestamp.body`, or the body when the callback had no
  -- timestamp; the body in its compact JSON form.
  event_id     text PRIMARY KEY,
  -- The event's name (`charge.paid`, `payout.failed`, ...) and its `data.id` (the gateway's charge or payout id).
  event        text NOT NULL,
  object_id    text NOT NULL,
  -- `x-webhook-timestamp`; NULL for a callback signed without one.
  signed_at    timestamptz,
  received_at  timestamptz NOT NULL
);
