-- Raffles (D14): tickets sold in consecutive numbers, a commit-reveal draw when sold out or at endsAt.

CREATE TABLE raffles (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  item_id             bigint NOT NULL REFERENCES items (id),
  ticket_price_cents  bigint NOT NULL CHECK (ticket_price_cents > 0),
  max_tickets         integer NOT NULL CHECK (max_tickets BETWEEN 1 AND 10000),
  -- The guard of concurrent purchases: a conditional increment reserves a block of numbers.
  tickets_sold        integer NOT NULL DEFAULT 0 CHECK (tickets_sold BETWEEN 0 AND max_tickets),
  ends_at             timestamptz NOT NULL,
  status              text NOT NULL DEFAULT 'OPEN' CHECK (status IN ('OPEN', 'DRAWN', 'CANCELLED')),
  -- Committed at creation (the hash is public), revealed at the draw.
  server_seed         text NOT NULL,
  server_seed_hash    text NOT NULL,
  winning_ticket      integer,
  winner_id           bigint REFERENCES users (id),
  inventory_item_id   bigint REFERENCES inventory_items (id),
  created_at          timestamptz NOT NULL,
  closed_at           timestamptz,
  CHECK ((status = 'DRAWN') = (winning_ticket IS NOT NULL)),
  CHECK ((status = 'DRAWN') = (winner_id IS NOT NULL)),
  CHECK ((status = 'DRAWN') = (inventory_item_id IS NOT NULL)),
  CHECK ((status = 'OPEN') = (closed_at IS NULL)),
  CHECK (winning_ticket IS NULL OR winning_ticket BETWEEN 1 AND tickets_sold)
);

CREATE INDEX raffles_due_idx ON raffles (ends_at) WHERE status = 'OPEN';
CREATE INDEX raffles_status_idx ON raffles (status, id DESC);

-- One row per purchase: the block of consecutive ticket numbers it got.
CREATE TABLE raffle_tickets (
  raffle_id     bigint NOT NULL REFERENCES raffles (id),
  first_ticket  integer NOT NULL CHECK (first_ticket >= 1),
  last_ticket   integer NOT NULL,
  user_id       bigint NOT NULL REFERENCES users (id),
  created_at    timestamptz NOT NULL,
  PRIMARY KEY (raffle_id, first_ticket),
  CHECK (last_ticket >= first_ticket)
);

CREATE INDEX raffle_tickets_user_idx ON raffle_tickets (raffle_id, user_id);

-- The winner is told (D14); SPEC's three notification types plus this one.
ALTER TABLE notifications DROP CONSTRAINT notifications_type_check;
ALTER TABLE notifications ADD CONSTRAINT notifications_type_check
  CHECK (type IN ('DEPOSIT_CONFIRMED', 'DEPOSIT_EXPIRED', 'SECURITY_ALERT', 'RAFFLE_WON'));
