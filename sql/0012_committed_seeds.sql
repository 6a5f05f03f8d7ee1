-- Committed server seeds (docs/fairness.md): every server seed exists, and its hash is shown, before
-- the roll that uses it. Rows written before this migration keep the seeds they were rolled with, so
-- past openings, upgrades, battles and raffle draws verify as they were recorded.
--
-- Seeds made here come from PostgreSQL's strong random source (gen_random_uuid: 122 random bits
-- each; two per seed, hashed to 32 bytes); the service makes every later one from 32 OS-random bytes.

-- Each user's committed next server seed, beside the client seed and nonce it will be rolled with.
ALTER TABLE fairness_seeds
  ADD COLUMN next_server_seed text,
  ADD COLUMN next_server_seed_hash text;

INSERT INTO fairness_seeds (user_id, client_seed, nonce, updated_at)
SELECT id, replace(gen_random_uuid()::text, '-', ''), 0, now() FROM users
WHERE NOT EXISTS (SELECT 1 FROM fairness_seeds f WHERE f.user_id = users.id);

UPDATE fairness_seeds SET next_server_seed =
  encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex');
UPDATE fairness_seeds SET next_server_seed_hash = encode(sha256(convert_to(next_server_seed, 'UTF8')), 'hex');

ALTER TABLE fairness_seeds
  ALTER COLUMN next_server_seed SET NOT NULL,
  ALTER COLUMN next_server_seed_hash SET NOT NULL;

-- A battle's own seed, committed at creation and revealed once it is FINISHED. Battles finished
-- before this migration rolled with a seed per roll (kept in battle_rolls) and have none here;
-- battles still waiting get theirs now, before any of their rolls.
ALTER TABLE battles
  ADD COLUMN server_seed text,
  ADD COLUMN server_seed_hash text;

UPDATE battles SET server_seed =
  encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex')
WHERE status = 'WAITING';
UPDATE battles SET server_seed_hash = encode(sha256(convert_to(server_seed, 'UTF8')), 'hex')
WHERE server_seed IS NOT NULL;

ALTER TABLE battles ADD CONSTRAINT battles_seed_committed
  CHECK (status NOT IN ('WAITING', 'RUNNING') OR server_seed IS NOT NULL);

-- Raffles: each purchase records the buyer's client seed, and the draw mixes the digest of all
-- tickets' client seeds into the HMAC, so the winning number is unknown until the last ticket sells.
-- Purchases made before this migration get their buyer's current client seed (raffles still open
-- draw with the new formula); draws made before it have no digest and used the formula without it.
ALTER TABLE raffle_tickets ADD COLUMN client_seed text;
UPDATE raffle_tickets t SET client_seed = COALESCE(
  (SELECT f.client_seed FROM fairness_seeds f WHERE f.user_id = t.user_id), '');
ALTER TABLE raffle_tickets ALTER COLUMN client_seed SET NOT NULL;

ALTER TABLE raffles ADD COLUMN ticket_seeds_digest text;

-- The flip chance an opening was rolled with, so that its FLIP check still verifies after an
-- administrator changes the case's flip chance. Older openings get the case's current value, the
-- best record there is of it.
ALTER TABLE case_openings ADD COLUMN flip_chance double precision;
UPDATE case_openings o SET flip_chance = c.flip_chance FROM cases c WHERE c.id = o.case_id;
ALTER TABLE case_openings ALTER COLUMN flip_chance SET NOT NULL;

-- The values of both FLIP items at the time of the opening, so that the better-of-two award still
-- verifies after item values change. Older openings: the awarded item's recorded value, the other
-- item's current one.
ALTER TABLE case_openings ADD COLUMN roll_item_value_cents bigint, ADD COLUMN flip_item_value_cents bigint;
UPDATE case_openings o SET
  roll_item_value_cents = CASE WHEN o.item_id = o.roll_item_id THEN o.item_value_cents
                               ELSE (SELECT value_cents FROM items WHERE id = o.roll_item_id) END,
  flip_item_value_cents = CASE WHEN o.flip_item_id IS NULL THEN NULL
                               WHEN o.item_id = o.flip_item_id THEN o.item_value_cents
                               ELSE (SELECT value_cents FROM items WHERE id = o.flip_item_id) END;
ALTER TABLE case_openings ALTER COLUMN roll_item_value_cents SET NOT NULL;
ALTER TABLE case_openings ADD CONSTRAINT case_openings_flip_value CHECK (is_flip = (flip_item_value_cents IS NOT NULL));

-- Each round of a battle keeps its case's items with their ranges and values as they were when the
-- battle was created (in roll order), so editing a case cannot change a battle already paid for.
-- Battles still waiting take their cases as they are now; finished ones rolled long ago.
ALTER TABLE battle_cases ADD COLUMN items jsonb;
UPDATE battle_cases bc SET items = (
  SELECT jsonb_agg(jsonb_build_object('itemId', ci.item_id::text, 'rangeStart', ci.range_start,
                                      'rangeEnd', ci.range_end, 'valueCents', i.value_cents::text)
                   ORDER BY ci.range_start)
  FROM case_items ci JOIN items i ON i.id = ci.item_id WHERE ci.case_id = bc.case_id)
FROM battles b WHERE b.id = bc.battle_id AND b.status = 'WAITING';

-- Which openings rolled a committed seed: their FLIP must reuse that seed (older ones recorded a
-- FLIP seed of their own). Existing rows get false, every later one true.
ALTER TABLE case_openings ADD COLUMN committed_seed boolean NOT NULL DEFAULT false;
ALTER TABLE case_openings ALTER COLUMN committed_seed SET DEFAULT true;
