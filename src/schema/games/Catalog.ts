/**
 * The catalog's vocabulary: items, cases and the roll ranges of a case's items
 * (docs/rules.md#catalog-and-case-economics).
 */
import { Schema } from "effect"
import { FieldError, message } from "../platform/Errors"
import { CaseId, ItemId } from "../platform/Ids"
import { PageParams } from "../platform/Pagination"
import { PlainString } from "../platform/Text"

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
const CHANCE_DECIMALS = 7
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
const FlipChance = Schema.Number.pipe(
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

/** A case (docs/rules.md#case-categories; its items and their ranges are `CaseItem`s). */
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

/**
 * A case's return to player as players see it (docs/rules.md#case-listing, docs/rules.md#house-edge-rule):
 * `CaseEconomics`' `rtp`, the same figure administrators see.
 */
export const PublicRtp = Schema.Number.annotations({
  description: "Return to player: the expected value of an opening (FLIP included, at the items' current values) " +
    "divided by priceCents, computed exactly and rounded half up to 4 decimals (0.8812 = 88.12 %)."
})

/** A `GET /cases` entry (docs/rules.md#case-listing): `bestItem` is its most valuable item. */
export const CaseSummary = Schema.Struct({
  id: CaseId,
  name: Schema.String,
  slug: Schema.String,
  imageUrl: Schema.String,
  priceCents: Schema.BigIntFromNumber,
  category: CaseCategory,
  isFeatured: Schema.Boolean,
  itemCount: Schema.Int,
  bestItem: Schema.Struct({ name: Schema.String, rarity: Rarity, valueCents: Schema.BigIntFromNumber }),
  rtp: PublicRtp
})
export type CaseSummary = typeof CaseSummary.Type

/** `GET /cases`: a page of the active cases, of one category or the featured ones when asked. */
export const ActiveCaseQuery = Schema.Struct({
  ...PageParams,
  category: Schema.optional(
    CaseCategory.annotations({ message: () => `must be one of ${CaseCategory.literals.join(", ")}` })
  ),
  featured: Schema.optional(Schema.BooleanFromString.annotations({ message: () => "must be true or false" }))
}).annotations({ parseOptions: { errors: "all" } })
export type ActiveCaseQuery = typeof ActiveCaseQuery.Type

/* What administrators send to create and change items and cases (docs/rules.md#catalog-administration). */

const Name = PlainString.pipe(
  Schema.filter((s) => s.trim().length > 0, { message: () => "must not be empty" }),
  Schema.maxLength(100, { message: () => "must be at most 100 characters" })
)

const Slug = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9]+(-[a-z0-9]+)*$/, {
    message: () => "must be lowercase letters and digits in words separated by single hyphens"
  }),
  Schema.maxLength(64, { message: () => "must be at most 64 characters" })
)

/**
 * An https URL, or a path on this site (docs/rules.md#catalog-administration): no `javascript:`, `data:` or
 * `http:` URL, nor `//host/...` or `/\\host/...`, which browsers read as another host (protocol-relative).
 */
