/** Sign-in, sessions and two-factor (docs/rules.md#identity-and-sessions, docs/rules.md#two-factor-authentication). */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { UserId } from "../../schema/platform/Ids"
import { Role } from "../../schema/identity/User"
import { Authentication } from "./Authentication"
import * as HttpError from "../platform/HttpErrors"
import { PlainString } from "../../schema/platform/Text"
import { documented } from "../platform/OpenApiDocs"

/** Public: the two steps of an OpenID Connect sign-in. */
export class IdpApi extends HttpApiGroup.make("idp")
  .annotate(OpenApi.Description, "Signing in through the OpenID Connect identity provider; public.")
  .add(
    HttpApiEndpoint.get("login", "/auth/idp/login").addSuccess(HttpApiSchema.Empty(302))
      .pipe(documented("Start signing in: redirects to the identity provider", "Redirects the browser to the OpenID " +
        "Connect provider's authorization endpoint (PKCE, state and nonce kept server-side)."))
  )
  .add(
    HttpApiEndpoint.get("callback", "/auth/idp/callback").addSuccess(HttpApiSchema.Empty(302))
      .addError(Schema.Union(HttpError.InvalidLoginCallback, HttpError.AccountBanned, HttpError.OperationInProgress))
      .pipe(documented(
        "The identity provider returns here: creates the session, sets the sessionId cookie, redirects",
        "Exchanges the authorization code, signs the user in (created on the first sign-in), sets the sessionId " +
          "cookie and redirects to LOGIN_REDIRECT_URL."
      ))
  )
{}

export const Me = Schema.Struct({
  id: UserId,
  username: Schema.String,
  idpId: Schema.String,
  role: Role,
  balanceCents: Schema.BigIntFromNumber,
  twoFactorEnabled: Schema.Boolean,
  createdAt: Schema.Date
})

/** A session as its owner's list shows it (`GET /auth/sessions`). */
export const SessionView = Schema.Struct({
  id: Schema.String,
  ip: Schema.String,
  userAgent: Schema.String,
  createdAt: Schema.Date,
  lastActivity: Schema.Date,
  isCurrent: Schema.Boolean
})

const Message = Schema.Struct({ message: Schema.String })

const TwoFactorCode = Schema.Struct({
  code: PlainString.pipe(
    Schema.nonEmptyString({ message: () => "is required" }),
    Schema.maxLength(64, { message: () => "must be at most 64 characters" })
  )
}).annotations({ parseOptions: { errors: "all" } })

/** The lock-out (docs/rules.md#two-factor-lockout), for every endpoint that checks a 2FA code. */
const LOCKOUT = "Wrong 2FA codes count per user across every check; the 5th within 15 minutes locks every " +
  "2FA-protected action for 15 minutes: 429 with Retry-After (audit 2FA_LOCKED, a SECURITY_ALERT notification)."

/** Enrolment needs a recent sign-in (docs/rules.md#two-factor-reauthentication). */
const REAUTHENTICATION = "Needs a session signed in less than 10 minutes ago: else 403 with error " +
  "REAUTHENTICATION_REQUIRED (sign in again), so a stolen session cannot enrol its own authenticator."

/** Everything here needs a session. */
export class AuthApi extends HttpApiGroup.make("auth")
  .annotate(OpenApi.Description, "The signed-in user, their sessions and two-factor authentication.")
  .add(
    HttpApiEndpoint.post("logout", "/auth/logout").addSuccess(Message)
      .pipe(documented("Sign out of this session", "Revokes the current session; its cookie and bearer id stop " +
        "working at once."))
  )
  .add(
    HttpApiEndpoint.get("me", "/auth/me").addSuccess(Me)
      .pipe(documented("The signed-in user", "The user behind the session: id, username, role, balance in cents and " +
        "whether two-factor is on."))
  )
  .add(
    HttpApiEndpoint.get("sessions", "/auth/sessions").addSuccess(Schema.Struct({ sessions: Schema.Array(SessionView) }))
      .pipe(documented("List my sessions", "Every active session of the user with its address, user agent and last " +
        "activity; `isCurrent` marks this one."))
  )
  .add(
    HttpApiEndpoint.del("revokeSession", "/auth/sessions/:id").setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(Message)
      .addError(HttpError.NotYourSession)
      .pipe(documented("Revoke one of my sessions", "Ends one of the user's sessions by its id."))
  )
  .add(
    HttpApiEndpoint.post("logoutAll", "/auth/logout-all")
      .addSuccess(Schema.Struct({ message: Schema.String, sessionsRevoked: Schema.Int }))
      .pipe(documented("Sign out everywhere", "Revokes every session of the user, this one included, and answers how " +
        "many ended."))
  )
  .add(
    HttpApiEndpoint.post("generate2fa", "/auth/2fa/generate")
      .addSuccess(Schema.Struct({ secret: Schema.String, qrCode: Schema.String, otpauthUrl: Schema.String }))
      .addError(Schema.Union(HttpError.TwoFactorAlreadyEnabled, HttpError.ReauthenticationRequired))
      .pipe(documented("Start enabling two-factor", "Generates a TOTP secret and its otpauth URL and QR code; " +
        "two-factor is on only after POST /auth/2fa/enable with a valid code. " + REAUTHENTICATION))
  )
  .add(
    HttpApiEndpoint.post("enable2fa", "/auth/2fa/enable").setPayload(TwoFactorCode)
      .addSuccess(Schema.Struct({ backupCodes: Schema.Array(Schema.String), message: Schema.String }))
      .addError(Schema.Union(
        HttpError.TwoFactorAlreadyEnabled,
        HttpError.TwoFactorSetupExpired,
        HttpError.InvalidTwoFactorCode,
        HttpError.ReauthenticationRequired
      ))
      .pipe(documented("Turn two-factor on", "Checks a code from the authenticator against the generated secret, " +
        "turns two-factor on and answers the one-time backup codes (shown once). " + REAUTHENTICATION))
  )
  .add(
    HttpApiEndpoint.post("verify2fa", "/auth/2fa/verify").setPayload(TwoFactorCode)
      .addSuccess(Schema.Struct({ valid: Schema.Boolean }))
      .addError(HttpError.TwoFactorNotEnabled)
      .pipe(documented("Check a two-factor code", LOCKOUT))
  )
  .add(
    HttpApiEndpoint.post("disable2fa", "/auth/2fa/disable").setPayload(TwoFactorCode).addSuccess(Message)
      .addError(Schema.Union(HttpError.TwoFactorNotEnabled, HttpError.InvalidTwoFactorCode))
      .pipe(documented("Turn two-factor off", LOCKOUT))
  )
  .middleware(Authentication)
{}
