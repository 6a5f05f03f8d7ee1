/**
 * A request's session read and slid (`Sessions.slide`) as soon as the rate limiter knows it will be validated, so
 * that this store command and the rate limits' leave together: one round trip to the store before the handler
 * instead of two. The rate limiter sends it (and learns the session's owner from its answer when it does not know
 * it); the authentication validates what it found. Sent from the request's own fiber and answered when awaited, so
 * no fiber is forked for it (docs/decisions.md "The session's read leaves with the rate limits'"). Only for endpoints
 * that authenticate, and only a credential the authentication will look at (never a cookie sent by another site,
 * which it refuses unread). Kept in the request's notes until the authentication takes it. Taking it matters for
 * memory: Node keeps a connection's last request until the connection's next one, and whatever the notes hold stays
 * with it; a connection idle across a young collection carried it into the old generation (docs/decisions.md "What
 * outlives a request").
 */
import type { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import type { ServiceUnavailable } from "../../schema/platform/Errors"
import type { Sessions, SessionRead } from "../../services/identity/Sessions"
import { deviceIdOf } from "../platform/ClientInfo"
import { notesIfAny, notesOf } from "../platform/RequestNotes"

type Slid = Effect.Effect<SessionRead, ServiceUnavailable>

/** Sends the slide of `sessionId` for `request`; its answer, to wait for (once or more). */
export const startSessionReadAhead = (
  sessions: Sessions,
  request: HttpServerRequest.HttpServerRequest,
  sessionId: string
): Effect.Effect<Slid> =>
  Effect.map(sessions.slide(sessionId, deviceIdOf(request)), (slid) => {
    notesOf(request).sessionReadAhead = { sessionId, slid }
    return slid
  })

/** The slide started for this request's `sessionId`, if one was; it is forgotten here once taken. */
export const takeSessionReadAhead = (request: HttpServerRequest.HttpServerRequest, sessionId: string): Slid | undefined => {
  const notes = notesIfAny(request)
  const ahead = notes?.sessionReadAhead
  if (notes === undefined || ahead === undefined) return undefined
  notes.sessionReadAhead = undefined
  return ahead.sessionId === sessionId ? ahead.slid : undefined
}
