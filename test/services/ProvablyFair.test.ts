/**
 * The roll formulas (docs/fairness.md), pinned to its worked example, the comparisons that decide an
 * outcome at their exact boundaries, and the distribution of rolls.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { randomBytes } from "node:crypto"
import { computeRanges, itemForRoll } from "../../src/services/games/CaseRanges"
import {
  caseRoll,
  flipTriggered,
  hashServerSeed,
  raffleTicket,
  ticketSeedsDigest,
  upgradeRoll,
  upgradeSucceeds,
  upgradeThreshold
} from "../../src/services/games/ProvablyFair"

const serverSeed = "3f1c9a7e5b2d4c6e8f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d1e"

describe("provably fair rolls", () => {
  it("reproduce the worked example of docs/fairness.md", () => {
    expect(hashServerSeed(serverSeed)).toBe("1da46520353c9fb9ab48f67a76b0c5f50004891e5e3b7f9b5382b4b00be9b13c")
    expect(caseRoll(serverSeed, "player-seed", 1)).toBe(9814303)
    expect(upgradeRoll(serverSeed, "player-seed", 1)).toBe(14302)
    expect(flipTriggered(serverSeed, "player-seed", 1, 0.05)).toBe(false)
    expect(flipTriggered(serverSeed, "player-seed", 1, 0.22)).toBe(true) // 2139723 < 2200000
    expect(flipTriggered(serverSeed, "player-seed", 1, 0)).toBe(false)
    // A FLIP rolls the same seed with the next nonce.
    expect(caseRoll(serverSeed, "player-seed", 2)).toBe(6731858)
    // Raffle 12, three tickets: two bought with "alice-seed", then one with "bob-seed".
    const digest = ticketSeedsDigest([
      { firstTicket: 1, lastTicket: 2, clientSeed: "alice-seed" },
      { firstTicket: 3, lastTicket: 3, clientSeed: "bob-seed" }
    ])
    expect(digest).toBe("cde831ca612b23728900933efd515a846b0849a3cb78bab00bfc986b07c5a3a9")
    expect(raffleTicket(serverSeed, 12n, 3, digest)).toBe(2)
  })

  it("FLIP at exactly its chance's units does not trigger; one unit more does", () => {
    // t mod 10000000 = 2139723 for the worked example's seed, client seed and nonce 1.
    expect(flipTriggered(serverSeed, "player-seed", 1, 0.2139723)).toBe(false)
    expect(flipTriggered(serverSeed, "player-seed", 1, 0.2139724)).toBe(true)
  })

  it("an upgrade roll equal to the threshold fails, one below succeeds", () => {
    expect(upgradeSucceeds(44_999, 45_000)).toBe(true)
    expect(upgradeSucceeds(45_000, 45_000)).toBe(false)
    expect(upgradeSucceeds(0, 1)).toBe(true)
    expect(upgradeSucceeds(0, 0)).toBe(false)
  })

  it("thresholds are exact: floor(probability x 100000)", () => {
    expect(upgradeThreshold(0.57)).toBe(57_000)
    expect(upgradeThreshold(0.9)).toBe(90_000)
    expect(upgradeThreshold(0.01)).toBe(1_000)
    expect(upgradeThreshold(0.123456789)).toBe(12_345)
  })

  it("over many rolls, items drop with their chances and upgrades succeed with their probability", () => {
    const ranges = Either.getOrThrow(computeRanges([
      { itemId: 1n, dropChance: 0.7 },
      { itemId: 2n, dropChance: 0.25 },
      { itemId: 3n, dropChance: 0.05 }
    ]))
    const n = 40_000
    const counts = new Map<bigint, number>()
    let successes = 0
    const threshold = upgradeThreshold(0.3)
    for (let nonce = 1; nonce <= n; nonce++) {
      const seed = randomBytes(32).toString("hex")
      const item = Either.getOrThrow(itemForRoll(ranges, caseRoll(seed, "stats", nonce))).itemId
      counts.set(item, (counts.get(item) ?? 0) + 1)
      if (upgradeRoll(seed, "stats", nonce) < threshold) successes++
    }
    // Five standard deviations: a correct implementation fails about once in three million runs.
    const within = (observed: number, p: number) => Math.abs(observed / n - p) < 5 * Math.sqrt((p * (1 - p)) / n)
    expect(within(counts.get(1n) ?? 0, 0.7)).toBe(true)
    expect(within(counts.get(2n) ?? 0, 0.25)).toBe(true)
    expect(within(counts.get(3n) ?? 0, 0.05)).toBe(true)
    expect(within(successes, 0.3)).toBe(true)
  })
})
