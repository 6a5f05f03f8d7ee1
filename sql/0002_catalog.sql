-- The catalog: items, cases and the roll ranges of each case's items (SPEC Item, Case, CaseItem; D6).

CREATE TABLE items (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name           text NOT NULL,
  rarity         text NOT NULL CHECK (rarity IN (
                   'CONSUMER', 'INDUSTRIAL', 'MIL_SPEC', 'RESTRICTED', 'CLASSIFIED', 'COVERT', 'EXTRAORDINARY')),
  value_cents    bigint NOT NULL CHECK (value_cents > 0),
  image_url      text NOT NULL,
  is_upgradable  boolean NOT NULL DEFAULT true,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE cases (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name         text NOT NULL,
  slug         text NOT NULL UNIQUE,
  description  text,
  image_url    text NOT NULL,
  price_cents  bigint NOT NULL CHECK (price_cents > 0),
  category     text NOT NULL CHECK (category IN ('CHEAP', 'MEDIUM', 'EXPENSIVE', 'PREMIUM', 'EVENT')),
  is_active    boolean NOT NULL DEFAULT true,
  is_featured  boolean NOT NULL DEFAULT false,
  house_edge   double precision NOT NULL DEFAULT 0.10 CHECK (house_edge >= 0 AND house_edge < 1),
  flip_chance  double precision NOT NULL DEFAULT 0 CHECK (flip_chance >= 0 AND flip_chance <= 0.5),
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX cases_active_category_idx ON cases (is_active, category);

-- drop_chance is exact decimal (at most 7 places, D6), never binary floating point.
CREATE TABLE case_items (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  case_id      bigint NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
  item_id      bigint NOT NULL REFERENCES items (id),
  drop_chance  numeric(8, 7) NOT NULL CHECK (drop_chance >= 0.0001 AND drop_chance <= 1),
  range_start  integer NOT NULL CHECK (range_start BETWEEN 1 AND 10000000),
  range_end    integer NOT NULL CHECK (range_end BETWEEN 1 AND 10000000),
  CHECK (range_start <= range_end),
  UNIQUE (case_id, item_id)
);

CREATE INDEX case_items_case_range_idx ON case_items (case_id, range_start);
CREATE INDEX case_items_item_idx ON case_items (item_id);
