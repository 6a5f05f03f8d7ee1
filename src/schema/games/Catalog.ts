/**
 * The catalog's vocabulary: items, cases and the roll ranges of a case's items
 * (docs/rules.md#catalog-and-case-economics).
 */
import { Schema } from "effect"
import { message } from "../platform/Errors"
import { CaseId, ItemId } from "../platform/Ids"

/** Rarities, rarest last (docs/rules.md#rarities). */
export const Rarity = Schema.Literal(
  "CONSUMER",
  "INDUSTRIAL",
  "MIL_SPEC",
  "RESTRICTED",
  "CLASSIFIED",
  "COVERT",
  "EXTRAORDINARY"
)
export type Rarity = typeof Rarity.Type

/**
 * The base probability of each rarity (docs/rules.md#rarities), in 0.0000001 units: the drop chance an item
 * gets when a case is saved without its `dropChance` (scaled with the others to fill 1, see
 * `resolveDropChances` and docs/rules.md#missing-drop-chances).
 */
export const BASE_DROP_CHANCE_UNITS: Readonly<Record<Rarity, number>> = {
  CONSUMER: 7_992_000,
  INDUSTRIAL: 1_598_000,
  MIL_SPEC: 320_000,
  RESTRICTED: 64_000,
  CLASSIFIED: 26_000,
  COVERT: 4_000,
  EXTRAORDINARY: 1_000
}

export const CaseCategory = Schema.Literal("CHEAP", "MEDIUM", "EXPENSIVE", "PREMIUM", "EVENT")
export type CaseCategory = typeof CaseCategory.Type

/** Rolls select from 1..ROLL_SPACE; a dropChance of 1 is a block of ROLL_SPACE numbers. */
export const ROLL_SPACE = 10_000_000
/** dropChance is exact to 7 decimal places: 1 unit = 0.0000001. */
export const CHANCE_DECIMALS = 7
export const MIN_DROP_CHANCE_UNITS = 1_000 // 0.0001

/**
 * The exact number of 0.0000001 units in `chance`, from its shortest decimal form (the digits the
 * client sent), never from binary arithmetic: 0.57 * 10000000 is 5699999.999999999, 0.57 is 5700000
 * units. `undefined` when the number has more than 7 decimal places or is not a plain decimal.
 */
export const chanceUnits = (chance: number): number | undefined => {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(String(chance))
  if (match === null) return undefined
  const decimals = match[2] ?? ""
  if (decimals.length > CHANCE_DECIMALS) return undefined
  return Number(match[1]) * ROLL_SPACE + Number(decimals.padEnd(CHANCE_DECIMALS, "0"))
}

/**
 * The FLIP threshold (docs/rules.md#flip): FLIP happens when `t mod 10000000` is below it, so FLIP's
 * probability is exactly this many 0.0000001 units. floor(flipChance x 10000000), exact for a flipChance of at
 * most 7 decimals.
 */
export const flipThresholdUnits = (flipChance: number): number =>
  chanceUnits(flipChance) ?? Math.floor(flipChance * ROLL_SPACE)

/** `units` as the decimal the database column numeric(8, 7) holds, e.g. 5700000 -> "0.5700000". */
export const unitsToDecimal = (units: number): string =>
  `${Math.floor(units / ROLL_SPACE)}.${String(units % ROLL_SPACE).padStart(CHANCE_DECIMALS, "0")}`

/** A drop chance: 0.0001 to 1, at most 7 decimal places (docs/rules.md#case-ranges). */
export const DropChance = Schema.Number.pipe(
  Schema.filter((chance) => chance >= 0.0001 && chance <= 1, { message: () => "must be between 0.0001 and 1" }),
  Schema.filter((chance) => chanceUnits(chance) !== undefined, {
    message: () => "must have at most 7 decimal places"
  })
)

/** A case's chance of FLIP (docs/rules.md#flip-chance), 0 to 0.5, exact to 7 decimal places like drop chances. */
export const FlipChance = Schema.Number.pipe(
  Schema.filter((chance) => chance >= 0 && chance <= 0.5, { message: () => "must be between 0 and 0.5" }),
  Schema.filter((chance) => chanceUnits(chance) !== undefined, {
    message: () => "must have at most 7 decimal places"
  })
)

/** An item of the catalog (docs/rules.md#rarities). */
export class Item extends Schema.Class<Item>("Item")({
  id: ItemId,
  name: Schema.String,
  rarity: Rarity,
  valueCents: Schema.BigInt,
  imageUrl: Schema.String,
  isUpgradable: Schema.Boolean
}) {}

/** A case (docs/rules.md#case-categories; its items and their ranges are in `CaseItemRow`). */
export class Case extends Schema.Class<Case>("Case")({
  id: CaseId,
  name: Schema.String,
  slug: Schema.String,
  description: Schema.NullOr(Schema.String),
  imageUrl: Schema.String,
  priceCents: Schema.BigInt,
  category: CaseCategory,
  isActive: Schema.Boolean,
  isFeatured: Schema.Boolean,
  houseEdge: Schema.Number,
  flipChance: Schema.Number,
  /** Pays back more than its house edge on purpose (free or event cases, docs/rules.md#house-edge-rule). */
  promotional: Schema.Boolean,
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf
}) {}

/**
 * An item of a case with its roll range (docs/rules.md#case-ranges): dropChance is stored as exact numeric and
 * read back as a number.
 */
export class CaseItem extends Schema.Class<CaseItem>("CaseItem")({
  itemId: ItemId,
  dropChance: Schema.NumberFromString,
  rangeStart: Schema.Number,
  rangeEnd: Schema.Number
}) {}

/** A case slug another case has (docs/rules.md#catalog-administration) (409). */
export class SlugTaken extends Schema.TaggedError<SlugTaken>()("SlugTaken", message("Slug already exists")) {}
