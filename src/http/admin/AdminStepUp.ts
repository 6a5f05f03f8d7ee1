/**
 * Administrators' step-up (docs/rules.md#admin-step-up) for every action that can move or create value or lock
 * people out: balance adjustments, deposit confirmation, withdrawal approval and rejection, item and case
 * creation and changes, raffle creation, bans, a live drop by hand, settling another user's sandbox charge.
 * An administrator with 2FA on sends a current code in `X-2FA-Code` (missing: 400 2FA_REQUIRED; wrong: 400
 * `Invalid 2FA code`, counted towards the lock-out like every code). In production an administrator without
 * 2FA is refused (403), so a stolen administrator session alone never moves money.
 */
import type { HttpApiEndpoint } from "@effect/platform"
import type { HttpMethod } from "@effect/platform/HttpMethod"
import { Effect, Schema } from "effect"
import { AppConfig } from "../../layers/AppConfig"
import { AdminTwoFactorNotEnabled, TwoFactorRequired } from "../../schema/identity/TwoFactor"
import { PlainString } from "../../schema/platform/Text"
import { TwoFactor } from "../../services/identity/TwoFactor"
import { CurrentUser } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"

/** The endpoint headers of a step-up action: the step-up code, documented and decoded with the request. */
const StepUpHeaders = Schema.Struct({
  "x-2fa-code": Schema.optional(
    PlainString.pipe(Schema.maxLength(64, { message: () => "must be at most 64 characters" }))
  )
}).annotations({ parseOptions: { errors: "all" } })

export const STEP_UP =
  "Administrators with 2FA on must send a current code in X-2FA-Code (missing: 400 2FA_REQUIRED; wrong: 400 " +
  "`Invalid 2FA code`, counted towards the 2FA lock-out); in production an administrator without 2FA gets 403."

/** A step-up action's endpoint: the step-up code header, and the step-up's refusals among its errors. */
export const withStepUp = <Name extends string, Method extends HttpMethod, Path, UrlParams, Payload, Headers, Success, Error, R, RE>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error, R, RE>
) =>
  endpoint
    .setHeaders(StepUpHeaders)
    .addError(HttpError.TwoFactorRequired)
    .addError(HttpError.InvalidTwoFactorCode)
    .addError(HttpError.TwoFactorNotEnabled)
    .addError(HttpError.AdminTwoFactorNotEnabled)

/** Built in a handler group: the check for the signed-in administrator and the code they sent. */
export const makeAdminStepUp = Effect.gen(function*() {
  const twoFactor = yield* TwoFactor
  const config = yield* AppConfig
  return Effect.fnUntraced(function*(headers: typeof StepUpHeaders.Type) {
    const { user } = yield* CurrentUser
    if (!(yield* twoFactor.isEnabled(user.id))) {
      if (config.production) return yield* new AdminTwoFactorNotEnabled()
      return
    }
    const code = headers["x-2fa-code"]?.trim() ?? ""
    if (code === "") return yield* new TwoFactorRequired()
    yield* twoFactor.require(user.id, code)
  })
})
