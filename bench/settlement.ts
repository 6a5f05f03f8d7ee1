/**
 * Times the battle settlement function (src/services/battles/BattleSettlement.ts) on a 4-player, 25-round
 * battle: 100 drops from a catalog of 200 items, 1 to 4 winners. Pure CPU, no database:
 *   npm run bench:settlement [-- --iterations 20000]
 */
import { performance } from "node:perf_hooks"
import { parseArgs } from "node:util"
import { settle } from "../src/services/battles/BattleSettlement"

const { values } = parseArgs({ options: { iterations: { type: "string", default: "20000" } } })
const iterations = Number(values.iterations)

/** A deterministic pseudo-random stream (mulberry32), so every run times the same battles. */
const random = (() => {
  let state = 20261122
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
})()

// Catalog values spread like a real one: many cheap items, few expensive ones (10 cents to R$ 5000).
const pool = Array.from({ length: 200 }, (_, i) => ({ itemId: BigInt(i + 1), valueCents: BigInt(Math.round(10 + 500_000 * random() ** 4)) }))
const battles = Array.from({ length: 64 }, () => {
  const drops = []
  for (let player = 1n; player <= 4n; player++) {
    for (let round = 1; round <= 25; round++) {
      const item = pool[Math.floor(random() * pool.length)]!
      drops.push({ userId: player, itemId: item.itemId, valueCents: item.valueCents, roundNumber: round })
    }
  }
  const winnerCount = 1 + Math.floor(random() * 4)
  return { drops, winners: Array.from({ length: winnerCount }, (_, i) => ({ userId: BigInt(i + 1), slot: i + 1 })), pool }
})

for (let i = 0; i < 2_000; i++) settle(battles[i % battles.length]!) // warm-up
const timings: Array<number> = []
let records = 0
for (let i = 0; i < iterations; i++) {
  const start = performance.now()
  records += settle(battles[i % battles.length]!).records.length
  timings.push(performance.now() - start)
}
timings.sort((a, b) => a - b)
const at = (q: number) => (timings[Math.min(timings.length - 1, Math.floor(q * timings.length))]! * 1000).toFixed(1)
const mean = (timings.reduce((a, b) => a + b, 0) / timings.length) * 1000
console.log(`settlement of a 4-player, 25-round battle (100 drops, 200-item catalog), ${iterations} runs`)
console.log(`  mean ${mean.toFixed(1)} µs   p50 ${at(0.5)} µs   p99 ${at(0.99)} µs   max ${at(1)} µs`)
console.log(`  ${(records / iterations).toFixed(1)} records per settlement on average`)
