/**
 * Provably fair rolls (D5). A roll is HMAC-SHA256 keyed with the UTF-8 bytes of the server seed's hex
 * string over `${clientSeed}:${nonce}`, read as one unsigned 256-bit integer `h`:
 *   case roll (also FLIP and battle rolls) = (h mod 10000000) + 1, in 1..10000000
 *   upgrade roll = h mod 100000, in 0..99999; success exactly when roll < floor(probability x 100000)
 * The server seed is revealed only by verification; its SHA-256 is shown when the roll happens.
 * docs/fairness.md works an example by hand.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { createHash, createHmac } from "node:crypto"
import { Randomness } from "../layers/Randomness"
import { chanceUnits, flipThresholdUnits, ROLL_SPACE } from "../schema/Catalog"
import { BadRequest } from "../schema/Errors"
import type { UserId } from "../schema/Ids"

export const UPGRADE_SCALE = 100_000

export const hashServerSeed = (serverSeed: string): string => createHash("sha256").update(serverSeed).digest("hex")

const hmacInteger = (serverSeed: string, message: string): bigint =>
  BigInt(`0x${createHmac("sha256", Buffer.from(serverSeed, "utf8")).update(message).digest("hex")}`)

/** D14: the winning raffle ticket, 1..ticketsSold, from HMAC(serverSeed, `${raffleId}:${ticketsSold}`). */
export const raffleTicket = (serverSeed: string, raffleId: bigint | string, ticketsSold: number): number =>
  Number(hmacInteger(serverSeed, `${raffleId}:${ticketsSold}`) % BigInt(ticketsSold)) + 1

/** The roll of a case opening, a FLIP or a battle: 1..10000000, matched to the item ranges. */
export const caseRoll = (serverSeed: string, clientSeed: string, nonce: number): number =>
  Number(hmacInteger(serverSeed, `${clientSeed}:${nonce}`) % BigInt(ROLL_SPACE)) + 1

/** The roll of an upgrade: 0..99999. */
export const upgradeRoll = (serverSeed: string, clientSeed: string, nonce: number): number =>
  Number(hmacInteger(serverSeed, `${clientSeed}:${nonce}`) % BigInt(UPGRADE_SCALE))

/** floor(probability x 100000), exact for probabilities of up to 7 decimal places. */
export const upgradeThreshold = (probability: number): number => {
  const units = chanceUnits(probability)
  return units === undefined ? Math.floor(probability * UPGRADE_SCALE) : Math.floor(units / (ROLL_SPACE / UPGRADE_SCALE))
}

/** D7: FLIP happens when (t mod 10000000) < floor(flipChance x 10000000), t over `${clientSeed}:${nonce}:flip`. */
export const flipTriggered = (serverSeed: string, clientSeed: string, nonce: number, flipChance: number): boolean => {
  return Number(hmacInteger(serverSeed, `${clientSeed}:${nonce}:flip`) % BigInt(ROLL_SPACE)) < flipThresholdUnits(flipChance)
}

/** The state of a roll before it happens: what the user is shown, and what verification reveals. */
export interface RollSeeds {
  readonly serverSeed: string
  readonly serverSeedHash: string
  readonly clientSeed: string
  readonly nonce: number
}

const CLIENT_SEED_PATTERN = /^[A-Za-z0-9_-]{1,64}$/

export class ProvablyFair extends Effect.Service<ProvablyFair>()("app/ProvablyFair", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const randomness = yield* Randomness

    const hex = (length: number) => Effect.map(randomness.bytes(length), (bytes) => bytes.toString("hex"))

    /** 32 random bytes as 64 lowercase hex characters, and its SHA-256. */
    const newServerSeed = Effect.map(hex(32), (serverSeed) => ({ serverSeed, serverSeedHash: hashServerSeed(serverSeed) }))

    /**
     * The seeds of the user's next `count` rolls, for rolls inside the caller's database transaction:
     * a fresh server seed each, the client seed, and consecutive nonces (the first is the counter plus
     * one). The counter's row stays locked until the caller commits, and a rolled-back operation
     * consumes no nonce (D5).
     */
    const nextRolls = Effect.fn("ProvablyFair.nextRolls")(function*(userId: UserId, count: number) {
      const seeds = yield* Effect.replicateEffect(newServerSeed, count)
      const clientSeed = yield* hex(16)
      const now = new Date(yield* Clock.currentTimeMillis)
      const [row] = yield* sql<{ clientSeed: string; nonce: string }>`
        INSERT INTO fairness_seeds (user_id, client_seed, nonce, updated_at) VALUES (${userId}, ${clientSeed}, ${count}, ${now})
        ON CONFLICT (user_id) DO UPDATE SET nonce = fairness_seeds.nonce + ${count}, updated_at = ${now}
        RETURNING client_seed, nonce`.pipe(Effect.orDie)
      const first = Number(row!.nonce) - count + 1
      return seeds.map((seed, i) => ({ ...seed, clientSeed: row!.clientSeed, nonce: first + i }) satisfies RollSeeds)
    })

    /** The seeds of the user's next roll (see `nextRolls`). */
    const nextRoll = (userId: UserId) => Effect.map(nextRolls(userId, 1), (rolls) => rolls[0]!)

    /** `GET /provably-fair/client-seed`: created on first need (D5). */
    const clientSeed = Effect.fn("ProvablyFair.clientSeed")(function*(userId: UserId) {
      const fresh = yield* hex(16)
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* sql`INSERT INTO fairness_seeds (user_id, client_seed, nonce, updated_at) VALUES (${userId}, ${fresh}, 0, ${now})
                 ON CONFLICT (user_id) DO NOTHING`.pipe(Effect.orDie)
      const [row] = yield* sql<{ clientSeed: string; nonce: string }>`
        SELECT client_seed, nonce FROM fairness_seeds WHERE user_id = ${userId}`.pipe(Effect.orDie)
      return { clientSeed: row!.clientSeed, nonce: Number(row!.nonce) }
    })

    /** `PUT /provably-fair/client-seed`: 1 to 64 characters of [A-Za-z0-9_-]; the nonce continues. */
    const setClientSeed = Effect.fn("ProvablyFair.setClientSeed")(function*(userId: UserId, seed: string) {
      if (!CLIENT_SEED_PATTERN.test(seed)) {
        return yield* new BadRequest({ message: "Client seed must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -" })
      }
      const now = new Date(yield* Clock.currentTimeMillis)
      const [row] = yield* sql<{ clientSeed: string; nonce: string }>`
        INSERT INTO fairness_seeds (user_id, client_seed, nonce, updated_at) VALUES (${userId}, ${seed}, 0, ${now})
        ON CONFLICT (user_id) DO UPDATE SET client_seed = ${seed}, updated_at = ${now}
        RETURNING client_seed, nonce`.pipe(Effect.orDie)
      return { clientSeed: row!.clientSeed, nonce: Number(row!.nonce) }
    })

    return { newServerSeed, nextRoll, nextRolls, clientSeed, setClientSeed } as const
  })
}) {}
