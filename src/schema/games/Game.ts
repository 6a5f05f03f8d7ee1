/**
 * Shapes shared by openings, upgrades, inventory and live drops (docs/rules.md#openings,
 * docs/rules.md#inventory-and-selling, docs/rules.md#live-drops).
 */
import { Schema } from "effect"
import { message } from "../platform/Errors"
import { Rarity } from "./Catalog"
import { ItemId } from "../platform/Ids"

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

/**
 * `POST /cases/:id/open` (docs/rules.md#open-case-response): with FLIP, `flipRoll` and `flipItems`
 * [the main roll's item, the FLIP roll's item]; `item` is the more valuable of the two.
 */
export const OpeningResult = Schema.Struct({
  openingId: Schema.String,
  item: ItemView,
  roll: Schema.Number,
  serverSeedHash: Schema.String,
  /** The commitment that replaced the seed this opening used. */
  nextServerSeedHash: Schema.String,
  isFlip: Schema.Boolean,
  flipRoll: Schema.optional(Schema.Number),
  flipItems: Schema.optional(Schema.Array(ItemView))
})
export type OpeningResult = typeof OpeningResult.Type

export const LiveDrop = Schema.Struct({
  id: Schema.String,
  user: Schema.Struct({ id: Schema.String, username: Schema.String }),
  item: ItemView,
  source: DropSource,
  caseName: Schema.NullOr(Schema.String),
  createdAt: Schema.Date
})
export type LiveDrop = typeof LiveDrop.Type

/** `GET /cases/openings/:id/verify` and `GET /provably-fair/verify/:id`: an opening recomputed from its revealed seeds. */
export const OpeningVerification = Schema.Struct({
  openingId: Schema.String,
  serverSeed: Schema.String,
  serverSeedHash: Schema.String,
  clientSeed: Schema.String,
  nonce: Schema.Number,
  roll: Schema.Number,
  calculatedRoll: Schema.Number,
  /** The item the roll selected and its block of the case's ranges at that moment. */
  rollItemId: Schema.String,
  rangeStart: Schema.Number,
  rangeEnd: Schema.Number,
  /** The case's flip chance when the opening was rolled: FLIP when (t mod 10000000) < flipChance x 10000000. */
  flipChance: Schema.Number,
  isFlip: Schema.Boolean,
  flipServerSeed: Schema.optional(Schema.String),
  flipServerSeedHash: Schema.optional(Schema.String),
  flipClientSeed: Schema.optional(Schema.String),
  flipNonce: Schema.optional(Schema.Number),
  flipRoll: Schema.optional(Schema.NullOr(Schema.Number)),
  calculatedFlipRoll: Schema.optional(Schema.Number),
  flipItemId: Schema.optional(Schema.String),
  flipRangeStart: Schema.optional(Schema.Number),
  flipRangeEnd: Schema.optional(Schema.Number),
  isValid: Schema.Boolean
})

/**
 * A roll outside every range of a case; validation makes this impossible for a saved case
 * (docs/rules.md#case-validation).
 */
export class InvalidRoll extends Schema.TaggedError<InvalidRoll>()("InvalidRoll", {
  ...message("Invalid roll"),
  roll: Schema.Number
}) {}
