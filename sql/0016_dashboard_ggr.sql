-- The dashboard's game and fee figures (D21): gross gaming revenue per game, item sales and deposit
-- fees, per UTC day, in the chart's cache of settled days.

-- The value of a raffle's prize when it was drawn (items can be revalued later), for its GGR.
ALTER TABLE raffles ADD COLUMN prize_value_cents bigint;
UPDATE raffles r SET prize_value_cents = i.value_cents FROM items i WHERE i.id = r.item_id AND r.status = 'DRAWN';
ALTER TABLE raffles ADD CONSTRAINT raffles_prize_value_when_drawn CHECK ((status = 'DRAWN') = (prize_value_cents IS NOT NULL));

CREATE INDEX raffles_drawn_idx ON raffles (closed_at) WHERE status = 'DRAWN';
CREATE INDEX battle_settlements_created_idx ON battle_settlements (created_at);

-- Cached days lack the new figures: they are computed again on first need.
DELETE FROM dashboard_days;
ALTER TABLE dashboard_days
  ADD COLUMN ggr_openings_cents  bigint NOT NULL,
  ADD COLUMN ggr_upgrades_cents  bigint NOT NULL,
  ADD COLUMN ggr_battles_cents   bigint NOT NULL,
  ADD COLUMN ggr_raffles_cents   bigint NOT NULL,
  ADD COLUMN item_sales_cents    bigint NOT NULL,
  ADD COLUMN fees_cents          bigint NOT NULL;
