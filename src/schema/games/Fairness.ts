/** Provably fair rolls (docs/rules.md#fairness). */
import { Schema } from "effect"
import { message } from "../platform/Errors"

/** A client seed that is not 1 to 64 characters of A-Z, a-z, 0-9, _ and - (docs/rules.md#client-seed) (400). */
export class InvalidClientSeed extends Schema.TaggedError<InvalidClientSeed>()(
  "InvalidClientSeed",
  message("Client seed must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -")
) {}

/**
 * What a verification answers about one roll (docs/rules.md#verification): the revealed server seed and
 * its committed hash, the client seed and nonce, the recorded roll and the roll recomputed from them.
 */
export const RollProof = {
  serverSeed: Schema.String,
  serverSeedHash: Schema.String,
  clientSeed: Schema.String,
  nonce: Schema.Int,
  roll: Schema.Int,
  calculatedRoll: Schema.Int
}

/**
 * What a user is shown of their fairness state (`GET`/`PUT /provably-fair/client-seed`): the next roll
 * uses `clientSeed`, nonce + 1 and the server seed whose SHA-256 is `nextServerSeedHash`.
 */
export const FairnessState = Schema.Struct({ clientSeed: Schema.String, nonce: Schema.Number, nextServerSeedHash: Schema.String })
export type FairnessState = typeof FairnessState.Type
