-- When the money stake an inventory entry comes from was made, where that is not when the entry was acquired
-- (NULL: staked when acquired, as a case opening's item). A sale gives room back under the loss limits only in the
-- windows of that stake (docs/responsible-gaming.md#loss): an upgrade's entry keeps its staked entry's, a battle's
-- prize its receiver's entry payment, a raffle's prize its winning ticket's purchase. With `acquired_at` alone, one
-- upgrade made last month's jackpot "won today", and its sale opened today's limit by its whole value (found by the
-- attacker's review).
ALTER TABLE inventory_items ADD COLUMN staked_at timestamptz;

-- The entries acquired before: a battle's prizes from their receivers' seats, a raffle's prize from its winning block.
UPDATE inventory_items ii SET staked_at = bp.joined_at
FROM battle_settlements s JOIN battle_players bp ON bp.battle_id = s.battle_id AND bp.user_id = s.user_id
WHERE ii.source = 'BATTLE' AND s.inventory_item_id = ii.id;

UPDATE inventory_items ii SET staked_at = t.created_at
FROM raffles r JOIN raffle_tickets t ON t.raffle_id = r.id AND t.first_ticket <= r.winning_ticket AND t.last_ticket >= r.winning_ticket
WHERE ii.source = 'RAFFLE' AND r.inventory_item_id = ii.id;

-- An upgrade's entry from the entry it staked, through chains of upgrades: its upgrade is the successful one of the
-- same player, target item and moment (written by the same statement).
WITH RECURSIVE link AS (
  SELECT e.id AS entry_id, u.inventory_item_id AS staked_id
  FROM inventory_items e
  JOIN upgrades u ON u.user_id = e.user_id AND u.to_item_id = e.item_id AND u.created_at = e.acquired_at AND u.success
  WHERE e.source = 'UPGRADE'
), chain AS (
  SELECT entry_id, staked_id FROM link
  UNION ALL
  SELECT c.entry_id, l.staked_id FROM chain c JOIN link l ON l.entry_id = c.staked_id
)
UPDATE inventory_items ii SET staked_at = COALESCE(origin.staked_at, origin.acquired_at)
FROM chain c JOIN inventory_items origin ON origin.id = c.staked_id
WHERE ii.id = c.entry_id AND NOT EXISTS (SELECT 1 FROM link l WHERE l.entry_id = c.staked_id);

-- The current windows' losses again, with sales counted from their entries' stakes (as sql/0024 computed them).
UPDATE users u SET
  loss_day = t.day, loss_day_cents = t.day_loss,
  loss_week = t.week, loss_week_cents = t.week_loss,
  loss_month = t.month, loss_month_cents = t.month_loss
FROM (
  SELECT user_id, w.day, w.week, w.month,
         COALESCE(-SUM(amount_cents) FILTER (WHERE local::date = w.day AND staked::date = w.day), 0) AS day_loss,
         COALESCE(-SUM(amount_cents) FILTER (WHERE date_trunc('week', local)::date = w.week
                                               AND date_trunc('week', staked)::date = w.week), 0) AS week_loss,
         COALESCE(-SUM(amount_cents) FILTER (WHERE date_trunc('month', local)::date = w.month
                                               AND date_trunc('month', staked)::date = w.month), 0) AS month_loss
  FROM (SELECT m.user_id, m.amount_cents, m.created_at AT TIME ZONE 'America/Sao_Paulo' AS local,
               CASE m.type
                 WHEN 'ITEM_SELL' THEN (SELECT COALESCE(ii.staked_at, ii.acquired_at) FROM inventory_items ii
                                        WHERE ii.id = m.reference_id)
                 WHEN 'BATTLE_REFUND' THEN (SELECT e.created_at FROM transactions e
                                           WHERE e.user_id = m.user_id AND e.type = 'BATTLE_ENTRY'
                                             AND e.reference_type = 'BATTLE' AND e.reference_id = m.reference_id
                                             AND e.id < m.id ORDER BY e.id DESC LIMIT 1)
                 ELSE m.created_at
               END AT TIME ZONE 'America/Sao_Paulo' AS staked
        FROM transactions m
        WHERE m.type IN ('CASE_OPEN', 'BATTLE_ENTRY', 'RAFFLE_TICKET', 'ITEM_SELL', 'BATTLE_REFUND')
          AND m.created_at >= now() - interval '32 days') g
  CROSS JOIN (SELECT (now() AT TIME ZONE 'America/Sao_Paulo')::date AS day,
                     date_trunc('week', now() AT TIME ZONE 'America/Sao_Paulo')::date AS week,
                     date_trunc('month', now() AT TIME ZONE 'America/Sao_Paulo')::date AS month) w
  GROUP BY user_id, w.day, w.week, w.month
) t
WHERE t.user_id = u.id;
