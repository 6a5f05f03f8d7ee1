-- The records of plays name catalog rows (items, cases) without a foreign key: openings, upgrades, inventory
-- entries, live drops, battle rounds, rolls and settlements. A foreign key's check locks the row it names
-- (FOR KEY SHARE) in every transaction that inserts such a record, and the catalog's few rows are named by nearly
-- every play at once: concurrent key-share locks of one row make a MultiXact each time (about one per opening at
-- 32 concurrent players, none without these keys), whose members PostgreSQL must then freeze and recycle, and the
-- checks were ~8 % of an opening's database CPU (docs/decisions.md "Catalog references without foreign keys").
--
-- What the keys guaranteed still holds. An id a play writes comes from the catalog as the service read it: the
-- write takes effect only while the catalog's version is the one read (sql/0018), or, on the rare ways that have no
-- version (an upgrade's careful way, a battle settled from the pool, an administrator's drop), it locks the items it
-- read as a key's check would. A catalog row that a record names, or that a battle not yet rolled may roll, cannot be
-- deleted: the triggers below refuse it with the keys' error code, after waiting for the plays being written (the
-- record tables locked against writes until the delete commits; the plays after it see the catalog's new version).
-- Ids do not change and the tables are not truncated (refused below, as the keys refused them). The application
-- deletes no catalog row: an item or a case leaves the catalog by its state.

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

-- A delete's check sees every record committed before it: its transaction reads committed rows (each statement of
-- this function takes a new snapshot), and the plays being written are waited for (the SHARE locks).
CREATE FUNCTION deleted_catalog_rows_unnamed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  named bigint;
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'delete catalog rows in a READ COMMITTED transaction: a snapshot taken earlier misses plays since'
      USING ERRCODE = 'feature_not_supported';
  END IF;
  LOCK TABLE case_openings, inventory_items, live_drops, upgrades, battle_cases, battle_rolls, battle_settlements
    IN SHARE MODE;
  IF TG_TABLE_NAME = 'items' THEN
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
  ELSE
    SELECT g.id INTO named FROM gone g
    WHERE EXISTS (SELECT 1 FROM case_openings o WHERE o.case_id = g.id)
       OR EXISTS (SELECT 1 FROM battle_cases b WHERE b.case_id = g.id)
       OR EXISTS (SELECT 1 FROM battle_rolls r WHERE r.case_id = g.id)
    LIMIT 1;
  END IF;
  IF named IS NOT NULL THEN
    RAISE EXCEPTION '% % is named by the records of plays and cannot be deleted', TG_TABLE_NAME, named
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER items_named_kept AFTER DELETE ON items
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION deleted_catalog_rows_unnamed();
CREATE TRIGGER cases_named_kept AFTER DELETE ON cases
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION deleted_catalog_rows_unnamed();

-- `SET id = DEFAULT` is the one change of an identity column PostgreSQL allows; the keys refused it, and TRUNCATE.
CREATE FUNCTION catalog_ids_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% of the catalog: ids do not change and the table is not truncated (records of plays name them)',
    TG_TABLE_NAME USING ERRCODE = 'foreign_key_violation';
END
$$;

CREATE TRIGGER items_id_kept BEFORE UPDATE OF id ON items
  FOR EACH ROW WHEN (OLD.id <> NEW.id) EXECUTE FUNCTION catalog_ids_kept();
CREATE TRIGGER cases_id_kept BEFORE UPDATE OF id ON cases
  FOR EACH ROW WHEN (OLD.id <> NEW.id) EXECUTE FUNCTION catalog_ids_kept();
CREATE TRIGGER items_not_truncated BEFORE TRUNCATE ON items
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_ids_kept();
CREATE TRIGGER cases_not_truncated BEFORE TRUNCATE ON cases
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_ids_kept();
