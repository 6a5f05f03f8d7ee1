/**
 * Case economics (docs/rules.md#house-edge-rule) as pure functions: the exact expected value and RTP against a
 * worked example and against simulated openings, the house-edge line decided exactly, the demo catalog within its own
 * rule, and the base-probability defaults filling exactly 10000000 units.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import { BASE_DROP_CHANCE_UNITS, flipThresholdUnits, Rarity, ROLL_SPACE, unitsToDecimal } from "../../src/schema/games/Catalog"
import { caseEconomics, type Payout, payoutDistribution, SCALE } from "../../src/services/games/CaseEconomics"
import { computeRanges, itemForRoll, type ItemRange, resolveDropChances } from "../../src/services/games/CaseRanges"
import { demoCases, demoItems } from "../../src/services/games/DemoCatalog"

/** The blocks and values of a case whose items have these chances (in 0.0000001 units) and values. */
const blocksOf = (items: ReadonlyArray<{ readonly units: number; readonly valueCents: bigint }>) => {
  const ranges = Either.getOrThrow(computeRanges(items.map((item, i) => ({
    itemId: BigInt(i + 1),
    dropChance: Number(unitsToDecimal(item.units))
  }))))
  return ranges.map((range) => ({ ...range, valueCents: items[Number(range.itemId) - 1]!.valueCents }))
}

const payoutsOf = (blocks: ReadonlyArray<ItemRange & { readonly valueCents: bigint }>): ReadonlyArray<Payout> =>
  blocks.map((block) => ({ units: block.rangeEnd - block.rangeStart + 1, valueCents: block.valueCents }))

