/** Publications held back until the transaction around them commits, dropped when it rolls back. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Ref } from "effect"
import { afterCommit, publishingAfterCommit } from "../../src/services/SqlRows"

describe("afterCommit", () => {
  it.effect("publishes at once outside a held transaction", () =>
    Effect.gen(function*() {
      const published = yield* Ref.make(0)
      yield* afterCommit(Ref.update(published, (n) => n + 1))
      expect(yield* Ref.get(published)).toBe(1)
    }))

  it.effect("inside one, publishes after it succeeded, in order; never when it failed", () =>
    Effect.gen(function*() {
      const published = yield* Ref.make<ReadonlyArray<string>>([])
      const publish = (what: string) => afterCommit(Ref.update(published, (all) => [...all, what]))
      const seenInside = yield* publishingAfterCommit(Effect.gen(function*() {
        yield* publish("balance")
        yield* publish("drop")
        return yield* Ref.get(published)
      }))
      expect(seenInside).toEqual([])
      expect(yield* Ref.get(published)).toEqual(["balance", "drop"])

      const failed = yield* Effect.exit(publishingAfterCommit(Effect.zipRight(publish("rolled back"), Effect.fail("no"))))
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* Ref.get(published)).toEqual(["balance", "drop"])
    }))
})
