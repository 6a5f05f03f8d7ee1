/**
 * Provably fair rolls (docs/fairness.md). A roll is HMAC-SHA256 keyed with the UTF-8 bytes of the
 * server seed's hex string over `${clientSeed}:${nonce}`, read as one unsigned 256-bit integer `h`:
 *   case roll (also FLIP and battle rolls) = (h mod 10000000) + 1, in 1..10000000
 *   upgrade roll = h mod 100000, in 0..99999; success exactly when roll < floor(probability x 100000)
 *
 * Commitment: every server seed is made, and its SHA-256 published, before the roll that uses it.
 * Each user always has one committed next seed (`nextServerSeedHash`); an opening or an upgrade rolls
 * with it and, in the same transaction, commits a fresh one. A battle commits its own seed when it is
 * created, a raffle when it is published. A refused operation rolls back with its transaction, so it
 * consumes neither the seed nor a nonce.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import { createHash, createHmac } from "node:crypto"
import { Randomness } from "../../layers/Randomness"
import { chanceUnits, flipThresholdUnits, ROLL_SPACE } from "../../schema/games/Catalog"
import { type FairnessState, InvalidClientSeed } from "../../schema/games/Fairness"
import type { UserId } from "../../schema/platform/Ids"
import { execute, firstOf, singleOf } from "../platform/SqlRows"

const UPGRADE_SCALE = 100_000

export const hashServerSeed = (serverSeed: string): string => createHash("sha256").update(serverSeed).digest("hex")

// The key as a string: Node takes its UTF-8 bytes, as Buffer.from(serverSeed, "utf8") would, but on Node 24 a
// Buffer key costs about five times as much (measured: 25 µs against 5 µs a roll).
const hmacInteger = (serverSeed: string, message: string): bigint =>
  BigInt(`0x${createHmac("sha256", serverSeed).update(message).digest("hex")}`)

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

/** An upgrade succeeds exactly when its roll is below the threshold: a roll equal to it fails. */
export const upgradeSucceeds = (roll: number, threshold: number): boolean => roll < threshold

/** FLIP happens when (t mod 10000000) < floor(flipChance x 10000000), t over `${clientSeed}:${nonce}:flip`. */
export const flipTriggered = (serverSeed: string, clientSeed: string, nonce: number, flipChance: number): boolean =>
  Number(hmacInteger(serverSeed, `${clientSeed}:${nonce}:flip`) % BigInt(ROLL_SPACE)) < flipThresholdUnits(flipChance)

/** A block of consecutive raffle tickets bought at once, with the buyer's client seed at purchase. */
interface TicketBlock {
  readonly firstTicket: number
  readonly lastTicket: number
  readonly clientSeed: string
}

/** SHA-256 hex of every ticket's client seed, in ticket order, joined by ":". Blocks in ticket order. */
export const ticketSeedsDigest = (blocks: ReadonlyArray<TicketBlock>): string => {
  const hash = createHash("sha256")
  let first = true
  for (const block of blocks) {
    for (let ticket = block.firstTicket; ticket <= block.lastTicket; ticket++) {
      hash.update(first ? block.clientSeed : `:${block.clientSeed}`)
      first = false
    }
  }
  return hash.digest("hex")
}

/**
 * The winning raffle ticket, 1..ticketsSold:
 * (HMAC(serverSeed, `${raffleId}:${ticketsSold}:${ticketSeedsDigest}`) mod ticketsSold) + 1.
 */
export const raffleTicket = (serverSeed: string, raffleId: bigint, ticketsSold: number, seedsDigest: string): number =>
  Number(hmacInteger(serverSeed, `${raffleId}:${ticketsSold}:${seedsDigest}`) % BigInt(ticketsSold)) + 1

/** A server seed and its SHA-256, the commitment published before it is used. */
export interface ServerSeed {
  readonly serverSeed: string
  readonly serverSeedHash: string
}

/** The seeds of one roll with the user's committed seed, and the commitment that replaced it. */
interface CommittedRoll extends ServerSeed {
  readonly clientSeed: string
  readonly nonce: number
  readonly nextServerSeedHash: string
}