describe("expected value and RTP", () => {
  it("the worked example of docs/economics.md, exactly", () => {
    // 1000 cents: 0.9 of 100, 0.09 of 5000, 0.01 of 50000; FLIP 0.1.
    const items = [
      { units: 9_000_000, valueCents: 100n },
      { units: 900_000, valueCents: 5_000n },
      { units: 100_000, valueCents: 50_000n }
    ]
    const plain = caseEconomics({ priceCents: 1_000n, houseEdge: 0.1, flipChance: 0, items })
    expect(plain).toMatchObject({ expectedValueExact: "1040", expectedValueCents: 1_040n, rtp: 1.04, overHouseEdge: true })
    // E[max] = 100 x 0.81 + 5000 x (0.99^2 - 0.81) + 50000 x (1 - 0.99^2) = 81 + 850.5 + 995 = 1926.5
    // EV = 0.9 x 1040 + 0.1 x 1926.5 = 1128.65
    const flip = caseEconomics({ priceCents: 1_000n, houseEdge: 0.1, flipChance: 0.1, items })
    expect(flip).toMatchObject({
      expectedValueExact: "1128.65",
      expectedValueCents: 1_129n,
      rtp: 1.1287,
      maxExpectedValueExact: "900",
      overHouseEdge: true
    })
    expect(payoutDistribution(items, 0.1)).toEqual([
      // 0.9 x 0.9 + 0.1 x 0.81 = 0.891
      { valueCents: 100n, probability: 891n * SCALE / 1_000n },
      // 0.9 x 0.09 + 0.1 x (0.9801 - 0.81) = 0.09801
      { valueCents: 5_000n, probability: 9_801n * SCALE / 100_000n },
      // 0.9 x 0.01 + 0.1 x 0.0199 = 0.01099
      { valueCents: 50_000n, probability: 1_099n * SCALE / 100_000n }
    ])
    // At 1260 cents with a 10 % edge: at most 1134 may be paid back, and 1128.65 is.
    expect(caseEconomics({ priceCents: 1_260n, houseEdge: 0.1, flipChance: 0.1, items })).toMatchObject({
      rtp: 0.8958,
      maxExpectedValueExact: "1134",
      overHouseEdge: false
    })
  })

  it("the line is exact: paying back exactly 1 - houseEdge is allowed, one ten-millionth of a cent more is not", () => {
    // 0.5 of 90, 0.5 of 110: EV 100; price 1000 with houseEdge 0.9 allows exactly 100.
    const even = [{ units: 5_000_000, valueCents: 90n }, { units: 5_000_000, valueCents: 110n }]
    expect(caseEconomics({ priceCents: 1_000n, houseEdge: 0.9, flipChance: 0, items: even }).overHouseEdge).toBe(false)
    // One unit moved to the dearer item: EV 100.000002.
    const tilted = [{ units: 4_999_999, valueCents: 90n }, { units: 5_000_001, valueCents: 110n }]
    const over = caseEconomics({ priceCents: 1_000n, houseEdge: 0.9, flipChance: 0, items: tilted })
    expect(over).toMatchObject({ expectedValueExact: "100.000002", expectedValueCents: 100n, rtp: 0.1, overHouseEdge: true })
    // houseEdge is the decimal it was written as: 0.1 is 1/10, not the double nearest to it.
    const single = [{ units: ROLL_SPACE, valueCents: 9n }]
    expect(caseEconomics({ priceCents: 10n, houseEdge: 0.1, flipChance: 0, items: single }).overHouseEdge).toBe(false)
    expect(caseEconomics({ priceCents: 10n, houseEdge: 0.1000001, flipChance: 0, items: single }).overHouseEdge).toBe(true)
    // FLIP never helps with a single item, and a flipChance beyond 7 decimals is floored as the trigger floors it.
    expect(caseEconomics({ priceCents: 10n, houseEdge: 0.1, flipChance: 0.5, items: single }).expectedValueExact).toBe("9")
    expect(flipThresholdUnits(0.123456789)).toBe(1_234_567)
  })

  /** A seeded 32-bit generator (mulberry32): the simulation is the same on every run. */
  const generator = (seed: number) => {
    let state = seed >>> 0
    return () => {
      state = (state + 0x6d2b79f5) >>> 0
      let t = state
      t = Math.imul(t ^ (t >>> 15), t | 1)
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
      return (t ^ (t >>> 14)) >>> 0
    }
  }
  /** Uniform in 0..N-1 (rejection sampling: no modulo bias), as `h mod 10000000` is for a 256-bit h. */
  const LIMIT = Math.floor(2 ** 32 / ROLL_SPACE) * ROLL_SPACE
  const uniform = (next: () => number) => {
    for (;;) {
      const x = next()
      if (x < LIMIT) return x % ROLL_SPACE
    }
  }

  const OPENINGS = 1_000_000

  /**
   * OPENINGS openings of the case as CaseOpenings plays them (docs/rules.md#flip): a roll selects A from the blocks;
   * FLIP when the trigger is below the threshold, then a second roll selects B, and the more valuable of
   * A and B is awarded (A on a tie). The average awarded value.
   */
  const simulate = (blocks: ReadonlyArray<ItemRange & { readonly valueCents: bigint }>, flipChance: number, seed: number) => {
    const next = generator(seed)
    const threshold = flipThresholdUnits(flipChance)
    const values = blocks.map((block) => Number(block.valueCents))
    const index = new Map(blocks.map((block, i) => [block, i]))
    const select = (roll: number) => index.get(Either.getOrThrow(itemForRoll(blocks, roll)))!
    let total = 0
    for (let i = 0; i < OPENINGS; i++) {
      const a = values[select(uniform(next) + 1)]!
      if (threshold > 0 && uniform(next) < threshold) {
        const b = values[select(uniform(next) + 1)]!
        total += b > a ? b : a
      } else {
        total += a
      }
    }
    return total / OPENINGS
  }

  /** The exact mean and standard deviation of the awarded value. */
  const moments = (payouts: ReadonlyArray<Payout>, flipChance: number) => {
    const distribution = payoutDistribution(payouts, flipChance)
    const mean = distribution.reduce((sum, o) => sum + Number(o.valueCents) * (Number(o.probability) / Number(SCALE)), 0)
    const square = distribution.reduce((sum, o) => sum + Number(o.valueCents) ** 2 * (Number(o.probability) / Number(SCALE)), 0)
    return { mean, sd: Math.sqrt(Math.max(0, square - mean * mean)) }
  }

  /** 2 to 8 items with chances of at least 0.0001 adding up to 1, values 1 to 100000 cents. */
  const randomCase = fc.array(fc.record({ weight: fc.integer({ min: 1, max: 1_000 }), value: fc.integer({ min: 1, max: 100_000 }) }), {
    minLength: 2,
    maxLength: 8
  }).map((drafts) => {
    const spare = ROLL_SPACE - 1_000 * drafts.length
    const weights = drafts.reduce((sum, d) => sum + d.weight, 0)
    const units = drafts.map((d) => 1_000 + Math.floor((spare * d.weight) / weights))
    units[0]! += ROLL_SPACE - units.reduce((sum, u) => sum + u, 0)
    return blocksOf(drafts.map((d, i) => ({ units: units[i]!, valueCents: BigInt(d.value) })))
  })

  /**
   * The simulated average lies within 6 standard errors of the exact expected value (a false alarm
   * about once in 10^9 runs); the seeds are fixed, so every run simulates the same openings.
   */
  const withinTolerance = (flipChances: fc.Arbitrary<number>, seed: number) => {
    const misses: Array<number> = []
    fc.assert(
      fc.property(randomCase, flipChances, fc.integer({ min: 1, max: 2 ** 31 }), (blocks, flipChance, rollSeed) => {
        const payouts = payoutsOf(blocks)
        const exact = caseEconomics({ priceCents: 1n, houseEdge: 0, flipChance, items: payouts })
        const { mean, sd } = moments(payouts, flipChance)
        expect(Number(exact.expectedValueScaled) / Number(SCALE)).toBeCloseTo(mean, 6)
        const simulated = simulate(blocks, flipChance, rollSeed)
        const tolerance = (6 * sd) / Math.sqrt(OPENINGS)
        expect(Math.abs(simulated - mean)).toBeLessThanOrEqual(tolerance + 1e-9)
        // How far the simulation is from the expected value without FLIP, in tolerances.
        misses.push(Math.abs(simulated - moments(payouts, 0).mean) / (tolerance + 1e-9))
      }),
      { seed, numRuns: 8 }
    )
    return misses
  }

  it("matches 10^6 simulated openings of random cases without FLIP", () => {
    withinTolerance(fc.constant(0), 1_904_2026)
  }, 120_000)

  it("matches 10^6 simulated openings of random cases with FLIP, and the simulation tells FLIP apart", () => {
    const flipChances = fc.integer({ min: 100_000, max: 5_000_000 }).map((units) => Number(unitsToDecimal(units)))
    const distances = withinTolerance(flipChances, 2_026_1904)
    // The test has power: the expected value without FLIP is far outside the tolerance for most cases.
    expect(distances.filter((d) => d > 1).length).toBeGreaterThanOrEqual(6)
  }, 120_000)
})

