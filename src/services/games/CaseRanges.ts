/**
 * The range rule (docs/rules.md#case-ranges), as pure functions: a case's items ordered by ascending dropChance (equal
 * chances by item id) get consecutive blocks of floor(dropChance x 10000000) numbers from 1 on; a roll
 * selects the item whose block holds it. A case is valid only when the blocks cover exactly
 * 1..10000000, so a saved case can never meet a roll outside its ranges.
 *
 * Items given without a dropChance get their rarity's base probability, scaled to fill
 * what the given chances leave of 1 (`resolveDropChances`, docs/rules.md#missing-drop-chances).
 */
import { Either } from "effect"
import {
  BASE_DROP_CHANCE_UNITS,
  type CaseCategory,
  chanceUnits,
  MIN_DROP_CHANCE_UNITS,
  type Rarity,
  ROLL_SPACE,
  unitsToDecimal
} from "../../schema/games/Catalog"
import { InvalidCaseItems } from "../../schema/games/Catalog"
import { FieldError } from "../../schema/platform/Errors"
import { InvalidRoll } from "../../schema/games/Game"

export interface ItemChance<Id extends bigint = bigint> {
  readonly itemId: Id
  readonly dropChance: number
}

export interface ItemRange<Id extends bigint = bigint> extends ItemChance<Id> {
  /** First roll of the block, 1..10000000. */
  readonly rangeStart: number
  /** Last roll of the block, inclusive. */
  readonly rangeEnd: number
}

const invalid = (message: string) =>
  Either.left(
    new InvalidCaseItems({ errors: [new FieldError({ field: "items", message })] })
  )

/**
 * An item of a case as an administrator gives it: without `dropChance`, its rarity decides
 * (docs/rules.md#missing-drop-chances).
 */
interface ItemChanceRequest<Id extends bigint = bigint> {
  readonly itemId: Id
  readonly rarity: Rarity
  readonly dropChance?: number | undefined
}

/**
 * The drop chances of a case's items (docs/rules.md#missing-drop-chances). When every item has a dropChance,
 * they are returned as given (`computeRanges` then checks they add up to 1). Otherwise the items without one
 * share what the given chances leave of 1 (all of it when none is given) in proportion to their rarities' base
 * probabilities, by the largest remainder method in 0.0000001 units: each gets the floor of its exact
 * quota, and the units left over go one each to the largest remainders (equal remainders: lower item id
 * first). The chances given are never changed. 422 on `items` when a chance given is malformed, when
 * the given ones leave less than 0.0001 per item without one, or when an item's share is below 0.0001.
 */
export const resolveDropChances = <Id extends bigint>(
  items: ReadonlyArray<ItemChanceRequest<Id>>
): Either.Either<ReadonlyArray<ItemChance<Id>>, InvalidCaseItems> => {
  const open = items.filter((item) => item.dropChance === undefined)
  if (open.length === 0) return Either.right(items.map(({ dropChance, itemId }) => ({ itemId, dropChance: dropChance! })))
  let given = 0
  for (const item of items) {
    if (item.dropChance === undefined) continue
    const units = chanceUnits(item.dropChance)
    if (units === undefined || units < MIN_DROP_CHANCE_UNITS || units > ROLL_SPACE) {
      return invalid(`Item ${item.itemId}: dropChance must be between 0.0001 and 1 with at most 7 decimal places`)
    }
    given += units
  }
  const left = ROLL_SPACE - given
  if (left < MIN_DROP_CHANCE_UNITS * open.length) {
    return invalid(
      `The drop chances given add up to ${Number(unitsToDecimal(given))}, which leaves less than 0.0001 for each of the ` +
        `${open.length} item${open.length === 1 ? "" : "s"} without one`
    )
  }
  // Exact quotas: left x base / total, as integers (at most 10^7 x 8 x 10^6 per product: exact in a double).
  const total = open.reduce((sum, item) => sum + BASE_DROP_CHANCE_UNITS[item.rarity], 0)
  const shares = open.map((item) => {
    const product = left * BASE_DROP_CHANCE_UNITS[item.rarity]
    return { item, units: Math.floor(product / total), remainder: product % total }
  })
  let leftOver = left - shares.reduce((sum, share) => sum + share.units, 0)
  const byRemainder = [...shares].sort((a, b) =>
    b.remainder - a.remainder || (a.item.itemId < b.item.itemId ? -1 : a.item.itemId > b.item.itemId ? 1 : 0)
  )
  for (const share of byRemainder) {
    if (leftOver === 0) break
    share.units++
    leftOver--
  }
  const resolved = new Map<ItemChanceRequest<Id>, number>()
  for (const share of shares) {
    if (share.units < MIN_DROP_CHANCE_UNITS) {
      return invalid(
        `Item ${share.item.itemId} (${share.item.rarity}): its share of the base probabilities is ` +
          `${Number(unitsToDecimal(share.units))}, below the minimum 0.0001; give its dropChance`
      )
    }
    resolved.set(share.item, share.units)
  }
  return Either.right(items.map((item) => ({
    itemId: item.itemId,
    dropChance: item.dropChance ?? Number(unitsToDecimal(resolved.get(item)!))
  })))
}

