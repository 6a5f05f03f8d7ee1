-- The ledger and the records of plays name their players without a foreign key: movements (`transactions`),
-- openings, upgrades, inventory entries, live drops, battles (their creators), seats, rolls and settlements, and raffle
-- tickets. A key's check runs a query and locks the row it names (FOR KEY SHARE) for every row a play inserts: ~15 per
-- 2-player battle, ~10 % of its PostgreSQL CPU (docs/decisions.md "Player references without foreign keys"). The
-- joiner who fills a battle also locked the other players' rows that way, each a write of its own (a lock-only
-- version of the row, in the WAL), or a MultiXact when that player was playing at the same moment.
--
-- What the keys guaranteed still holds: a user row is never deleted, its id never changes and the table is not
-- truncated (refused below, with the keys' error code), and every such record takes its player from a row that
-- exists when it is written: the signed-in user's, a movement's `UPDATE users ... RETURNING` (the ledger's rows are
-- made from the row they moved), a seat or a ticket. The keys of the other tables to `users` stay: identities,
-- fairness seeds, limits, statistics, activity days, deposits, withdrawals, notifications, idempotency keys and raffle
-- winners are written rarely or updated in place; audit entries are written by many paths, some naming a user an
-- administrator chose.

ALTER TABLE transactions DROP CONSTRAINT transactions_user_id_fkey;
ALTER TABLE case_openings DROP CONSTRAINT case_openings_user_id_fkey;
ALTER TABLE upgrades DROP CONSTRAINT upgrades_user_id_fkey;
ALTER TABLE inventory_items DROP CONSTRAINT inventory_items_user_id_fkey;
ALTER TABLE live_drops DROP CONSTRAINT live_drops_user_id_fkey;
ALTER TABLE battles DROP CONSTRAINT battles_creator_id_fkey;
ALTER TABLE battle_players DROP CONSTRAINT battle_players_user_id_fkey;
ALTER TABLE battle_rolls DROP CONSTRAINT battle_rolls_user_id_fkey;
ALTER TABLE battle_settlements DROP CONSTRAINT battle_settlements_user_id_fkey;
ALTER TABLE raffle_tickets DROP CONSTRAINT raffle_tickets_user_id_fkey;

-- A player leaves by state (a ban, a self-exclusion), never by a delete: the ledger must keep adding up to the balance.
CREATE FUNCTION users_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'users are not deleted, renumbered or truncated: the ledger and the records of plays name them'
    USING ERRCODE = 'foreign_key_violation';
END
$$;

-- Row by row, as a key's check was: a statement trigger would not fire for a delete through a parent table.
CREATE TRIGGER users_not_deleted BEFORE DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION users_kept();
CREATE TRIGGER users_id_kept BEFORE UPDATE OF id ON users
  FOR EACH ROW WHEN (OLD.id <> NEW.id) EXECUTE FUNCTION users_kept();
CREATE TRIGGER users_not_truncated BEFORE TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION users_kept();
