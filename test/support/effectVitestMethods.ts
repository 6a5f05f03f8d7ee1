/**
 * Runs before each test file (vitest.config.ts `setupFiles`): puts @effect/vitest's own methods back on its shared
 * `it` object. `layer(...)` (@effect/vitest 0.30) assigns methods bound to its layer's runtime onto that object,
 * `it.effect` and `it.scoped` among them, for good (upstream fixed it for Effect 4 only, effect-smol#2177). A worker
 * runs many files in one module cache, so without this a file's `layer(...)` reached the next file's plain
 * `it.scoped`: its tests ran on the other file's closed layer, and, after an `excludeTestServices` one, without
 * a TestClock (`testClock.setTime is not a function`, seen in CI).
 */
import { effect, flakyTest, it, layer, live, prop, scoped, scopedLive } from "@effect/vitest"

Object.assign(it, { effect, flakyTest, layer, live, prop, scoped, scopedLive })
