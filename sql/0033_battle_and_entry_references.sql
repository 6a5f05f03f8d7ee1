-- A battle's seats, rounds, rolls and settlements name their battle, and the records of plays (openings, upgrades,
-- battle settlements, raffles) name their inventory entries, without a foreign key. A key's check runs a query and
-- locks the row it names (FOR KEY SHARE: a lock-only version of the row, in the WAL, when it is not locked yet) for
-- every row inserted: ~11 per 2-player battle step (the creation's round and seat, the filling join's seat, two rolls,
-- the settlement records and their entries), one per opening (docs/decisions.md "Battle and entry references without
-- foreign keys").
--
-- What the keys guaranteed still holds: a battle or an inventory entry is never deleted, its id never changes and its
-- table is not truncated (refused below, with the keys' error code: a battle ends by its status, an entry leaves its
-- owner by its status), and every such row is written with the row it names present: by the statement that inserts it
-- (a battle's creation, an opening's, a settlement's or a raffle draw's entry), or after that row is locked in the same
-- statement or transaction (a join, the battle's run, an upgrade's stake).

ALTER TABLE battle_cases DROP CONSTRAINT battle_cases_battle_id_fkey;
ALTER TABLE battle_players DROP CONSTRAINT battle_players_battle_id_fkey;
ALTER TABLE battle_rolls DROP CONSTRAINT battle_rolls_battle_id_fkey;
ALTER TABLE battle_settlements DROP CONSTRAINT battle_settlements_battle_id_fkey;
ALTER TABLE case_openings DROP CONSTRAINT case_openings_inventory_item_id_fkey;
ALTER TABLE upgrades DROP CONSTRAINT upgrades_inventory_item_id_fkey;
ALTER TABLE battle_settlements DROP CONSTRAINT battle_settlements_inventory_item_id_fkey;
ALTER TABLE raffles DROP CONSTRAINT raffles_inventory_item_id_fkey;

CREATE FUNCTION rows_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% are not deleted, renumbered or truncated: the records of plays name them', TG_TABLE_NAME
    USING ERRCODE = 'foreign_key_violation';
END
$$;

-- Row by row, as a key's check was: a statement trigger would not fire for a delete through a parent table.
CREATE TRIGGER battles_not_deleted BEFORE DELETE ON battles
  FOR EACH ROW EXECUTE FUNCTION rows_kept();
CREATE TRIGGER battles_id_kept BEFORE UPDATE OF id ON battles
  FOR EACH ROW WHEN (OLD.id <> NEW.id) EXECUTE FUNCTION rows_kept();
CREATE TRIGGER battles_not_truncated BEFORE TRUNCATE ON battles
  FOR EACH STATEMENT EXECUTE FUNCTION rows_kept();
CREATE TRIGGER inventory_items_not_deleted BEFORE DELETE ON inventory_items
  FOR EACH ROW EXECUTE FUNCTION rows_kept();
CREATE TRIGGER inventory_items_id_kept BEFORE UPDATE OF id ON inventory_items
  FOR EACH ROW WHEN (OLD.id <> NEW.id) EXECUTE FUNCTION rows_kept();
CREATE TRIGGER inventory_items_not_truncated BEFORE TRUNCATE ON inventory_items
  FOR EACH STATEMENT EXECUTE FUNCTION rows_kept();
