-- The live-drop feed is read newest first by id (`ORDER BY id DESC`), which the primary key's index serves by
-- scanning it backwards: live_drops_recent_idx (id DESC) was a second index of the same column, kept up to date by
-- every opening, upgrade, battle and raffle that records a drop, and never needed by a read.

DROP INDEX live_drops_recent_idx;
