/**
 * Refusals of two-factor authentication (docs/rules.md#two-factor-authentication), all 400 but the
 * administrators' step-up without 2FA and an enrolment without a recent sign-in (403).
 */
import { Schema } from "effect"
import { message } from "../platform/Errors"

/** Setting up 2FA again while it is on (docs/rules.md#two-factor-setup). */
export class TwoFactorAlreadyEnabled extends Schema.TaggedError<TwoFactorAlreadyEnabled>()(
  "TwoFactorAlreadyEnabled",
  message("2FA already enabled")
) {}

/** Checking a code of a user without 2FA (docs/rules.md#two-factor-codes). */
export class TwoFactorNotEnabled extends Schema.TaggedError<TwoFactorNotEnabled>()(
  "TwoFactorNotEnabled",
  message("2FA not enabled")
) {}

/** Enabling with no pending secret: never generated, or older than 300 s (docs/rules.md#two-factor-setup). */
export class TwoFactorSetupExpired extends Schema.TaggedError<TwoFactorSetupExpired>()(
  "TwoFactorSetupExpired",
  message("Setup expired. Generate new QR code.")
) {}

/**
 * A wrong or missing code where one is needed (docs/rules.md#two-factor-codes); enabling says
 * `Invalid code` (docs/rules.md#two-factor-setup).
 */
export class InvalidTwoFactorCode extends Schema.TaggedError<InvalidTwoFactorCode>()(
  "InvalidTwoFactorCode",
  message("Invalid 2FA code")
) {}

/** In production, an administrator without 2FA attempting a money action (docs/rules.md#admin-step-up) (403). */
export class AdminTwoFactorNotEnabled extends Schema.TaggedError<AdminTwoFactorNotEnabled>()(
  "AdminTwoFactorNotEnabled",
  message("Administrators need 2FA enabled for money actions")
) {}

/**
 * A 2FA-protected action sent without a code: a withdrawal that needs one (docs/rules.md#withdrawal-2fa)
 * or an administrator's money action (docs/rules.md#admin-step-up). Its HTTP body is the one exception to
 * the error body: `{statusCode: 400, error: "2FA_REQUIRED", message}` (docs/rules.md#two-factor-required-error).
 */
export class TwoFactorRequired extends Schema.TaggedError<TwoFactorRequired>()(
  "TwoFactorRequired",
  message("2FA code required")
) {}

/**
 * Enabling 2FA (its setup, its backup codes) from a session whose sign-in is 10 minutes old or more
 * (docs/rules.md#two-factor-reauthentication): a stolen session must not enrol its thief's authenticator.
 * Its HTTP body carries a code, like 2FA_REQUIRED: `{statusCode: 403, error: "REAUTHENTICATION_REQUIRED", message}`.
 */
export class ReauthenticationRequired extends Schema.TaggedError<ReauthenticationRequired>()(
  "ReauthenticationRequired",
  message("Sign in again to change two-factor settings")
) {}