/** The ranges of a case's items, in roll order, or 422 naming `items` when they cannot cover 1..10000000. */
export const computeRanges = <Id extends bigint>(
  items: ReadonlyArray<ItemChance<Id>>
): Either.Either<ReadonlyArray<ItemRange<Id>>, InvalidCaseItems> => {
  if (items.length === 0) return invalid("A case needs at least one item")
  const seen = new Set<bigint>()
  const sized: Array<{ readonly item: ItemChance<Id>; readonly units: number }> = []
  for (const item of items) {
    if (seen.has(item.itemId)) return invalid(`Item ${item.itemId} appears more than once`)
    seen.add(item.itemId)
    const units = chanceUnits(item.dropChance)
    if (units === undefined || units < MIN_DROP_CHANCE_UNITS || units > ROLL_SPACE) {
      return invalid(
        `Item ${item.itemId}: dropChance must be between 0.0001 and 1 with at most 7 decimal places`
      )
    }
    sized.push({ item, units })
  }
  const total = sized.reduce((sum, { units }) => sum + units, 0)
  if (total !== ROLL_SPACE) {
    return invalid(`Drop chances must add up to exactly 1; they add up to ${Number(unitsToDecimal(total))}`)
  }
  sized.sort((a, b) =>
    a.units - b.units || (a.item.itemId < b.item.itemId ? -1 : a.item.itemId > b.item.itemId ? 1 : 0)
  )
  let next = 1
  return Either.right(sized.map(({ item, units }) => {
    const range = { ...item, rangeStart: next, rangeEnd: next + units - 1 }
    next += units
    return range
  }))
}

/** The item whose block holds `roll` (rangeStart <= roll <= rangeEnd); ranges in roll order. */
export const itemForRoll = <R extends Pick<ItemRange, "rangeStart" | "rangeEnd">>(
  ranges: ReadonlyArray<R>,
  roll: number
): Either.Either<R, InvalidRoll> => {
  let low = 0
  let high = ranges.length - 1
  while (low <= high) {
    const middle = (low + high) >>> 1
    const range = ranges[middle]!
    if (roll < range.rangeStart) high = middle - 1
    else if (roll > range.rangeEnd) low = middle + 1
    else return Either.right(range)
  }
  return Either.left(new InvalidRoll({ roll }))
}

/** The category a case's price puts it in; EVENT is only ever chosen explicitly (docs/rules.md#case-categories). */
export const categoryForPrice = (priceCents: bigint): Exclude<CaseCategory, "EVENT"> =>
  priceCents < 1_000n ? "CHEAP" : priceCents < 5_000n ? "MEDIUM" : priceCents <= 20_000n ? "EXPENSIVE" : "PREMIUM"
