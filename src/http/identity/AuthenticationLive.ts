/**
 * Session authentication (the middleware behind the tags of Authentication.ts): validates the session
 * (Sessions), and provides `CurrentUser`.
 *
 * A cookie-authenticated request with an unsafe method from another origin is refused with 403 `Cross-site
 * request refused` (docs/rules.md#cross-site-requests), before the session is looked at.
 * A banned user is refused with 403 `Account banned`; a device mismatch with 401 `Device mismatch`
 * (event streams may come without a device id, docs/rules.md#device-binding). Each request notes the
 * user's activity (Activity, throttled, docs/rules.md#user-activity) and names the user in its access-log line
 * (AccessLog.ts). The user is known from
 * the session (Sessions: read from the database at most every 30 s); endpoints that show or change the
 * user's row read it themselves. Under JURISDICTION=BR the first request of a player's day consults the
 * self-exclusion registry (ResponsibleGaming.checkRegistryToday; never fails the request).
 */
import { HttpServerRequest } from "@effect/platform"
import { type Cause, Context, Effect, Exit, Layer } from "effect"
import { AppConfig } from "../../layers/AppConfig"
import { Forbidden, type ServiceUnavailable, Unauthenticated } from "../../schema/platform/Errors"
import { CrossSiteRequest, type DeviceMismatch } from "../../schema/identity/Session"
import type { AccountBanned, SignedInUser } from "../../schema/identity/User"
import { Sessions } from "../../services/identity/Sessions"
import { Activity } from "../../services/identity/Activity"
import { ResponsibleGaming } from "../../services/identity/ResponsibleGaming"
import { noteRequestUser } from "../platform/AccessLog"
import { clientOf, credentialOf, makeSameOriginCheck } from "../platform/ClientInfo"
import { endpoint, makeEndpoints } from "../platform/Routes"
import { takeSessionReadAhead } from "./SessionReadAhead"
import { AdminAuthentication, Authentication, CurrentUser } from "./Authentication"

type Authenticated = Context.Tag.Service<CurrentUser>

const makeAuthenticate = Effect.gen(function*() {
  const sessions = yield* Sessions
  const activity = yield* Activity
  const responsibleGaming = yield* ResponsibleGaming
  const config = yield* AppConfig
  const endpoints = yield* makeEndpoints
  /** Server-Sent Events endpoints: browsers' EventSource cannot send X-Device-Id. */
  const streams: ReadonlySet<string> = new Set([endpoint("realtime.stream"), endpoint("liveDrops.stream")])

  const sameOrigin = makeSameOriginCheck(config)

  const authenticate = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const credential = credentialOf(request)
    if (credential === undefined) return yield* new Unauthenticated()
    if (credential.via === "cookie" && !sameOrigin(request)) return yield* new CrossSiteRequest()
    const client = clientOf(request, config)
    const stream = streams.has(endpoints.of(request)?.name ?? "")
    const slid = takeSessionReadAhead(request, credential.sessionId)
    const { account, session } = yield* sessions.validate(credential.sessionId, client, { stream, slid })
    const user: SignedInUser = { id: session.userId, username: account.username, role: account.role }
    noteRequestUser(request, user.id)
    yield* activity.note(user.id)
    // Under BR, the first request of each day consults the self-exclusion registry (docs/responsible-gaming.md#registry).
    yield* responsibleGaming.checkRegistryToday(user.id)
    return { user, session } satisfies Authenticated
  })

  // HttpApi tries the security schemes in turn until one succeeds; the second must not repeat the
  // first's work (or its audit entries), so it answers with the failure the first got for the same request.
  const failures = new WeakMap<object, Cause.Cause<Unauthenticated | DeviceMismatch | CrossSiteRequest | AccountBanned | ServiceUnavailable>>()
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
