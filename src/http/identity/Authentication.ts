/**
 * Session authentication for every endpoint that needs a signed-in user (docs/rules.md#sessions):
 * the `sessionId` cookie or `Authorization: Bearer <session id>`. Provides `CurrentUser`.
 *
 * A banned user is refused with 403 `Account banned`; a device mismatch with 401 `Device mismatch`
 * (event streams may come without a device id, docs/rules.md#device-binding). The first request of a user in a UTC day
 * records the day (docs/rules.md#user-activity). The user is known from the session (Sessions: read from the
 * database at most every 30 s); endpoints that show or change the user's row read it themselves.
 */
import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest } from "@effect/platform"
import { type Cause, Clock, Context, Effect, Exit, Layer, Schema } from "effect"
import { AppConfig } from "../../layers/AppConfig"
import { KeyValue } from "../../layers/stores/KeyValue"
import { Forbidden, type ServiceUnavailable, Unauthenticated } from "../../schema/platform/Errors"
import type { Session } from "../../schema/identity/Session"
import type { SignedInUser } from "../../schema/identity/User"
import { Sessions } from "../../services/identity/Sessions"
import { Users } from "../../services/identity/Users"
import { clientOf, sessionIdOf } from "../platform/ClientInfo"
import * as HttpError from "../platform/HttpErrors"
import { endpoint, makeResolveEndpoint } from "../platform/Routes"

export class CurrentUser extends Context.Tag("app/CurrentUser")<CurrentUser, {
  readonly user: SignedInUser
  readonly session: Session
}>() {}

// HttpApi tries the schemes in this order. The bearer scheme goes first because its credential needs no
// decoding (a cookie scheme's decode fails, building an error, when the request has no cookie), and its
// handler reads either anyway (sessionIdOf), so the second runs only after the first refused.
const sessionSecurity = {
  sessionBearer: HttpApiSecurity.bearer,
  sessionCookie: HttpApiSecurity.apiKey({ in: "cookie", key: "sessionId" })
}

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("app/Authentication", {
  provides: CurrentUser,
  failure: Schema.Union(HttpError.Unauthenticated, HttpError.Forbidden, HttpError.ServiceUnavailable),
  security: sessionSecurity
}) {}

/**
 * Administrator-only endpoints (docs/rules.md#admin-roles): a session of an ADMIN user; 401 without one, 403
 * `Forbidden` otherwise.
 */
export class AdminAuthentication extends HttpApiMiddleware.Tag<AdminAuthentication>()("app/AdminAuthentication", {
  provides: CurrentUser,
  failure: Schema.Union(HttpError.Unauthenticated, HttpError.Forbidden, HttpError.ServiceUnavailable),
  security: sessionSecurity
}) {}

/**
 * Activity is written at most once per user every 5 minutes (lastActiveAt). The throttle's key names the
 * UTC day, so the first request of each day is always recorded, even 5 minutes after one the day before.
 * Each instance also remembers the throttle keys it has seen set, so most requests skip the store.
 */
const ACTIVITY_THROTTLE_MS = 5 * 60_000
const THROTTLES_KEPT = 10_000

type Authenticated = Context.Tag.Service<CurrentUser>

const makeAuthenticate = Effect.gen(function*() {
  const sessions = yield* Sessions
  const users = yield* Users
  const kv = yield* KeyValue
  const config = yield* AppConfig
  const resolve = yield* makeResolveEndpoint
  /** Server-Sent Events endpoints: browsers' EventSource cannot send X-Device-Id. */
  const streams: ReadonlySet<string> = new Set([endpoint("realtime.stream"), endpoint("liveDrops.stream")])
  /** Activity throttle keys this instance knows are set in the store, and until when. */
  const throttledUntil = new Map<string, number>()

  const authenticate = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const id = sessionIdOf(request)
    if (id === undefined) return yield* new Unauthenticated()
    const client = clientOf(request, config.trustProxy)
    const stream = streams.has(resolve(request.method, request.url)?.name ?? "")
    const { account, session } = yield* sessions.validate(id, client, { stream })
    const user: SignedInUser = { id: session.userId, username: account.username, role: account.role }
    const now = yield* Clock.currentTimeMillis
    const throttle = `activity:${user.id}:${new Date(now).toISOString().slice(0, 10)}`
    if ((throttledUntil.get(throttle) ?? 0) <= now) {
      if (yield* kv.setIfAbsent(throttle, "1", ACTIVITY_THROTTLE_MS)) yield* users.recordActivity(user.id)
      if (throttledUntil.size >= THROTTLES_KEPT) throttledUntil.clear()
      throttledUntil.set(throttle, now + ACTIVITY_THROTTLE_MS)
    }
    return { user, session } satisfies Authenticated
  })

  // HttpApi tries the security schemes in turn until one succeeds; the second must not repeat the
  // first's work (or its audit entries), so it answers with the failure the first got for the same request.
  const failures = new WeakMap<object, Cause.Cause<Unauthenticated | Forbidden | ServiceUnavailable>>()
  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const failed = failures.get(request)
    if (failed !== undefined) return yield* Effect.failCause(failed)
    const exit = yield* Effect.exit(authenticate)
    if (Exit.isFailure(exit)) failures.set(request, exit.cause)
    return yield* exit
  })
})

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(makeAuthenticate, (once) => Authentication.of({ sessionCookie: () => once, sessionBearer: () => once }))
)

export const AdminAuthenticationLive = Layer.effect(
  AdminAuthentication,
  Effect.map(makeAuthenticate, (once) => {
    const admin = Effect.filterOrFail(once, ({ user }) => user.role === "ADMIN", () => new Forbidden())
    return AdminAuthentication.of({ sessionCookie: () => admin, sessionBearer: () => admin })
  })
)
