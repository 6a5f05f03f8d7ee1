/** A user's inventory (docs/rules.md#inventory-entries): entries of catalog items, and what became of them. */
import { Schema } from "effect"
import { message } from "../platform/Errors"
import { DropSource, ItemView } from "./Game"
import { idFromString } from "../platform/Ids"
import { PageParams } from "../platform/Pagination"

export const InventoryItemId = idFromString("InventoryItemId")
export type InventoryItemId = typeof InventoryItemId.Type

/** AVAILABLE, or gone: SOLD for its value, or UPGRADED (staked in an upgrade, won or lost). */
export const InventoryStatus = Schema.Literal("AVAILABLE", "SOLD", "UPGRADED")
export type InventoryStatus = typeof InventoryStatus.Type

/** An inventory entry (docs/rules.md#inventory-entries); `item.valueCents` is the item's current catalog value. */
export const InventoryEntry = Schema.Struct({
  id: InventoryItemId,
  item: ItemView,
  status: InventoryStatus,
  source: DropSource,
  acquiredAt: Schema.Date
})
export type InventoryEntry = typeof InventoryEntry.Type

/** `GET /inventory`: `totalValueCents` sums the AVAILABLE entries, whatever the status filter. */
export const InventoryPage = Schema.Struct({
  items: Schema.Array(InventoryEntry),
  total: Schema.Int,
  page: Schema.Int,
  totalValueCents: Schema.BigIntFromNumber
})
export type InventoryPage = typeof InventoryPage.Type

/** `POST /inventory/:id/sell`: `soldItemId` is the entry id. */
export const SaleResult = Schema.Struct({
  soldItemId: InventoryItemId,
  creditedCents: Schema.BigIntFromNumber,
  balanceCents: Schema.BigIntFromNumber
})
export type SaleResult = typeof SaleResult.Type

/** `POST /inventory/sell-all`. */
export const SellAllResult = Schema.Struct({
  soldCount: Schema.Int,
  creditedCents: Schema.BigIntFromNumber,
  balanceCents: Schema.BigIntFromNumber
})
export type SellAllResult = typeof SellAllResult.Type

/**
 * The user has no AVAILABLE inventory entry that fits (docs/rules.md#upgrade-stake). Selling an entry that is
 * absent, someone else's, or no longer AVAILABLE uses it too, with the message `Item not available`
 * (docs/rules.md#selling).
 */
export class ItemNotAvailable extends Schema.TaggedError<ItemNotAvailable>()(
  "ItemNotAvailable",
  message("Item not available for upgrade")
) {}

/** `GET /inventory`: a page of entries; `status` absent: entries of every status. */
export const InventoryQuery = Schema.Struct({
  ...PageParams,
  status: Schema.optional(
    InventoryStatus.annotations({ message: () => `must be one of ${InventoryStatus.literals.join(", ")}` })
  )
}).annotations({ parseOptions: { errors: "all" } })
export type InventoryQuery = typeof InventoryQuery.Type
