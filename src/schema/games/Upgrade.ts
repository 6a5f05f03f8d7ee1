/** Upgrades (docs/rules.md#upgrades): the shapes of the wire. */
import { Schema } from "effect"
import { message } from "../platform/Errors"
import { idFromString, ItemId } from "../platform/Ids"
import { RollProof } from "./Fairness"
import { InventoryItemId } from "./Inventory"

export const UpgradeId = idFromString("UpgradeId")
export type UpgradeId = typeof UpgradeId.Type

const PricedItem = Schema.Struct({ id: ItemId, name: Schema.String, valueCents: Schema.BigIntFromNumber })
const NamedItem = Schema.Struct({ id: ItemId, name: Schema.String })

/** `GET /upgrades/probability`: `probabilityPercent` is the probability in percent with 2 decimals, e.g. "45.00". */
export const UpgradeProbability = Schema.Struct({
  fromItem: PricedItem,
  toItem: PricedItem,
  probability: Schema.Number,
  probabilityPercent: Schema.String
})
export type UpgradeProbability = typeof UpgradeProbability.Type

/** `POST /upgrades`: `toItem` is null on failure. */
export const UpgradeResult = Schema.Struct({
  upgradeId: UpgradeId,
  success: Schema.Boolean,
  probability: Schema.Number,
  roll: Schema.Int,
  serverSeedHash: Schema.String,
  /** The commitment that replaced the seed this upgrade used. */
  nextServerSeedHash: Schema.String,
  fromItem: NamedItem,
  toItem: Schema.NullOr(NamedItem)
})
export type UpgradeResult = typeof UpgradeResult.Type

/** `GET /upgrades/:id/verify` (docs/rules.md#verification): everything needed to recompute the roll by hand. */
export const UpgradeVerification = Schema.Struct({
  upgradeId: UpgradeId,
  ...RollProof,
  probability: Schema.Number,
  threshold: Schema.Int,
  success: Schema.Boolean,
  isValid: Schema.Boolean
})
export type UpgradeVerification = typeof UpgradeVerification.Type

const ValuedItem = Schema.Struct({ name: Schema.String, valueCents: Schema.BigIntFromNumber })

/** `GET /upgrades/history`: values are those at the time of each upgrade. */
export const UpgradeHistory = Schema.Struct({
  upgrades: Schema.Array(Schema.Struct({
    id: UpgradeId,
    fromItem: ValuedItem,
    toItem: ValuedItem,
    probability: Schema.Number,
    success: Schema.Boolean,
    createdAt: Schema.Date
  })),
  stats: Schema.Struct({
    totalUpgrades: Schema.Int,
    successCount: Schema.Int,
    /** Percent of upgrades that succeeded, 2 decimals; 0 without upgrades. */
    successRate: Schema.Number,
    /** Sum of the target values of successful upgrades. */
    totalValueWon: Schema.BigIntFromNumber,
    /** Sum of the source values of failed upgrades. */
    totalValueLost: Schema.BigIntFromNumber,
    /** totalValueWon minus the source values of ALL upgrades (a success also consumes its source). */
    netProfit: Schema.BigIntFromNumber
  }),
  total: Schema.Int,
  page: Schema.Int
})
export type UpgradeHistory = typeof UpgradeHistory.Type

/** The upgrade target is absent or not upgradable (docs/rules.md#upgrade-refusals). */
export class ItemNotUpgradable extends Schema.TaggedError<ItemNotUpgradable>()(
  "ItemNotUpgradable",
  message("Item not upgradable")
) {}

/** The upgrade target is not worth strictly more than the source (docs/rules.md#upgrade-refusals). */
export class InvalidUpgrade extends Schema.TaggedError<InvalidUpgrade>()(
  "InvalidUpgrade",
  message("Target item must have higher value")
) {}

/** The target is worth more than 10 times the source (docs/rules.md#upgrade-refusals). */
export class MultiplierTooHigh extends Schema.TaggedError<MultiplierTooHigh>()(
  "MultiplierTooHigh",
  message("Maximum multiplier is 10x")
) {}

/** The unclamped upgrade probability is below the 0.01 floor (see `upgradeOdds` in src/services/games/Upgrades.ts). */
export class ProbabilityTooLow extends Schema.TaggedError<ProbabilityTooLow>()(
  "ProbabilityTooLow",
  message("Probability too low")
) {}

/**
 * `POST /upgrades`: `fromItemId`: a catalog item (its oldest AVAILABLE entry is staked), or the entry `inventoryItemId` of it
 * (docs/rules.md#upgrade-stake).
 */
export const UpgradeRequest = Schema.Struct({
  fromItemId: ItemId,
  toItemId: ItemId,
  inventoryItemId: Schema.optional(InventoryItemId)
}).annotations({ parseOptions: { errors: "all" } })
export type UpgradeRequest = typeof UpgradeRequest.Type
