/** Handlers of sign-in, sessions and two-factor. */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Duration, Effect } from "effect"
import { AppConfig } from "../../layers/AppConfig"
import { IdentityProvider } from "../../layers/IdentityProvider"
import { InvalidLoginCallback } from "../../schema/identity/Identity"
import { Sessions, SESSION_TTL_SECONDS } from "../../services/identity/Sessions"
import { TwoFactor } from "../../services/identity/TwoFactor"
import { Users } from "../../services/identity/Users"
import { Api } from "../Api"
import { Authentication, CurrentUser } from "./Authentication"
import { currentClient } from "../platform/ClientInfo"
import { buildOnly } from "../platform/RequestContext"

/** Binds a sign-in to the browser that started it (login CSRF): the state must come back in this cookie. */
const STATE_COOKIE = "oidcState"
const STATE_COOKIE_PATH = "/api/auth/idp"

/**
 * The identity provider's redirect back (`GET /auth/idp/callback`): the state checked against its cookie, the user
 * signed in, and a session made, in its cookie.
 */
const completeLogin = Effect.fnUntraced(function*(
  idp: IdentityProvider["Type"],
  users: Users,
  sessions: Sessions,
  config: AppConfig["Type"],
  secure: boolean
) {
  const request = yield* HttpServerRequest.HttpServerRequest
  const callbackUrl = new URL(request.url, config.publicUrl)
  if (request.cookies[STATE_COOKIE] !== callbackUrl.searchParams.get("state")) {
    return yield* new InvalidLoginCallback()
  }
  const claims = yield* idp.completeLogin(callbackUrl)
  const user = yield* users.signInWith(claims)
  const session = yield* sessions.create(user, yield* currentClient)
  return yield* HttpServerResponse.redirect(config.loginRedirectUrl, { status: 302 }).pipe(
    HttpServerResponse.expireCookie(STATE_COOKIE, { path: STATE_COOKIE_PATH }),
    HttpServerResponse.setCookie("sessionId", session.id, {
      httpOnly: true,
      secure,
      sameSite: "lax",
      path: "/",
      maxAge: Duration.seconds(SESSION_TTL_SECONDS)
    }),
    Effect.orDie
  )
})

export const IdpLive = HttpApiBuilder.group(Api, "idp", Effect.fnUntraced(function*(handlers) {
  const idp = yield* IdentityProvider
  const users = yield* Users
  const sessions = yield* Sessions
  const config = yield* AppConfig
  const secure = config.production

  return handlers
    .handle("login", () =>
      Effect.flatMap(idp.startLogin, ({ authorizationUrl, state }) =>
        HttpServerResponse.redirect(authorizationUrl, { status: 302 }).pipe(
          HttpServerResponse.setCookie(STATE_COOKIE, state, {
            httpOnly: true,
            secure,
            sameSite: "lax",
            path: STATE_COOKIE_PATH,
            maxAge: Duration.minutes(10)
          }),
          Effect.orDie
        )))
    .handle("callback", () => completeLogin(idp, users, sessions, config, secure))
})).pipe(buildOnly([AppConfig, Users, Sessions, IdentityProvider]))

const clearSessionCookie = HttpServerResponse.expireCookie("sessionId", { path: "/" })

export const AuthLive = HttpApiBuilder.group(Api, "auth", Effect.fnUntraced(function*(handlers) {
  const sessions = yield* Sessions
  const twoFactor = yield* TwoFactor

  return handlers
    .handle("logout", () =>
      Effect.flatMap(CurrentUser, ({ session, user }) =>
        sessions.revoke(user.id, session.id).pipe(
          Effect.ignore,
          Effect.flatMap(() =>
            HttpServerResponse.json({ message: "Logged out" }).pipe(Effect.map(clearSessionCookie), Effect.orDie)
          )
        )))
    // The user's row as it is now: the session's copy may be 30 s old.
    .handle("me", () =>
      Effect.flatMap(CurrentUser, ({ user: signedIn }) =>
        Effect.map(sessions.currentUser(signedIn.id), (user) => ({
          id: user.id,
          username: user.username,
          idpId: user.idpId,
          role: user.role,
          balanceCents: user.balanceCents,
          twoFactorEnabled: user.twoFactorEnabled,
          createdAt: user.createdAt
        }))))
    .handle("sessions", () =>
      Effect.flatMap(CurrentUser, ({ session: current, user }) =>
        Effect.map(sessions.list(user.id), (all) => ({
          sessions: all.map((s) => ({
            id: s.id,
            ip: s.ip,
            userAgent: s.userAgent,
            createdAt: s.createdAt,
            lastActivity: s.lastActivity,
            isCurrent: s.id === current.id
          }))
        }))))
    .handle("revokeSession", ({ path }) =>
      Effect.flatMap(CurrentUser, ({ user }) =>
        Effect.as(sessions.revoke(user.id, path.id), { message: "Session revoked" })))
    .handle("logoutAll", () =>
      Effect.flatMap(CurrentUser, ({ user }) =>
        Effect.flatMap(sessions.revokeAll(user.id), (sessionsRevoked) =>
          HttpServerResponse.json({ message: "All sessions revoked", sessionsRevoked }).pipe(
            Effect.map(clearSessionCookie),
            Effect.orDie
          ))))
    // A session is made only by a sign-in, so its createdAt is when it was signed in.
    .handle("generate2fa", () => Effect.flatMap(CurrentUser, ({ session, user }) => twoFactor.generate(user, session.createdAt)))
    .handle("enable2fa", ({ payload }) =>
      Effect.flatMap(CurrentUser, ({ session, user }) =>
        Effect.map(twoFactor.enable(user, payload.code, session.createdAt), ({ backupCodes }) => ({
          backupCodes,
          message: "2FA enabled. Keep these backup codes safe: they are shown only once."
        }))))
    .handle("verify2fa", ({ payload }) =>
      Effect.flatMap(CurrentUser, ({ user }) => Effect.map(twoFactor.verify(user, payload.code), (valid) => ({ valid }))))
    .handle("disable2fa", ({ payload }) =>
      Effect.flatMap(CurrentUser, ({ user }) =>
        Effect.as(twoFactor.disable(user, payload.code), { message: "2FA disabled" })))
})).pipe(buildOnly([Authentication, TwoFactor, Sessions]))
