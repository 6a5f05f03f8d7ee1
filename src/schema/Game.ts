/** Shapes shared by openings, upgrades, inventory and live drops (SPEC CaseOpening, D7, D8, D11). */
import { Schema } from "effect"
import { Rarity } from "./Catalog"
import { idFromString, ItemId } from "./Ids"

export const OpeningId = idFromString("OpeningId")
export type OpeningId = typeof OpeningId.Type

export const DropSource = Schema.Literal("CASE_OPEN", "UPGRADE", "BATTLE", "RAFFLE")
export type DropSource = typeof DropSource.Type

/** An item as shown with a game result. */
export const ItemView = Schema.Struct({
  id: ItemId,
  name: Schema.String,
  rarity: Rarity,
  valueCents: Schema.BigIntFromNumber,
  imageUrl: Schema.String
})
export type ItemView = typeof ItemView.Type

export const LiveDrop = Schema.Struct({
  id: Schema.String,
  user: Schema.Struct({ id: Schema.String, username: Schema.String }),
  item: ItemView,
  source: DropSource,
  caseName: Schema.NullOr(Schema.String),
  createdAt: Schema.Date
})
export type LiveDrop = typeof LiveDrop.Type
