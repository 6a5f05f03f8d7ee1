-- Game core: provably fair state, inventory, openings, upgrades, statistics, live drops (D5, D7, D8, D11).

-- Each user's client seed and the one nonce counter shared by every game (D5).
CREATE TABLE fairness_seeds (
  user_id      bigint PRIMARY KEY REFERENCES users (id),
  client_seed  text NOT NULL,
  nonce        bigint NOT NULL DEFAULT 0 CHECK (nonce >= 0),
  updated_at   timestamptz NOT NULL
);

CREATE TABLE inventory_items (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id      bigint NOT NULL REFERENCES users (id),
  item_id      bigint NOT NULL REFERENCES items (id),
  status       text NOT NULL DEFAULT 'AVAILABLE' CHECK (status IN ('AVAILABLE', 'SOLD', 'UPGRADED')),
  source       text NOT NULL CHECK (source IN ('CASE_OPEN', 'UPGRADE', 'BATTLE', 'RAFFLE')),
  acquired_at  timestamptz NOT NULL,
  updated_at   timestamptz NOT NULL
);

CREATE INDEX inventory_items_user_idx ON inventory_items (user_id, status, acquired_at, id);

CREATE TABLE case_openings (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  case_id           bigint NOT NULL REFERENCES cases (id),
  user_id           bigint NOT NULL REFERENCES users (id),
  -- The item the user received; with FLIP the better of roll_item_id and flip_item_id.
  item_id           bigint NOT NULL REFERENCES items (id),
  inventory_item_id bigint NOT NULL REFERENCES inventory_items (id),
  server_seed       text NOT NULL,
  server_seed_hash  text NOT NULL,
  client_seed       text NOT NULL,
  nonce             bigint NOT NULL,
  roll              integer NOT NULL CHECK (roll BETWEEN 1 AND 10000000),
  -- The item the roll selected and its block at the time, so verification holds after the case's
  -- items are edited.
  roll_item_id      bigint NOT NULL REFERENCES items (id),
  roll_range_start  integer NOT NULL,
  roll_range_end    integer NOT NULL,
  is_flip           boolean NOT NULL DEFAULT false,
  flip_server_seed  text,
  flip_client_seed  text,
  flip_nonce        bigint,
  flip_roll         integer CHECK (flip_roll BETWEEN 1 AND 10000000),
  flip_item_id      bigint REFERENCES items (id),
  flip_range_start  integer,
  flip_range_end    integer,
  price_paid_cents  bigint NOT NULL CHECK (price_paid_cents > 0),
  item_value_cents  bigint NOT NULL,
  profit            bigint NOT NULL,
  created_at        timestamptz NOT NULL,
  CHECK (is_flip = (flip_roll IS NOT NULL))
);

CREATE INDEX case_openings_user_idx ON case_openings (user_id, id DESC);
CREATE INDEX case_openings_user_case_idx ON case_openings (user_id, case_id);
CREATE INDEX case_openings_case_idx ON case_openings (case_id, user_id);

CREATE TABLE upgrades (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id            bigint NOT NULL REFERENCES users (id),
  inventory_item_id  bigint NOT NULL REFERENCES inventory_items (id),
  from_item_id       bigint NOT NULL REFERENCES items (id),
  to_item_id         bigint NOT NULL REFERENCES items (id),
  from_value_cents   bigint NOT NULL,
  to_value_cents     bigint NOT NULL,
  probability        double precision NOT NULL CHECK (probability BETWEEN 0.01 AND 0.9),
  threshold          integer NOT NULL,
  roll               integer NOT NULL CHECK (roll BETWEEN 0 AND 99999),
  success            boolean NOT NULL,
  server_seed        text NOT NULL,
  server_seed_hash   text NOT NULL,
  client_seed        text NOT NULL,
  nonce              bigint NOT NULL,
  created_at         timestamptz NOT NULL
);

CREATE INDEX upgrades_user_idx ON upgrades (user_id, id DESC);

-- Running totals per user, updated in each opening's transaction by atomic increments.
CREATE TABLE user_case_stats (
  user_id                bigint PRIMARY KEY REFERENCES users (id),
  total_opened           integer NOT NULL DEFAULT 0,
  total_spent_cents      bigint NOT NULL DEFAULT 0,
  total_won_cents        bigint NOT NULL DEFAULT 0,
  flip_count             integer NOT NULL DEFAULT 0,
  best_drop_opening_id   bigint REFERENCES case_openings (id),
  best_drop_value_cents  bigint NOT NULL DEFAULT 0
);

-- The live-drop feed (D11): what users won, newest first.
CREATE TABLE live_drops (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id     bigint NOT NULL REFERENCES users (id),
  item_id     bigint NOT NULL REFERENCES items (id),
  source      text NOT NULL CHECK (source IN ('CASE_OPEN', 'UPGRADE', 'BATTLE', 'RAFFLE')),
  case_name   text,
  created_at  timestamptz NOT NULL
);

CREATE INDEX live_drops_recent_idx ON live_drops (id DESC);
