/**
 * A request's session read and slid (`Sessions.slide`) as soon as the rate limiter knows it will be validated, so
 * that this store command and the rate limits' leave together: one round trip to the store before the handler
 * instead of two. The rate limiter starts it (and learns the session's owner from it when it does not know it);
 * the authentication validates what it found. Only for endpoints that authenticate, and only a credential the
 * authentication will look at (never a cookie sent by another site, which it refuses unread). Kept by the
 * underlying request (`requestKey`), dropped with it.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Effect, Fiber } from "effect"
import type { ServiceUnavailable } from "../../schema/platform/Errors"
import type { Sessions, SessionRead } from "../../services/identity/Sessions"
import { deviceIdOf, requestKey } from "../platform/ClientInfo"

type Slid = Effect.Effect<SessionRead, ServiceUnavailable>

const started = new WeakMap<object, { readonly sessionId: string; readonly slid: Slid }>()

/** Starts the slide of `sessionId` for `request`; its outcome, to wait for. */
export const startSessionReadAhead = (
  sessions: Sessions,
  request: HttpServerRequest.HttpServerRequest,
  sessionId: string
): Effect.Effect<Slid> =>
  Effect.map(Effect.fork(sessions.slide(sessionId, deviceIdOf(request))), (fiber) => {
    const slid = Fiber.join(fiber)
    started.set(requestKey(request), { sessionId, slid })
    return slid
  })

/** The slide started for this request's `sessionId`, if one was. */
export const sessionReadAhead = (request: HttpServerRequest.HttpServerRequest, sessionId: string): Slid | undefined => {
  const ahead = started.get(requestKey(request))
  return ahead?.sessionId === sessionId ? ahead.slid : undefined
}
