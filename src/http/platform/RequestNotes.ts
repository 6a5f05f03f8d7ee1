/**
 * What the steps of one request learn for later ones, kept by the object that stands for the request (`requestKey`)
 * and dropped with it: the endpoint it is for (Routes), the headers the rate limiter decided for its answer
 * (ResponseHeaders), the session read started ahead (SessionReadAhead), its id and who made it (the access log). One WeakMap
 * entry per request holds them all: every entry of a WeakMap is work for the next full collection, and Node keeps a
 * connection's last request until the connection's next one (docs/decisions.md "What outlives a request").
 */
import type { HttpServerRequest } from "@effect/platform"
import type { Effect } from "effect"
import type { ServiceUnavailable } from "../../schema/platform/Errors"
import type { SessionRead } from "../../services/identity/Sessions"
import type { ResolvedEndpoint } from "./Routes"

export interface RequestNotes {
  /** The endpoint the router finds for this method and URL (Routes' `of`). */
  endpoint?: { readonly method: string; readonly url: string; readonly endpoint: ResolvedEndpoint | undefined } | undefined
  /** Headers for the answer, set by ResponseHeaders when it is sent. */
  responseHeaders?: Record<string, string> | undefined
  /** The session's read started by the rate limiter, until the authentication takes it. */
  sessionReadAhead?: {
    readonly sessionId: string
    readonly slid: Effect.Effect<SessionRead, ServiceUnavailable>
  } | undefined
  /** The signed-in user, for the access log's line. */
  userId?: bigint | undefined
  /** The request's id (X-Request-Id), given to its answer and its log lines by the access log. */
  requestId?: string | undefined
}

/**
 * The object that stands for one request while it is served, whatever wraps it (the body limit wraps the request
 * object): Node's incoming message.
 */
const requestKey = (request: HttpServerRequest.HttpServerRequest): object =>
  typeof request.source === "object" && request.source !== null ? request.source : request

const notes = new WeakMap<object, RequestNotes>()

/** The notes kept by `key` (a request's `requestKey`), made on first use. */
export const notesByKey = (key: object): RequestNotes => {
  let kept = notes.get(key)
  if (kept === undefined) {
    kept = {}
    notes.set(key, kept)
  }
  return kept
}

/** The notes of `request`, made on first use. */
export const notesOf = (request: HttpServerRequest.HttpServerRequest): RequestNotes => notesByKey(requestKey(request))

/** The notes of `request`, if a step made them. */
export const notesIfAny = (request: HttpServerRequest.HttpServerRequest): RequestNotes | undefined =>
  notes.get(requestKey(request))
