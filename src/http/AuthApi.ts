/** Sign-in, sessions and two-factor (SPEC "Sessions and two-factor", D2, D10). */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { UserId } from "../schema/Ids"
import { Role } from "../schema/User"
import { Authentication } from "./Authentication"
import * as HttpError from "./HttpErrors"
import { PlainString } from "../schema/Text"

/** Public: the two steps of an OpenID Connect sign-in. */
export class IdpApi extends HttpApiGroup.make("idp")
  .add(
    HttpApiEndpoint.get("login", "/auth/idp/login")
      .addSuccess(HttpApiSchema.Empty(302))
      .annotate(OpenApi.Summary, "Start signing in: redirects to the identity provider")
  )
  .add(
    HttpApiEndpoint.get("callback", "/auth/idp/callback")
      .addSuccess(HttpApiSchema.Empty(302))
      .addError(HttpError.Forbidden)
      .addError(HttpError.OperationInProgress)
      .annotate(
        OpenApi.Summary,
        "The identity provider returns here: creates the session, sets the sessionId cookie, redirects"
      )
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

const SessionView = Schema.Struct({
  id: Schema.String,
  ip: Schema.String,
  userAgent: Schema.String,
  createdAt: Schema.Date,
  lastActivity: Schema.Date,
  isCurrent: Schema.Boolean
})

const Message = Schema.Struct({ message: Schema.String })

export const TwoFactorCode = Schema.Struct({
  code: PlainString.pipe(
    Schema.nonEmptyString({ message: () => "is required" }),
    Schema.maxLength(64, { message: () => "must be at most 64 characters" })
  )
}).annotations({ parseOptions: { errors: "all" } })

/** D18, for every endpoint that checks a 2FA code. */
export const LOCKOUT = "Wrong 2FA codes count per user across every check; the 5th within 15 minutes locks every " +
  "2FA-protected action for 15 minutes: 429 with Retry-After (audit 2FA_LOCKED, a SECURITY_ALERT notification)."

/** Everything here needs a session. */
export class AuthApi extends HttpApiGroup.make("auth")
  .add(HttpApiEndpoint.post("logout", "/auth/logout").addSuccess(Message))
  .add(HttpApiEndpoint.get("me", "/auth/me").addSuccess(Me))
  .add(
    HttpApiEndpoint.get("sessions", "/auth/sessions")
      .addSuccess(Schema.Struct({ sessions: Schema.Array(SessionView) }))
  )
  .add(
    HttpApiEndpoint.del("revokeSession", "/auth/sessions/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(Message)
  )
  .add(
    HttpApiEndpoint.post("logoutAll", "/auth/logout-all")
      .addSuccess(Schema.Struct({ message: Schema.String, sessionsRevoked: Schema.Int }))
  )
  .add(
    HttpApiEndpoint.post("generate2fa", "/auth/2fa/generate")
      .addSuccess(Schema.Struct({ secret: Schema.String, qrCode: Schema.String, otpauthUrl: Schema.String }))
  )
  .add(
    HttpApiEndpoint.post("enable2fa", "/auth/2fa/enable")
      .setPayload(TwoFactorCode)
      .addSuccess(Schema.Struct({ backupCodes: Schema.Array(Schema.String), message: Schema.String }))
  )
  .add(
    HttpApiEndpoint.post("verify2fa", "/auth/2fa/verify")
      .setPayload(TwoFactorCode)
      .addSuccess(Schema.Struct({ valid: Schema.Boolean }))
      .annotate(OpenApi.Description, LOCKOUT)
  )
  .add(
    HttpApiEndpoint.post("disable2fa", "/auth/2fa/disable")
      .setPayload(TwoFactorCode)
      .addSuccess(Message)
      .annotate(OpenApi.Description, LOCKOUT)
  )
  .addError(HttpError.Forbidden)
  .middleware(Authentication)
{}
