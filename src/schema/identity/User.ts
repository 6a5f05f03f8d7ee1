/** Users (docs/rules.md#identity-and-sessions). */
import { Schema } from "effect"
import { message } from "../platform/Errors"
import { UserId } from "../platform/Ids"
import { isRecommendedSingleScript, lookKey, withoutIgnorables } from "./Confusables"

export const Role = Schema.Literal("USER", "ADMIN")
export type Role = typeof Role.Type

export class User extends Schema.Class<User>("User")({
  id: UserId,
  idpId: Schema.String,
  username: Schema.String,
  role: Role,
  balanceCents: Schema.BigInt,
  twoFactorEnabled: Schema.Boolean,
  bannedAt: Schema.NullOr(Schema.DateFromSelf),
  banReason: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf
}) {}

/** A signed-in user as requests know them: from their session (src/services/identity/Sessions.ts). */
export interface SignedInUser {
  readonly id: UserId
  readonly username: string
  readonly role: Role
}

/** The signed-in user who plays a game action, as the action needs them: a live drop shows their name. */
export type Player = Pick<SignedInUser, "id" | "username">

const USERNAME_MIN_LENGTH = 3
const USERNAME_MAX_LENGTH = 32

/** Names that would pass for the platform's own voice: never taken as they are, nor any name that looks like one. */
const RESERVED = new Set(
  ["admin", "administrator", "moderator", "mod", "support", "staff", "system", "official"].map(lookKey)
)

/**
 * Reserved (docs/rules.md#usernames): a name whose look (its skeleton with i, l, I and 1 one letter:
 * `lookKey`, src/schema/identity/Confusables.ts) is a reserved word's (`Admin`, `m0d`, `adrnin`, `ADMlN`,
 * `adm1n`, `аԁміп` in Cyrillic letters), and the fallback's form `user-<digits>`, also with look-alikes
 * of its digits (`user-l0` for `user-10`).
 */
const isReserved = (name: string): boolean => {
  const shape = lookKey(name)
  return RESERVED.has(shape) || /^user-[lo2-9]+$/.test(shape)
}

/**
 * The username a name from the identity provider becomes (docs/rules.md#usernames; reasons in docs/decisions.md
 * "Identity and sessions"): default-ignorable code points removed first (the combining grapheme joiner and
 * variation selectors are marks, which the next step keeps); NFKC-normalized; control, format (zero-width,
 * bidi) and unassigned characters removed;
 * white space turned into `_`; only letters, digits, combining marks (one per letter), `.`, `_` and
 * `-` kept; runs of `.`, `_`, `-` cut to their first and none at the ends; at most 32 characters.
 * Undefined when fewer than 3 remain, when the name mixes scripts (UTS #39 single-script: Latin with
 * Cyrillic, say; src/schema/identity/Confusables.ts), or when its script is none of UTS #39's recommended
 * ones (Lisu, Cherokee): no suffix could make such a name safe.
 */
export const usernameFromClaim = (claim: string): string | undefined => {
  const cleaned = withoutIgnorables(claim).normalize("NFKC")
    .replace(/\p{C}/gu, "")
    .trim()
    .replace(/\s+/gu, "_")
    .replace(/[^\p{L}\p{M}\p{N}._-]/gu, "")
    .replace(/(\p{M})\p{M}+/gu, "$1")
    .replace(/([._-])[._-]+/g, "$1")
  const trimmed = (text: string) => text.replace(/^[._-]+|[._-]+$/g, "")
  const name = trimmed(Array.from(trimmed(cleaned)).slice(0, USERNAME_MAX_LENGTH).join(""))
  return Array.from(name).length >= USERNAME_MIN_LENGTH && isRecommendedSingleScript(name) ? name : undefined
}

/**
 * The usernames to try for a new user, in order: the provider's name, then that name with the user's
 * id (when the name is taken, ignoring letter case, or reserved), then `user-<id>`.
 */
export const usernameCandidates = (claim: string | undefined, id: bigint): ReadonlyArray<string> => {
  const name = claim === undefined ? undefined : usernameFromClaim(claim)
  const fallback = `user-${id}`
  if (name === undefined) return [fallback]
  const suffix = `-${id}`
  const withId = Array.from(name).slice(0, USERNAME_MAX_LENGTH - suffix.length).join("").replace(/[._-]+$/, "") + suffix
  return isReserved(name) ? [withId, fallback] : [name, withId, fallback]
}

/** An administrator banning themself (docs/rules.md#bans) (400). */
export class CannotBanSelf extends Schema.TaggedError<CannotBanSelf>()("CannotBanSelf", message("You cannot ban yourself")) {}

/** A banned user signing in, or a request with a session of theirs (docs/rules.md#bans) (403). */
export class AccountBanned extends Schema.TaggedError<AccountBanned>()("AccountBanned", message("Account banned")) {}
