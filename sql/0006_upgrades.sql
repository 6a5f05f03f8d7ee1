-- Upgrades and inventory sales (D4, D8): the database's own guarantees behind the conditional updates.

-- An inventory entry is sold at most once: at most one ITEM_SELL movement names it.
CREATE UNIQUE INDEX transactions_item_sell_once_idx ON transactions (reference_id)
  WHERE type = 'ITEM_SELL' AND reference_type = 'INVENTORY_ITEM';

-- An inventory entry is staked in at most one upgrade.
CREATE UNIQUE INDEX upgrades_inventory_item_once_idx ON upgrades (inventory_item_id);
