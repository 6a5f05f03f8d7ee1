/**
 * The security of the endpoints that need a signed-in user (docs/rules.md#sessions): the `sessionId`
 * cookie or `Authorization: Bearer <session id>`, and `CurrentUser`, which the middleware provides to
 * handlers. The middleware itself is in AuthenticationLive.ts.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Schema } from "effect"
import type { Session } from "../../schema/identity/Session"
import type { SignedInUser } from "../../schema/identity/User"
import * as HttpError from "../platform/HttpErrors"

export class CurrentUser extends Context.Tag("app/CurrentUser")<CurrentUser, {
  readonly user: SignedInUser
  readonly session: Session
}>() {}

// HttpApi tries the schemes in this order. The bearer scheme goes first because its credential needs no
// decoding (a cookie scheme's decode fails, building an error, when the request has no cookie), and its
// handler reads either anyway (credentialOf), so the second runs only after the first refused.
const sessionSecurity = {
  sessionBearer: HttpApiSecurity.bearer,
  sessionCookie: HttpApiSecurity.apiKey({ in: "cookie", key: "sessionId" })
}

/**
 * Endpoints of a signed-in user: 401 without a session or from another device (docs/rules.md#device-binding),
 * 403 `Account banned` (docs/rules.md#bans), 403 `Cross-site request refused` (docs/rules.md#cross-site-requests).
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("app/Authentication", {
  provides: CurrentUser,
  failure: Schema.Union(
    HttpError.Unauthenticated,
    HttpError.DeviceMismatch,
    HttpError.CrossSiteRequest,
    HttpError.AccountBanned,
    HttpError.ServiceUnavailable
  ),
  security: sessionSecurity
}) {}

/**
 * Administrator-only endpoints (docs/rules.md#admin-roles): a session of an ADMIN user, refused as by
 * Authentication, and with 403 `Forbidden` for another role.
 */
export class AdminAuthentication extends HttpApiMiddleware.Tag<AdminAuthentication>()("app/AdminAuthentication", {
  provides: CurrentUser,
  failure: Schema.Union(
    HttpError.Unauthenticated,
    HttpError.DeviceMismatch,
    HttpError.CrossSiteRequest,
    HttpError.Forbidden,
    HttpError.AccountBanned,
    HttpError.ServiceUnavailable
  ),
  security: sessionSecurity
}) {}

