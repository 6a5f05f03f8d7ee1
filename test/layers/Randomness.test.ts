/**
 * The live randomness (src/layers/Randomness.ts) reads the CSPRNG ahead, 4 KiB at a time: what it hands out is each
 * caller's own (a copy in memory of its own, never changed by later reads) and never handed out twice, across the
 * pool's refills.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Randomness } from "../../src/layers/Randomness"

describe("Randomness.live", () => {
  it.effect("seeds of 16 and 32 bytes across many refills: the lengths asked, all different, each kept as handed out", () =>
    Effect.gen(function*() {
      const randomness = yield* Randomness
      const first = yield* randomness.bytes(32)
      const kept = first.toString("hex")
      const seen = new Set<string>([kept])
      // 1 000 reads of 16 and 32 bytes: 24 000 bytes, six refills of the pool, some reads at its end.
      for (let i = 0; i < 1000; i++) {
        const length = i % 2 === 0 ? 16 : 32
        const bytes = yield* randomness.bytes(length)
        expect(bytes.length).toBe(length)
        // Not in Node's shared pool of small buffers, whose whole memory another buffer's `.buffer` gives away.
        expect(bytes.buffer.byteLength).toBe(length)
        seen.add(bytes.toString("hex"))
      }
      expect(seen.size).toBe(1001)
      // Not a view on the pool, which is wiped and refilled under it.
      expect(first.toString("hex")).toBe(kept)
    }).pipe(Effect.provide(Randomness.live)))

  it.effect("a length randomBytes refuses is refused as before, and takes nothing from the pool", () =>
    Effect.gen(function*() {
      const randomness = yield* Randomness
      const before = yield* randomness.bytes(16)
      expect(Exit.isFailure(yield* Effect.exit(randomness.bytes(-16)))).toBe(true)
      const after = yield* randomness.bytes(16)
      expect(after.equals(Buffer.alloc(16))).toBe(false)
      expect(after.equals(before)).toBe(false)
    }).pipe(Effect.provide(Randomness.live)))

  it.effect("more than the pool holds at once: read directly", () =>
    Effect.gen(function*() {
      const bytes = yield* (yield* Randomness).bytes(5000)
      expect(bytes.length).toBe(5000)
      expect(new Set(bytes).size).toBeGreaterThan(200)
    }).pipe(Effect.provide(Randomness.live)))
})
