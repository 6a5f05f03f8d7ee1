/** Provably fair rolls (docs/rules.md#fairness). */
import { Schema } from "effect"
import { message } from "../platform/Errors"

/** A client seed that is not 1 to 64 characters of A-Z, a-z, 0-9, _ and - (docs/rules.md#client-seed) (400). */
export class InvalidClientSeed extends Schema.TaggedError<InvalidClientSeed>()(
  "InvalidClientSeed",
  message("Client seed must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -")
) {}
