/**
 * The battle settlement function (docs/rules.md#battle-settlement, with its tie-breaks): hand-worked
 * examples, and properties over random battles.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { type Drop, type PoolItem, settle, TOLERANCE } from "../../src/services/battles/BattleSettlement"

const drop = (userId: bigint, itemId: bigint, valueCents: bigint, roundNumber: number): Drop<bigint, bigint> => ({
  userId,
  itemId,
  valueCents,
  roundNumber
})
const pool = (...items: ReadonlyArray<[bigint, bigint]>): ReadonlyArray<PoolItem<bigint>> =>
  items.map(([itemId, valueCents]) => ({ itemId, valueCents }))
const winners = (...userIds: ReadonlyArray<bigint>) => userIds.map((userId, i) => ({ userId, slot: i + 1 }))
const dropped = (userId: bigint, itemId: bigint, valueCents: bigint, roundNumber: number) =>
  ({ type: "DROPPED", userId, itemId, valueCents, roundNumber }) as const
const removed = (itemId: bigint, valueCents: bigint, roundNumber: number) =>
  ({ type: "REMOVED_TO_POOL", userId: null, itemId, valueCents, roundNumber }) as const
const added = (userId: bigint, itemId: bigint, valueCents: bigint) =>
  ({ type: "ADDED_FROM_POOL", userId, itemId, valueCents, roundNumber: null }) as const

describe("battle settlement, worked by hand", () => {
  it("one winner takes every item, most valuable first; no deficit, no compensation", () => {
    const result = settle({
      drops: [drop(1n, 10n, 300n, 1), drop(2n, 11n, 200n, 1), drop(1n, 12n, 500n, 2), drop(2n, 13n, 100n, 2)],
      winners: winners(1n),
      pool: pool([99n, 1_100n])
    })
    expect(result.fairShare).toBe(1_100n)
    expect(result.records).toEqual([
      dropped(1n, 12n, 500n, 2),
      dropped(1n, 10n, 300n, 1),
      dropped(1n, 11n, 200n, 1),
      dropped(1n, 13n, 100n, 2)
    ])
    expect(result.summary).toEqual({ totalDropped: 1_100n, removedToPool: 0n, addedFromPool: 0n, winnersCount: 1 })
  })

  it("two winners: the item above fairShare goes to the pool, the rest to the poorer winner, deficits made up", () => {
    // total 6000, fairShare 3000: the 5000 leaves; 400 to slot 1 (tie at 0), 300 and 300 to slot 2.
    // Deficits 2600 and 2400, each matched exactly by a catalog item.
    const result = settle({
      drops: [drop(1n, 50n, 5_000n, 1), drop(2n, 40n, 400n, 1), drop(1n, 31n, 300n, 2), drop(2n, 30n, 300n, 2)],
      winners: winners(1n, 2n),
      pool: pool([100n, 2_600n], [101n, 2_400n])
    })
    expect(result.fairShare).toBe(3_000n)
    expect(result.records).toEqual([
      removed(50n, 5_000n, 1),
      dropped(1n, 40n, 400n, 1),
      dropped(2n, 30n, 300n, 2),
      dropped(2n, 31n, 300n, 2),
      added(1n, 100n, 2_600n),
      added(2n, 101n, 2_400n)
    ])
    expect(result.summary).toEqual({ totalDropped: 6_000n, removedToPool: 5_000n, addedFromPool: 5_000n, winnersCount: 2 })
  })

  it("a deficit covered by one catalog item within ±100: nearest first, then the more valuable, then the lower id", () => {
    // total 1400, fairShare 700; the 1000 leaves; each winner gets a 200 and is 500 short.
    // Candidates in 400..600: 550 (50 away, id 2 before id 7), 450 (50 away, less valuable), 430, 580, 600.
    const result = settle({
      drops: [drop(1n, 10n, 1_000n, 1), drop(2n, 20n, 200n, 1), drop(1n, 21n, 200n, 2)],
      winners: winners(1n, 2n),
      pool: pool([1n, 450n], [7n, 550n], [2n, 550n], [3n, 580n], [4n, 430n], [5n, 600n], [6n, 399n], [8n, 601n])
    })
    expect(result.records.filter((r) => r.type === "ADDED_FROM_POOL")).toEqual([added(1n, 2n, 550n), added(2n, 2n, 550n)])
    expect(result.summary).toEqual({ totalDropped: 1_400n, removedToPool: 1_000n, addedFromPool: 1_100n, winnersCount: 2 })
  })

  it("a catalog item exactly 100 from the deficit is a candidate, above it or below it", () => {
    // total 1400, fairShare 700; the 1000 leaves; each winner gets a 200 and is 500 short.
    const drops = [drop(1n, 10n, 1_000n, 1), drop(2n, 20n, 200n, 1), drop(1n, 21n, 200n, 2)]
    // 600 is deficit + 100: taken alone (outside the window, the greedy rule would take ten 50s).
    const above = settle({ drops, winners: winners(1n, 2n), pool: pool([1n, 600n], [2n, 50n]) })
    expect(above.records.filter((r) => r.type === "ADDED_FROM_POOL")).toEqual([added(1n, 1n, 600n), added(2n, 1n, 600n)])
    expect(above.summary.addedFromPool).toBe(1_200n)
    // 400 is deficit - 100: taken alone (outside the window, the greedy rule would add two 50s to it).
    const below = settle({ drops, winners: winners(1n, 2n), pool: pool([1n, 400n], [2n, 50n]) })
    expect(below.records.filter((r) => r.type === "ADDED_FROM_POOL")).toEqual([added(1n, 1n, 400n), added(2n, 1n, 400n)])
    expect(below.summary.addedFromPool).toBe(800n)
  })

  it("a deficit nothing matches is covered greedily by several items, the most valuable that fits each time", () => {
    // total 1100, fairShare 550; the 1000 leaves; the 100 goes to slot 1. Deficits 450 and 550.
    // 450: 300, then 40 x 3 (30 left, nothing fits). 550: 300, 200, 40 (10 left).
    const result = settle({
      drops: [drop(1n, 10n, 1_000n, 1), drop(2n, 11n, 100n, 1)],
      winners: winners(1n, 2n),
      pool: pool([1n, 300n], [2n, 200n], [3n, 40n], [4n, 0n])
    })
    expect(result.records).toEqual([
      removed(10n, 1_000n, 1),
      dropped(1n, 11n, 100n, 1),
      added(1n, 1n, 300n),
      added(1n, 3n, 40n),
      added(1n, 3n, 40n),
      added(1n, 3n, 40n),
      added(2n, 1n, 300n),
      added(2n, 2n, 200n),
      added(2n, 3n, 40n)
    ])
    expect(result.summary.addedFromPool).toBe(960n)
  })

  it("a deficit that nothing fits gets nothing; a deficit of at most 100 is not compensated", () => {
    const nothingFits = settle({
      drops: [drop(1n, 10n, 1_000n, 1), drop(2n, 11n, 100n, 1)],
      winners: winners(1n, 2n),
      pool: pool([1n, 5_000n], [2n, 0n])
    })
    expect(nothingFits.records).toEqual([removed(10n, 1_000n, 1), dropped(1n, 11n, 100n, 1)])
    expect(nothingFits.summary).toEqual({ totalDropped: 1_100n, removedToPool: 1_000n, addedFromPool: 0n, winnersCount: 2 })

    // total 400, fairShare 200: the 250 leaves, the 150 goes to slot 1 (50 short: not compensated), slot 2 is 200 short.
    const small = settle({
      drops: [drop(1n, 10n, 250n, 1), drop(2n, 11n, 150n, 1)],
      winners: winners(1n, 2n),
      pool: pool([1n, 50n], [2n, 200n])
    })
    expect(small.records).toEqual([removed(10n, 250n, 1), dropped(1n, 11n, 150n, 1), added(2n, 2n, 200n)])
  })

  it("a deficit of exactly 100 gets no compensation; 101 does", () => {
    // total 400, fairShare 200: the 300 leaves, slot 1 gets the 100. Slot 1 is exactly 100 short (tolerated),
    // slot 2 is 200 short (compensated).
    const exactly = settle({
      drops: [drop(1n, 10n, 300n, 1), drop(2n, 11n, 100n, 1)],
      winners: winners(1n, 2n),
      pool: pool([1n, 100n], [2n, 200n])
    })
    expect(exactly.fairShare).toBe(200n)
    expect(exactly.records).toEqual([removed(10n, 300n, 1), dropped(1n, 11n, 100n, 1), added(2n, 2n, 200n)])
    // total 402, fairShare 201: slot 1 holds 100, 101 short: compensated with the 100 (within ±100 of 101).
    const oneMore = settle({
      drops: [drop(1n, 10n, 302n, 1), drop(2n, 11n, 100n, 1)],
      winners: winners(1n, 2n),
      pool: pool([1n, 100n], [2n, 201n])
    })
    expect(oneMore.fairShare).toBe(201n)
    expect(oneMore.records).toEqual([
      removed(10n, 302n, 1),
      dropped(1n, 11n, 100n, 1),
      added(1n, 1n, 100n),
      added(2n, 2n, 201n)
    ])
  })
})

const battle = fc.record({
  drops: fc.array(
    fc.record({
      userId: fc.constantFrom(1n, 2n, 3n, 4n),
      itemId: fc.bigInt({ min: 1n, max: 60n }),
      valueCents: fc.bigInt({ min: 1n, max: 200_000n }),
      roundNumber: fc.integer({ min: 1, max: 25 })
    }),
    { minLength: 1, maxLength: 100 }
  ),
  winnerCount: fc.integer({ min: 1, max: 4 }),
  pool: fc.array(fc.record({
      itemId: fc.bigInt({ min: 100n, max: 400n }),
      // Worthless catalog items must never be taken; tiny ones would only make long greedy runs.
      valueCents: fc.oneof(fc.constant(0n), fc.bigInt({ min: 50n, max: 100_000n }))
    }), {
    maxLength: 40
  })
})

describe("battle settlement, properties", () => {
  it("moves every dropped item once, respects fairShare, leaves deficits only where nothing fits", () => {
    fc.assert(
      fc.property(battle, ({ drops, pool, winnerCount }) => {
        const winning = winners(...[1n, 2n, 3n, 4n].slice(0, winnerCount))
        const result = settle({ drops, winners: winning, pool })
        const total = drops.reduce((s, d) => s + d.valueCents, 0n)
        const sum = (type: string) => result.records.filter((r) => r.type === type).reduce((s, r) => s + r.valueCents, 0n)

        expect(result.fairShare).toBe(total / BigInt(winnerCount))
        expect(sum("DROPPED") + sum("REMOVED_TO_POOL")).toBe(total)
        expect(result.records.filter((r) => r.type !== "ADDED_FROM_POOL").length).toBe(drops.length)
        expect(result.summary).toEqual({
          totalDropped: total,
          removedToPool: sum("REMOVED_TO_POOL"),
          addedFromPool: sum("ADDED_FROM_POOL"),
          winnersCount: winnerCount
        })
        const winnerIds = new Set(winning.map((w) => w.userId))
        for (const record of result.records) {
          if (record.type === "REMOVED_TO_POOL") {
            expect(record.userId).toBeNull()
            expect(record.valueCents > result.fairShare).toBe(true)
          } else {
            expect(winnerIds.has(record.userId!)).toBe(true)
          }
          if (record.type === "DROPPED") expect(record.valueCents <= result.fairShare).toBe(true)
          expect(record.roundNumber === null).toBe(record.type === "ADDED_FROM_POOL")
          if (record.type === "ADDED_FROM_POOL") expect(pool.some((p) => p.itemId === record.itemId && p.valueCents === record.valueCents)).toBe(true)
        }
        for (const winner of winning) {
          const received = result.records.filter((r) => r.userId === winner.userId).reduce((s, r) => s + r.valueCents, 0n)
          const left = result.fairShare - received
          const somethingFits = pool.some((p) => p.valueCents > 0n && p.valueCents <= left)
          expect(left <= TOLERANCE || !somethingFits).toBe(true)
        }
        expect(settle({ drops, winners: winning, pool })).toEqual(result)
      }),
      { numRuns: 300 }
    )
  })
})
