/**
 * Where unpredictable bytes come from (server and client seeds): the operating system's CSPRNG in
 * production, a deterministic stream in tests so that rolls and items can be pinned.
 */
import { Context, Effect, Layer } from "effect"
import { createHmac, randomBytes, randomFillSync } from "node:crypto"

interface RandomnessShape {
  readonly bytes: (length: number) => Effect.Effect<Buffer>
}

/**
 * How many bytes the live randomness reads from the CSPRNG at once. A read costs about the same for 32 bytes as for
 * 4 KiB (its fixed cost was ~2 % of an opening's CPU with a read per seed), so the bytes are read ahead, 128 server
 * seeds at a time, as Node does for `randomUUID`. Each byte is handed out once, in memory of its own (not Node's
 * shared pool of small buffers, which other buffers' `.buffer` exposes whole), and wiped from the pool as it is.
 */
const POOL_BYTES = 4096

export class Randomness extends Context.Tag("app/Randomness")<Randomness, RandomnessShape>() {
  static readonly live: Layer.Layer<Randomness> = Layer.sync(this, () => {
    const pool = Buffer.alloc(POOL_BYTES)
    let used = POOL_BYTES
    return {
      bytes: (length) =>
        Effect.sync(() => {
          // Any other length (none today) as before, `randomBytes` refusing what it refused.
          if (!Number.isInteger(length) || length < 0 || length > POOL_BYTES) return randomBytes(length)
          if (used + length > POOL_BYTES) {
            randomFillSync(pool)
            used = 0
          }
          const taken = Buffer.allocUnsafeSlow(length)
          pool.copy(taken, 0, used, used + length)
          pool.fill(0, used, used + length)
          used += length
          return taken
        })
    }
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
