/**
 * The hot paths' spans (src/layers/HotSpans.ts): the same span as `Effect.withSpan` when tracing is on, none at all
 * when it is off (where `Effect.withSpan` still makes a no-op one).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FiberRef, Option } from "effect"
import { hotSpan } from "../../src/layers/HotSpans"

/** The name of the span the effect runs in, if any. */
const spanName = Effect.map(Effect.option(Effect.currentSpan), Option.map((span) => span.name))
const tracingOff = Effect.locally(FiberRef.currentTracerEnabled, false)

describe("hotSpan", () => {
  it.effect("tracing on: the effect runs in the named span, with its attributes", () =>
    Effect.gen(function*() {
      const span = yield* Effect.currentSpan.pipe(hotSpan("Op", { attributes: { key: "user:1" } }))
      expect(span.name).toBe("Op")
      expect(span.attributes.get("key")).toBe("user:1")
      expect(yield* spanName).toEqual(Option.none())
    }))

  it.effect("tracing off: the effect runs as it is, in no span", () =>
    Effect.gen(function*() {
      expect(yield* spanName.pipe(hotSpan("Op"), tracingOff)).toEqual(Option.none())
      // What it saves: Effect.withSpan makes a (no-op) span even then.
      expect(yield* spanName.pipe(Effect.withSpan("Op"), tracingOff)).toEqual(Option.some("Op"))
    }))

  it.effect("failures and values pass through either way", () =>
    Effect.gen(function*() {
      for (const around of [(e: Effect.Effect<number, string>) => e, tracingOff]) {
        expect(yield* around(Effect.succeed(1).pipe(hotSpan("Op")))).toBe(1)
        expect(yield* Effect.flip(around(Effect.fail("no").pipe(hotSpan("Op"))))).toBe("no")
      }
    }))
})
