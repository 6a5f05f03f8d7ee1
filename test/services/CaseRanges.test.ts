import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { chanceUnits, DropChance, ROLL_SPACE, unitsToDecimal } from "../../src/schema/games/Catalog"
import { categoryForPrice, computeRanges, type ItemChance, itemForRoll } from "../../src/services/games/CaseRanges"

const ranges = (items: ReadonlyArray<ItemChance>) => Either.getOrThrow(computeRanges(items))
const failure = (items: ReadonlyArray<ItemChance>) => {
  const result = computeRanges(items)
  if (Either.isRight(result)) throw new Error("expected the case to be refused")
  return result.left
}

describe("computeRanges", () => {
  it("gives consecutive blocks in ascending dropChance order, covering 1..10000000", () => {
    const result = ranges([
      { itemId: 1n, dropChance: 0.7992 },
      { itemId: 2n, dropChance: 0.1598 },
      { itemId: 3n, dropChance: 0.032 },
      { itemId: 4n, dropChance: 0.0064 },
      { itemId: 5n, dropChance: 0.0026 }
    ])
    expect(result.map(({ itemId, rangeEnd, rangeStart }) => [itemId, rangeStart, rangeEnd])).toEqual([
      [5n, 1, 26_000],
      [4n, 26_001, 90_000],
      [3n, 90_001, 410_000],
      [2n, 410_001, 2_008_000],
      [1n, 2_008_001, 10_000_000]
    ])
  })

  it("a single item with dropChance 1 takes the whole roll space", () => {
    expect(ranges([{ itemId: 9n, dropChance: 1 }])).toEqual([
      { itemId: 9n, dropChance: 1, rangeStart: 1, rangeEnd: ROLL_SPACE }
    ])
  })

  it("orders equal chances by item id, whatever the input order", () => {
    const result = ranges([
      { itemId: 30n, dropChance: 0.25 },
      { itemId: 10n, dropChance: 0.5 },
      { itemId: 20n, dropChance: 0.25 }
    ])
    expect(result.map((r) => r.itemId)).toEqual([20n, 30n, 10n])
    expect(result.map((r) => [r.rangeStart, r.rangeEnd])).toEqual([[1, 2_500_000], [2_500_001, 5_000_000], [
      5_000_001,
      10_000_000
    ]])
  })

  it("computes block sizes in exact decimals, not binary floating point", () => {
    // 0.57 * 10000000 is 5699999.999999999 in floating point; its block is 5700000 numbers.
    expect(0.57 * ROLL_SPACE).not.toBe(5_700_000)
    const result = ranges([{ itemId: 1n, dropChance: 0.57 }, { itemId: 2n, dropChance: 0.43 }])
    expect(result.map((r) => r.rangeEnd - r.rangeStart + 1)).toEqual([4_300_000, 5_700_000])
    const sevenPlaces = ranges([{ itemId: 1n, dropChance: 0.1234567 }, { itemId: 2n, dropChance: 0.8765433 }])
    expect(sevenPlaces[0]).toMatchObject({ rangeStart: 1, rangeEnd: 1_234_567 })
  })

  it("refuses with 422 on items when the blocks do not cover 1..10000000", () => {
    for (
      const items of [
        [{ itemId: 1n, dropChance: 0.5 }, { itemId: 2n, dropChance: 0.4999 }],
        [{ itemId: 1n, dropChance: 0.6 }, { itemId: 2n, dropChance: 0.5 }]
      ]
    ) {
      const error = failure(items)
      expect(error._tag).toBe("InvalidCaseItems")
      expect(error.errors.map((e) => e.field)).toEqual(["items"])
      expect(error.errors[0]!.message).toMatch(/add up to exactly 1/)
    }
  })

  it("refuses an empty case, a repeated item and a chance out of bounds or too precise", () => {
    expect(failure([]).errors[0]!.message).toBe("A case needs at least one item")
    expect(failure([{ itemId: 1n, dropChance: 0.5 }, { itemId: 1n, dropChance: 0.5 }]).errors[0]!.message).toBe(
      "Item 1 appears more than once"
    )
    for (const dropChance of [0.00009, 0.12345678, 1.5, -0.5]) {
      expect(failure([{ itemId: 1n, dropChance }, { itemId: 2n, dropChance: 1 - dropChance }]).errors[0]!.field).toBe(
        "items"
      )
    }
  })
})

describe("itemForRoll", () => {
  const caseRanges = ranges([
    { itemId: 1n, dropChance: 0.9 },
    { itemId: 2n, dropChance: 0.0999 },
    { itemId: 3n, dropChance: 0.0001 }
  ])

  it("selects the item whose block holds the roll, bounds inclusive", () => {
    const pick = (roll: number) => Either.getOrThrow(itemForRoll(caseRanges, roll)).itemId
    expect(pick(1)).toBe(3n)
    expect(pick(1_000)).toBe(3n)
    expect(pick(1_001)).toBe(2n)
    expect(pick(1_000_000)).toBe(2n)
    expect(pick(1_000_001)).toBe(1n)
    expect(pick(ROLL_SPACE)).toBe(1n)
  })

  it("fails with InvalidRoll outside 1..10000000", () => {
    for (const roll of [0, ROLL_SPACE + 1, -5]) {
      const result = itemForRoll(caseRanges, roll)
      expect(Either.isLeft(result) && result.left._tag).toBe("InvalidRoll")
    }
  })
})

describe("drop chances", () => {
  it("counts units from the decimal digits", () => {
    expect(chanceUnits(0.57)).toBe(5_700_000)
    expect(chanceUnits(1)).toBe(ROLL_SPACE)
    expect(chanceUnits(0.0001)).toBe(1_000)
    expect(chanceUnits(0.12345678)).toBeUndefined()
    expect(chanceUnits(1e-8)).toBeUndefined()
    expect(unitsToDecimal(5_700_000)).toBe("0.5700000")
    expect(unitsToDecimal(ROLL_SPACE)).toBe("1.0000000")
  })

  it("the DropChance schema names what is wrong", () => {
    const decode = Schema.decodeUnknownEither(DropChance)
    expect(Either.isRight(decode(0.0001))).toBe(true)
    expect(Either.isRight(decode(1))).toBe(true)
    expect(String(Either.flip(decode(0.00001)).pipe(Either.getOrThrow))).toMatch(/between 0.0001 and 1/)
    expect(String(Either.flip(decode(0.12345678)).pipe(Either.getOrThrow))).toMatch(/at most 7 decimal places/)
  })
})

describe("categoryForPrice", () => {
  it("follows the price bands of the categories", () => {
    const bands: Array<[bigint, string]> = [
      [1n, "CHEAP"],
      [999n, "CHEAP"],
      [1_000n, "MEDIUM"],
      [4_999n, "MEDIUM"],
      [5_000n, "EXPENSIVE"],
      [20_000n, "EXPENSIVE"],
      [20_001n, "PREMIUM"]
    ]
    for (const [price, category] of bands) expect(categoryForPrice(price)).toBe(category)
  })
})
