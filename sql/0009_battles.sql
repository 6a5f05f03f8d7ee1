-- Case battles (D13; SPEC "BattleSettlement", "Battle settlement"). A battle is WAITING while slots are
-- open; the join that fills the last slot rolls every round and settles in its own transaction, so a
-- battle is seen WAITING, FINISHED or CANCELLED (RUNNING exists only inside that transaction).

CREATE TABLE battles (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  creator_id         bigint NOT NULL REFERENCES users (id),
  mode               text NOT NULL CHECK (mode IN ('NORMAL', 'CRAZY', 'TEAM')),
  max_players        integer NOT NULL CHECK (max_players BETWEEN 2 AND 4),
  status             text NOT NULL DEFAULT 'WAITING' CHECK (status IN ('WAITING', 'RUNNING', 'FINISHED', 'CANCELLED')),
  entry_price_cents  bigint NOT NULL CHECK (entry_price_cents > 0),
  -- Slots taken; the guard of concurrent joins (a conditional increment).
  player_count       integer NOT NULL CHECK (player_count BETWEEN 0 AND max_players),
  -- Set when settled: SPEC settlement step 2, and how many won.
  fair_share_cents   bigint,
  winners_count      integer,
  created_at         timestamptz NOT NULL,
  finished_at        timestamptz,
  CHECK ((status = 'FINISHED') = (fair_share_cents IS NOT NULL)),
  CHECK (mode <> 'TEAM' OR max_players = 4),
  CHECK ((status IN ('FINISHED', 'CANCELLED')) = (finished_at IS NOT NULL))
);

CREATE INDEX battles_status_idx ON battles (status, id DESC);

-- The rounds: one case each, priced when the battle was created.
CREATE TABLE battle_cases (
  battle_id     bigint NOT NULL REFERENCES battles (id),
  round_number  integer NOT NULL CHECK (round_number BETWEEN 1 AND 25),
  case_id       bigint NOT NULL REFERENCES cases (id),
  price_cents   bigint NOT NULL CHECK (price_cents > 0),
  PRIMARY KEY (battle_id, round_number)
);

CREATE TABLE battle_players (
  battle_id          bigint NOT NULL REFERENCES battles (id),
  slot               integer NOT NULL CHECK (slot BETWEEN 1 AND 4),
  user_id            bigint NOT NULL REFERENCES users (id),
  -- TEAM: slots 1-2 are team 1, slots 3-4 team 2; NULL in the other modes.
  team               integer CHECK (team IN (1, 2)),
  total_value_cents  bigint NOT NULL DEFAULT 0,
  is_winner          boolean NOT NULL DEFAULT false,
  joined_at          timestamptz NOT NULL,
  PRIMARY KEY (battle_id, slot),
  UNIQUE (battle_id, user_id)
);

CREATE INDEX battle_players_user_idx ON battle_players (user_id);

-- Every player's roll of every round (D5: fresh server seed, the player's client seed and nonce).
CREATE TABLE battle_rolls (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  battle_id         bigint NOT NULL REFERENCES battles (id),
  round_number      integer NOT NULL,
  user_id           bigint NOT NULL REFERENCES users (id),
  case_id           bigint NOT NULL REFERENCES cases (id),
  item_id           bigint NOT NULL REFERENCES items (id),
  value_cents       bigint NOT NULL,
  server_seed       text NOT NULL,
  server_seed_hash  text NOT NULL,
  client_seed       text NOT NULL,
  nonce             integer NOT NULL,
  roll              integer NOT NULL CHECK (roll BETWEEN 1 AND 10000000),
  range_start       integer NOT NULL,
  range_end         integer NOT NULL,
  created_at        timestamptz NOT NULL,
  UNIQUE (battle_id, round_number, user_id)
);

CREATE TABLE battle_settlements (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  battle_id          bigint NOT NULL REFERENCES battles (id),
  user_id            bigint REFERENCES users (id),
  item_id            bigint NOT NULL REFERENCES items (id),
  type               text NOT NULL CHECK (type IN ('DROPPED', 'REMOVED_TO_POOL', 'ADDED_FROM_POOL')),
  value_cents        bigint NOT NULL,
  round_number       integer,
  inventory_item_id  bigint REFERENCES inventory_items (id),
  created_at         timestamptz NOT NULL,
  CHECK ((type = 'REMOVED_TO_POOL') = (user_id IS NULL)),
  CHECK ((type = 'ADDED_FROM_POOL') = (round_number IS NULL)),
  CHECK ((type = 'REMOVED_TO_POOL') = (inventory_item_id IS NULL))
);

CREATE INDEX battle_settlements_battle_idx ON battle_settlements (battle_id, id);
