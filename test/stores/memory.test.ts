import { layer } from "@effect/vitest"
import { TestClock } from "effect"
import { Stores } from "../../src/layers/stores/Stores"
import { storeContract } from "./contract"

layer(Stores.memory)("in-memory stores", (it) => {
  storeContract(it, { advance: (ms) => TestClock.adjust(ms) })
})
