/** Sign-in through an OpenID Connect provider (docs/rules.md#sign-in). */
import { Schema } from "effect"

/** A callback that cannot complete a sign-in: unknown, replayed or forged state, an error response, a failed exchange. */
export class InvalidLoginCallback extends Schema.TaggedError<InvalidLoginCallback>()("InvalidLoginCallback", {
  message: Schema.optionalWith(Schema.String, { default: () => "Invalid login callback" })
}) {}

/** Where to send the browser to sign in, and the state its callback must carry back. */
export interface LoginStart {
  readonly authorizationUrl: string
  readonly state: string
}

/** Who signed in, from the validated ID token (and the UserInfo endpoint when the ID token names no one). */
export interface IdentityClaims {
  /** The `sub` claim. */
  readonly idpId: string
  /** `preferred_username`, else `nickname`, else `name`. */
  readonly username: string | undefined
}