const StateRow = Schema.Struct({
  clientSeed: Schema.String,
  nonce: Schema.NumberFromString,
  nextServerSeedHash: Schema.String
})

const RollRow = Schema.Struct({
  serverSeed: Schema.String,
  serverSeedHash: Schema.String,
  clientSeed: Schema.String,
  nonce: Schema.NumberFromString,
  nextServerSeedHash: Schema.String
})

/**
 * A user's fairness state as a one-statement write expects to find it (`lockStep`): the client seed,
 * the last nonce used and the committed next seed.
 */
export interface NextRoll {
  readonly clientSeed: string
  readonly nonce: number
  readonly nextServerSeed: string
  readonly nextServerSeedHash: string
}

/** A `NextRoll` as a statement returns it (the nonce as text). */
export const NextRollRow = Schema.Struct({
  clientSeed: Schema.String,
  nonce: Schema.NumberFromString,
  nextServerSeed: Schema.String,
  nextServerSeedHash: Schema.String
})

/** How many users' states an instance remembers (a few hundred bytes each). */
const NEXT_ROLLS_KEPT = 100_000

const CLIENT_SEED_PATTERN = /^[A-Za-z0-9_-]{1,64}$/

export class ProvablyFair extends Effect.Service<ProvablyFair>()("app/ProvablyFair", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const randomness = yield* Randomness

    const hex = (length: number) => Effect.map(randomness.bytes(length), (bytes) => bytes.toString("hex"))
    /**
     * The state of each user's next roll as this instance last read or wrote it (it made the next seed
     * itself). Only a hint: the write that consumes it checks it is still the state in the database
     * (`lockStep`), so a change made elsewhere (another instance, a battle, a new client seed) costs
     * one more read, never a wrong roll.
     */
    const known = new Map<UserId, NextRoll>()
    const keep = (userId: UserId, state: NextRoll) => {
      if (known.size >= NEXT_ROLLS_KEPT) known.clear()
      known.set(userId, state)
    }
    const forget = (userId: UserId) => Effect.sync(() => void known.delete(userId))
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** 32 random bytes as 64 lowercase hex characters, and its SHA-256. */
    const newServerSeed: Effect.Effect<ServerSeed> = Effect.map(
      hex(32),
      (serverSeed) => ({ serverSeed, serverSeedHash: hashServerSeed(serverSeed) })
    )

    /**
     * The user's fairness state, created when the user is (sign-up) and on first need: a random
     * client seed, nonce 0 and a committed server seed. A no-op when it exists.
     */
    const ensure = Effect.fnUntraced(function*(userId: UserId) {
      const clientSeed = yield* hex(16)
      const next = yield* newServerSeed
      yield* execute(sql`
          INSERT INTO fairness_seeds (user_id, client_seed, nonce, next_server_seed, next_server_seed_hash, updated_at)
          VALUES (${userId}, ${clientSeed}, 0, ${next.serverSeed}, ${next.serverSeedHash}, ${yield* now})
          ON CONFLICT (user_id) DO NOTHING`)
    })

    /** `GET /provably-fair/client-seed`. */
    const state = Effect.fn("ProvablyFair.state")(function*(userId: UserId) {
      yield* ensure(userId)
      return (yield* singleOf(StateRow, sql`
        SELECT client_seed, nonce, next_server_seed_hash FROM fairness_seeds WHERE user_id = ${userId}`)) satisfies FairnessState
    })

    /** `PUT /provably-fair/client-seed`: 1 to 64 characters of [A-Za-z0-9_-]; nonce and commitment stay. */
    const setClientSeed = Effect.fn("ProvablyFair.setClientSeed")(function*(userId: UserId, seed: string) {
      if (!CLIENT_SEED_PATTERN.test(seed)) return yield* new InvalidClientSeed()
      yield* ensure(userId)
      yield* forget(userId)
      return (yield* singleOf(StateRow, sql`
        UPDATE fairness_seeds SET client_seed = ${seed}, updated_at = ${yield* now} WHERE user_id = ${userId}
        RETURNING client_seed, nonce, next_server_seed_hash`)) satisfies FairnessState
    })

    /**
     * What `take` found of the user's fairness state. Every user has one from sign-up (`ensure`), so a
     * roll never makes a seed and uses it in the same request: without one, the operation fails.
     */
    const committed = <A, E>(userId: UserId, take: Effect.Effect<A | undefined, E>) =>
      Effect.flatMap(take, (taken) =>
        taken !== undefined ? Effect.succeed(taken) : Effect.dieMessage(`User ${userId} has no committed server seed`))

    /**
     * Inside the caller's transaction: the user's committed seed with the next nonce, for one roll;
     * a fresh seed is committed in its place. The state row stays locked until the caller commits,
     * so concurrent rolls of one user queue here and each gets its own seed and nonce.
     */
    const takeCommittedRoll = Effect.fn("ProvablyFair.takeCommittedRoll")(function*(userId: UserId) {
      yield* forget(userId)
      const next = yield* newServerSeed
      const at = yield* now
      const roll: CommittedRoll = yield* committed(userId, firstOf(RollRow, sql`
        WITH used AS (
          SELECT user_id, next_server_seed, next_server_seed_hash FROM fairness_seeds WHERE user_id = ${userId} FOR UPDATE
        )
        UPDATE fairness_seeds f
        SET nonce = f.nonce + 1, next_server_seed = ${next.serverSeed}, next_server_seed_hash = ${next.serverSeedHash},
            updated_at = ${at}
        FROM used WHERE f.user_id = used.user_id
        RETURNING used.next_server_seed AS server_seed, used.next_server_seed_hash AS server_seed_hash, f.client_seed,
                  f.nonce, f.next_server_seed_hash`))
      return roll
    })

    /** The state of the user's next roll: remembered, or read (`known`). */
    const nextRoll = Effect.fnUntraced(function*(userId: UserId) {
      const remembered = known.get(userId)
      if (remembered !== undefined) return remembered
      const read: NextRoll = yield* committed(userId, firstOf(NextRollRow, sql`
          SELECT client_seed, nonce, next_server_seed, next_server_seed_hash FROM fairness_seeds WHERE user_id = ${userId}`))
      keep(userId, read)
      return read
    })

    /** The state of the user's next roll when this instance knows it, without reading it (`known`). */
    const remembered = (userId: UserId): NextRoll | undefined => known.get(userId)

    /**
     * First step of a one-statement write that rolls with `expected`: `fair_state` locks the user's
     * row when it is still in that state, and is empty otherwise (the caller's other steps then write
     * nothing, and it reads the state again: `forget`).
     */
    const lockStep = (userId: UserId, expected: NextRoll) => sql`
      fair_state AS (
        SELECT user_id FROM fairness_seeds
        WHERE user_id = ${userId} AND nonce = ${expected.nonce} AND client_seed = ${expected.clientSeed}
          AND next_server_seed_hash = ${expected.nextServerSeedHash}
        FOR UPDATE
      )`

    /** A later step of that write, when `onlyIf` holds: `nonces` nonces used, `next` committed. */
    const rotateStep = (userId: UserId, nonces: number, next: ServerSeed, at: Date, onlyIf: Statement.Fragment) => sql`
      fair_rotated AS (
        UPDATE fairness_seeds SET nonce = nonce + ${nonces}, next_server_seed = ${next.serverSeed},
                                  next_server_seed_hash = ${next.serverSeedHash}, updated_at = ${at}
        WHERE user_id = ${userId} AND ${onlyIf}
        RETURNING user_id
      )`

    /** After such a write committed: the user's state is known without reading it. */
    const rolled = (userId: UserId, used: NextRoll, nonces: number, next: ServerSeed) =>
      Effect.sync(() =>
        keep(userId, {
          clientSeed: used.clientSeed,
          nonce: used.nonce + nonces,
          nextServerSeed: next.serverSeed,
          nextServerSeedHash: next.serverSeedHash
        })
      )

    return {
      newServerSeed,
      ensure,
      state,
      setClientSeed,
      takeCommittedRoll,
      nextRoll,
      remembered,
      lockStep,
      rotateStep,
      rolled,
      forget
    } as const
  })
}) {}
