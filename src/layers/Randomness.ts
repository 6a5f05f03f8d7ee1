/**
 * Where unpredictable bytes come from (server and client seeds): the operating system's CSPRNG in
 * production, a deterministic stream in tests so that rolls and items can be pinned.
 */
import { Context, Effect, Layer } from "effect"
import { createHmac, randomBytes } from "node:crypto"

interface RandomnessShape {
  readonly bytes: (length: number) => Effect.Effect<Buffer>
}

export class Randomness extends Context.Tag("app/Randomness")<Randomness, RandomnessShape>() {
  static readonly live: Layer.Layer<Randomness> = Layer.succeed(this, {
    bytes: (length) => Effect.sync(() => randomBytes(length))
  })

  /** HMAC-SHA256(seed, counter) blocks: the same seed gives the same bytes, in the same order. */
  static seeded(seed: string): Layer.Layer<Randomness> {
    return Layer.sync(this, () => {
      let counter = 0
      const next = () => createHmac("sha256", seed).update(String(counter++)).digest()
      return {
        bytes: (length) =>
          Effect.sync(() => {
            const blocks: Array<Buffer> = []
            for (let size = 0; size < length; size += 32) blocks.push(next())
            return Buffer.concat(blocks).subarray(0, length)
          })
      }
    })
  }
}
