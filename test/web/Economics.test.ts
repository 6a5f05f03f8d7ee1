/**
 * The console's return-to-player preview (web/src/admin/economics.ts) agrees with the service's exact
 * figures (src/services/games/CaseEconomics.ts) for any items, values, price and FLIP chance.
 */
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { caseEconomics } from "../../src/services/games/CaseEconomics"
import { chanceUnits, preview } from "../../web/src/admin/economics"

const N = 10_000_000

/** Item blocks that cover the roll space exactly, with their values. */
const item = fc.record({ weight: fc.integer({ min: 1, max: 1000 }), valueCents: fc.integer({ min: 1, max: 5_000_000 }) })
const caseItems = fc.array(item, { minLength: 1, maxLength: 12 }).map((items) => {
  const total = items.reduce((sum, item) => sum + item.weight, 0)
  const units = items.map((item) => Math.max(1, Math.floor((item.weight / total) * N)))
  units[0]! += N - units.reduce((sum, u) => sum + u, 0)
  return items.map((item, i) => ({ units: units[i]!, valueCents: item.valueCents }))
}).filter((items) => items.every((item) => item.units > 0))

describe("the console's RTP preview", () => {
  it("matches the service's expected value and RTP", () => {
    fc.assert(
      fc.property(
        caseItems,
        fc.integer({ min: 1, max: 10_000_000 }),
        fc.integer({ min: 0, max: 5_000_000 }),
        (items, priceCents, flipUnits) => {
          const flipText = (flipUnits / N).toFixed(7)
          const flipChance = Number(flipText)
          const service = caseEconomics({
            priceCents: BigInt(priceCents),
            houseEdge: 0.1,
            flipChance,
            items: items.map((i) => ({ units: i.units, valueCents: BigInt(i.valueCents) }))
          })
          const page = preview(
            items.map((i) => ({ units: BigInt(i.units), valueCents: BigInt(i.valueCents) })),
            BigInt(priceCents),
            chanceUnits(flipText)!
          )!
          expect(page.totalUnits).toBe(BigInt(N))
          expect(Math.abs(page.expectedValueCents - Number(service.expectedValueCents))).toBeLessThanOrEqual(0.5)
          expect(Math.abs(page.rtp - service.rtp)).toBeLessThanOrEqual(0.00005 + 1e-6)
        }
      ),
      { numRuns: 300 }
    )
  })

  it("reads drop chances of up to 7 decimals as the service does", () => {
    expect(chanceUnits("0.25")).toBe(2_500_000n)
    expect(chanceUnits("1")).toBe(10_000_000n)
    expect(chanceUnits("0,0000001")).toBe(1n)
    expect(chanceUnits("0.00000001")).toBeUndefined()
    expect(chanceUnits("abc")).toBeUndefined()
  })

  it("nothing to show without a price or items", () => {
    expect(preview([], 100n, 0n)).toBeUndefined()
    expect(preview([{ units: BigInt(N), valueCents: 10n }], 0n, 0n)).toBeUndefined()
  })
})
