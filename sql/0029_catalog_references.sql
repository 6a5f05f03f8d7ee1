-- The records of plays name catalog rows (items, cases) without a foreign key: openings, upgrades, inventory
-- entries, live drops, battle rounds, rolls and settlements. A foreign key's check locks the row it names
-- (FOR KEY SHARE) in every transaction that inserts such a record, and the catalog's few rows are named by nearly
-- every play at once: concurrent key-share locks of one row make a MultiXact each time (about one per opening at
-- 32 concurrent players, none without these keys), whose members PostgreSQL must then freeze and recycle, and the
-- checks were ~8 % of an opening's database CPU (docs/decisions.md "Catalog references without foreign keys").
--
-- What the keys guaranteed still holds: an id a play writes comes from the catalog as the service read it, and the
-- write takes effect only while the catalog's version is the one read (sql/0018), so the row existed then; and a
-- catalog row that a record names, or that a battle not yet rolled may roll, cannot be deleted (the triggers below
-- refuse it as the keys did, with the same error code). The application deletes no catalog row: an item or a case leaves the catalog by its state.

ALTER TABLE case_openings
  DROP CONSTRAINT case_openings_case_id_fkey,
  DROP CONSTRAINT case_openings_item_id_fkey,
  DROP CONSTRAINT case_openings_roll_item_id_fkey,
  DROP CONSTRAINT case_openings_flip_item_id_fkey;
ALTER TABLE inventory_items DROP CONSTRAINT inventory_items_item_id_fkey;
ALTER TABLE live_drops DROP CONSTRAINT live_drops_item_id_fkey;
ALTER TABLE upgrades
  DROP CONSTRAINT upgrades_from_item_id_fkey,
  DROP CONSTRAINT upgrades_to_item_id_fkey;
ALTER TABLE battle_cases DROP CONSTRAINT battle_cases_case_id_fkey;
ALTER TABLE battle_rolls
  DROP CONSTRAINT battle_rolls_case_id_fkey,
  DROP CONSTRAINT battle_rolls_item_id_fkey;
ALTER TABLE battle_settlements DROP CONSTRAINT battle_settlements_item_id_fkey;

CREATE FUNCTION deleted_items_unnamed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  named bigint;
BEGIN
  SELECT g.id INTO named FROM gone g
  WHERE EXISTS (SELECT 1 FROM case_openings o WHERE g.id IN (o.item_id, o.roll_item_id, o.flip_item_id))
     OR EXISTS (SELECT 1 FROM inventory_items e WHERE e.item_id = g.id)
     OR EXISTS (SELECT 1 FROM live_drops d WHERE d.item_id = g.id)
     OR EXISTS (SELECT 1 FROM upgrades u WHERE g.id IN (u.from_item_id, u.to_item_id))
     OR EXISTS (SELECT 1 FROM battle_rolls r WHERE r.item_id = g.id)
     OR EXISTS (SELECT 1 FROM battle_settlements s WHERE s.item_id = g.id)
     -- A battle not yet rolled rolls the items its rounds kept when it was created (`battle_cases.items`).
     OR EXISTS (SELECT 1 FROM battles b JOIN battle_cases c ON c.battle_id = b.id
                WHERE b.status = 'WAITING' AND c.items @> jsonb_build_array(jsonb_build_object('itemId', g.id::text)))
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'item % is named by the records of plays and cannot be deleted', named
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END
$$;

CREATE FUNCTION deleted_cases_unnamed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  named bigint;
BEGIN
  SELECT g.id INTO named FROM gone g
  WHERE EXISTS (SELECT 1 FROM case_openings o WHERE o.case_id = g.id)
     OR EXISTS (SELECT 1 FROM battle_cases b WHERE b.case_id = g.id)
     OR EXISTS (SELECT 1 FROM battle_rolls r WHERE r.case_id = g.id)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'case % is named by the records of plays and cannot be deleted', named
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER items_named_kept AFTER DELETE ON items
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION deleted_items_unnamed();
CREATE TRIGGER cases_named_kept AFTER DELETE ON cases
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION deleted_cases_unnamed();