const isImageUrl = (text: string): boolean => {
  if (/\s/u.test(text)) return false
  if (text.startsWith("/")) return !/^.[/\\]/.test(text)
  if (!/^https:\/\//i.test(text)) return false
  try {
    const url = new URL(text)
    return url.protocol === "https:" && url.hostname.length > 0
  } catch {
    return false
  }
}

/** What an administrator gives as an item's or case's image. */
export const ImageUrl = PlainString.pipe(
  Schema.filter((s) => s.trim().length > 0, { message: () => "must not be empty" }),
  Schema.maxLength(500, { message: () => "must be at most 500 characters" }),
  Schema.filter(isImageUrl, { message: () => "must be an https:// URL or a path starting with /" })
)

const Description = Schema.NullOr(
  PlainString.pipe(Schema.maxLength(1000, { message: () => "must be at most 1000 characters" }))
)

/** Cents in a JSON integer, more than zero. */
/**
 * The most an item may be worth or a case cost: R$ 1 000 000 000. Far beyond any real item, and low enough that no
 * number of sales, wins or refunds of such items can overflow a balance (a bigint of cents).
 */
export const MAX_CATALOG_CENTS = 100_000_000_000

const PositiveCents = Schema.Number.pipe(
  Schema.filter((n) => Number.isSafeInteger(n) && n > 0, { message: () => "must be a positive integer" }),
  Schema.filter((n) => n <= MAX_CATALOG_CENTS, { message: () => `must be at most ${MAX_CATALOG_CENTS}` }),
  Schema.compose(Schema.BigIntFromNumber)
)

const Fraction = (max: number) =>
  Schema.Number.pipe(
    Schema.filter((n) => Number.isFinite(n) && n >= 0 && n <= max, { message: () => `must be between 0 and ${max}` })
  )

const RarityField = Rarity.annotations({
  message: () => `must be one of ${Rarity.literals.join(", ")}`
})

const CategoryField = CaseCategory.annotations({
  message: () => `must be one of ${CaseCategory.literals.join(", ")}`
})

const Flag = Schema.Boolean.annotations({ message: () => "must be true or false" })

export const CaseItemInput = Schema.Struct({
  itemId: ItemId.annotations({ message: () => "must be a positive integer id" }),
  /**
   * Absent: the item's rarity's base probability, scaled with the others to fill 1
   * (docs/rules.md#missing-drop-chances).
   */
  dropChance: Schema.optional(DropChance)
})
export type CaseItemInput = typeof CaseItemInput.Type

const CaseItems = Schema.Array(CaseItemInput).pipe(
  Schema.minItems(1, { message: () => "must have at least one item" })
)

const ItemFields = {
  name: Name,
  rarity: RarityField,
  valueCents: PositiveCents,
  imageUrl: ImageUrl
}

/** `POST /admin/items`: every field validated, every bad field reported. */
export const NewItem = Schema.Struct({
  ...ItemFields,
  isUpgradable: Schema.optionalWith(Flag, { default: () => true })
}).annotations({ parseOptions: { errors: "all" } })
export type NewItem = typeof NewItem.Type

/** `PUT /admin/items/:id`: the fields to change; absent ones are kept. */
export const ItemUpdate = Schema.Struct({
  name: Schema.optional(ItemFields.name),
  rarity: Schema.optional(ItemFields.rarity),
  valueCents: Schema.optional(ItemFields.valueCents),
  imageUrl: Schema.optional(ItemFields.imageUrl),
  isUpgradable: Schema.optional(Flag)
}).annotations({ parseOptions: { errors: "all" } })
export type ItemUpdate = typeof ItemUpdate.Type

const OptionalCaseFields = {
  description: Schema.optional(Description),
  /** Only EVENT changes anything: every other category follows from the price (docs/rules.md#case-categories). */
  category: Schema.optional(CategoryField),
  isFeatured: Schema.optional(Flag),
  isActive: Schema.optional(Flag),
  houseEdge: Schema.optional(Fraction(0.5)),
  flipChance: Schema.optional(FlipChance),
  /** Pays back more than its house edge on purpose (free or event cases, docs/rules.md#house-edge-rule); audited. */
  promotional: Schema.optional(Flag)
}

/**
 * `POST /admin/cases`. Without a dropChance, an item gets its rarity's base probability, scaled
 * (docs/rules.md#missing-drop-chances).
 */
export const NewCase = Schema.Struct({
  name: Name,
  slug: Slug,
  imageUrl: ImageUrl,
  priceCents: PositiveCents,
  items: CaseItems,
  ...OptionalCaseFields
}).annotations({ parseOptions: { errors: "all" } })
export type NewCase = typeof NewCase.Type

/**
 * `PUT /admin/cases/:id`: the fields to change; absent ones are kept. New `items` replace all the old ones,
 * ranges recomputed. `category`: EVENT makes the case EVENT; any other value re-derives it from the price;
 * absent keeps an EVENT case EVENT and re-derives any other from the (new) price.
 */
export const CaseUpdate = Schema.Struct({
  name: Schema.optional(Name),
  slug: Schema.optional(Slug),
  imageUrl: Schema.optional(ImageUrl),
  priceCents: Schema.optional(PositiveCents),
  items: Schema.optional(CaseItems),
  ...OptionalCaseFields
}).annotations({ parseOptions: { errors: "all" } })
export type CaseUpdate = typeof CaseUpdate.Type

/** A case slug another case has (docs/rules.md#catalog-administration) (409). */
export class SlugTaken extends Schema.TaggedError<SlugTaken>()("SlugTaken", message("Slug already exists")) {}

/**
 * A case's items that cannot make its ranges: unknown item ids, or drop chances that do not cover
 * 1..10000000 exactly (docs/rules.md#case-validation) (422, with the problem on `items`).
 */
export class InvalidCaseItems extends Schema.TaggedError<InvalidCaseItems>()("InvalidCaseItems", {
  ...message("Invalid case items"),
  errors: Schema.Array(FieldError)
}) {}

/**
 * A case that pays back more than its house edge allows and is not promotional
 * (docs/rules.md#house-edge-rule) (422, with the figures as field errors).
 */
export class OverHouseEdge extends Schema.TaggedError<OverHouseEdge>()("OverHouseEdge", {
  ...message("Case pays back more than its house edge allows"),
  errors: Schema.Array(FieldError)
}) {}

/** An absent or inactive case (docs/rules.md#open-case). */
export class CaseNotFound extends Schema.TaggedError<CaseNotFound>()("CaseNotFound", message("Case not found")) {}
