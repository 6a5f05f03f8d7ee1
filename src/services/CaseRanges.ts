/**
 * The SPEC range rule and D6, as pure functions: a case's items ordered by ascending dropChance (equal
 * chances by item id) get consecutive blocks of floor(dropChance x 10000000) numbers from 1 on; a roll
 * selects the item whose block holds it. A case is valid only when the blocks cover exactly
 * 1..10000000, so a saved case can never meet a roll outside its ranges.
 */
import { Either } from "effect"
import {
  type CaseCategory,
  chanceUnits,
  MIN_DROP_CHANCE_UNITS,
  ROLL_SPACE,
  unitsToDecimal
} from "../schema/Catalog"
import { FieldError, InvalidRoll, UnprocessableEntity } from "../schema/Errors"

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
    new UnprocessableEntity({
      message: "Invalid case items",
      errors: [new FieldError({ field: "items", message })]
    })
  )

/** The ranges of a case's items, in roll order, or 422 naming `items` when they cannot cover 1..10000000. */
export const computeRanges = <Id extends bigint>(
  items: ReadonlyArray<ItemChance<Id>>
): Either.Either<ReadonlyArray<ItemRange<Id>>, UnprocessableEntity> => {
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

/** D6: the category a case's price puts it in (EVENT is only ever chosen explicitly). */
export const categoryForPrice = (priceCents: bigint): Exclude<CaseCategory, "EVENT"> =>
  priceCents < 1_000n ? "CHEAP" : priceCents < 5_000n ? "MEDIUM" : priceCents <= 20_000n ? "EXPENSIVE" : "PREMIUM"