describe("the demo catalog", () => {
  it("pays back 87 to 89 % of each case's price, FLIP included: within the default house edge", () => {
    const ids = new Map(demoItems.map((item, i) => [item.name, BigInt(i + 1)]))
    const values = new Map(demoItems.map((item, i) => [BigInt(i + 1), item.valueCents]))
    for (const demo of demoCases) {
      const ranges = Either.getOrThrow(computeRanges(demo.items.map(([name, dropChance]) => ({ itemId: ids.get(name)!, dropChance }))))
      const economics = caseEconomics({
        priceCents: demo.priceCents,
        houseEdge: 0.1,
        flipChance: demo.flipChance,
        items: ranges.map((range) => ({ units: range.rangeEnd - range.rangeStart + 1, valueCents: values.get(range.itemId)! }))
      })
      expect(economics.overHouseEdge, demo.slug).toBe(false)
      expect(economics.rtp, demo.slug).toBeGreaterThanOrEqual(0.87)
      expect(economics.rtp, demo.slug).toBeLessThan(0.89)
    }
  })
})

describe("base probabilities for items without a drop chance", () => {
  const units = (chance: number) => Math.round(chance * ROLL_SPACE)

  it("items without dropChance share 1 by their rarities' base probabilities, exactly", () => {
    // The seven rarities' base probabilities add up to 1.0005: scaled down, by the largest remainder.
    const all = Rarity.literals.map((rarity, i) => ({ itemId: BigInt(i + 1), rarity }))
    const resolved = Either.getOrThrow(resolveDropChances(all))
    expect(resolved.map((r) => units(r.dropChance))).toEqual([7_988_006, 1_597_201, 319_840, 63_968, 25_987, 3_998, 1_000])
    expect(resolved.reduce((sum, r) => sum + units(r.dropChance), 0)).toBe(ROLL_SPACE)
    // The ranges follow (docs/rules.md#case-ranges).
    expect(Either.isRight(computeRanges(resolved))).toBe(true)
  })

  it("the defaults always add up to exactly 10000000 units, whatever the rarities and the chances given", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...Rarity.literals), { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 1_000, max: 3_000_000 }), { maxLength: 3 }),
        (rarities, given) => {
          const items = [
            ...given.map((u, i) => ({ itemId: BigInt(1_000 + i), rarity: "COVERT" as const, dropChance: Number(unitsToDecimal(u)) })),
            ...rarities.map((rarity, i) => ({ itemId: BigInt(i + 1), rarity }))
          ]
          const resolved = resolveDropChances(items)
          if (Either.isLeft(resolved)) {
            // Refused only when some share would fall below 0.0001.
            expect(resolved.left.errors[0]!.message).toMatch(/below the minimum 0\.0001|leaves less than 0\.0001/)
            return
          }
          const all = resolved.right.map((r) => units(r.dropChance))
          expect(all.reduce((sum, u) => sum + u, 0)).toBe(ROLL_SPACE)
          // The chances given are kept as they were.
          expect(all.slice(0, given.length)).toEqual(given)
          // Each default is its exact quota, rounded up or down by less than one unit.
          const left = ROLL_SPACE - given.reduce((sum, u) => sum + u, 0)
          const weights = rarities.reduce((sum, r) => sum + BASE_DROP_CHANCE_UNITS[r], 0)
          rarities.forEach((rarity, i) => {
            const quota = (left * BASE_DROP_CHANCE_UNITS[rarity]) / weights
            expect(Math.abs(all[given.length + i]! - quota)).toBeLessThan(1)
          })
          expect(Either.isRight(computeRanges(resolved.right))).toBe(true)
        }
      ),
      { seed: 21, numRuns: 500 }
    )
  })

  it("refuses what cannot be filled: given chances leaving less than 0.0001 each, or a share below 0.0001", () => {
    const tooFull = resolveDropChances([
      { itemId: 1n, rarity: "CONSUMER", dropChance: 0.9999 },
      { itemId: 2n, rarity: "CONSUMER" },
      { itemId: 3n, rarity: "COVERT" }
    ])
    expect(Either.isLeft(tooFull) && tooFull.left.errors[0]!.message).toBe(
      "The drop chances given add up to 0.9999, which leaves less than 0.0001 for each of the 2 items without one"
    )
    // 10 consumer items and one extraordinary: 0.0001 / 7.9921 of 1 is 0.0000125.
    const drowned = resolveDropChances([
      ...Array.from({ length: 10 }, (_, i) => ({ itemId: BigInt(i + 1), rarity: "CONSUMER" as const })),
      { itemId: 99n, rarity: "EXTRAORDINARY" }
    ])
    expect(Either.isLeft(drowned) && drowned.left.errors[0]!.message).toBe(
      "Item 99 (EXTRAORDINARY): its share of the base probabilities is 0.0000125, below the minimum 0.0001; give its dropChance"
    )
  })
})
