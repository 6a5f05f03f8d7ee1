/**
 * One log line per request, at Info: method, route template, URL, status, duration, request id and, for a signed-in
 * request, the user's id (docs/decisions.md "HTTP", docs/operations.md "Logs"); everything else a request logs is
 * at Debug or above Info. And the request's metrics (count by route template and status, latency). Every request has an id: the load balancer's
 * `X-Request-Id` when it is a plain token, else a new UUID; it is answered as `X-Request-Id`, and every
 * log line written while serving the request carries it and the trace id. Logs never
 * carry credentials (docs/rules.md#log-redaction): the id in `/api/auth/sessions/:id` is a session id, so that
 * path is logged as its template (in any spelling the router accepts, for any method); the values of query
 * parameters that carry OAuth codes, state or tokens (the sign-in callback's) are replaced.
 */
import { HttpApp, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Exit, FiberRef, HashMap, LogLevel, Option, Tracer } from "effect"
import { randomUUID } from "node:crypto"
import { httpRequest } from "../../layers/AppMetrics"
import { notesIfAny, notesOf } from "./RequestNotes"
import { endpoint, type EndpointName, type Endpoints, makeEndpoints, type ResolveEndpoint } from "./Routes"

/** Query parameters whose values are secrets. */
const SECRET_PARAMS = new Set(["code", "state", "session_state", "id_token", "access_token", "refresh_token", "token"])

/** Endpoints whose path carries a secret, with the method they are registered under. */
const secretPaths = (): ReadonlyArray<readonly [string, EndpointName]> => [["DELETE", endpoint("auth.revokeSession")]]

/** The request URL as it may be logged. */
const loggableUrl = (resolve: ResolveEndpoint, url: string): string => {
  const queryAt = url.indexOf("?")
  const path = queryAt === -1 ? url : url.slice(0, queryAt)
  const template = secretPaths()
    .map(([method, name]) => {
      const resolved = resolve(method, path)
      return resolved?.name === name ? resolved.path : undefined
    })
    .find((found) => found !== undefined)
  const loggedPath = template ?? path
  if (queryAt === -1) return loggedPath
  const query = url.slice(queryAt + 1).split("&").map((pair) => {
    const name = pair.split("=")[0]!
    return SECRET_PARAMS.has(decodedName(name).toLowerCase()) ? `${name}=[redacted]` : pair
  })
  return `${loggedPath}?${query.join("&")}`
}

const decodedName = (name: string) => {
  try {
    return decodeURIComponent(name.replace(/\+/g, " "))
  } catch {
    return name
  }
}

/**
 * Notes the signed-in user of `request`, for its access-log line (nothing outside the access log): in the request's
 * notes, not a service provided to the request, which would copy the request's context.
 */
export const noteRequestUser = (request: HttpServerRequest.HttpServerRequest, userId: bigint): void => {
  notesOf(request).userId = userId
}

/** An incoming request id is kept when it is a short token of safe characters (it is logged). */
const INCOMING_ID = /^[\w.:-]{1,128}$/

/**
 * Answers name their request's id. One function for every request (the id is in the request's notes), not a closure
 * per request: see ResponseHeaders.ts for why.
 */
const setRequestId: HttpApp.PreResponseHandler = (request, response) => {
  const requestId = notesIfAny(request)?.requestId
  return Effect.succeed(requestId === undefined ? response : HttpServerResponse.setHeader(response, "x-request-id", requestId))
}

/** `app` with its access log (see `makeAccessLog`). */
const logged = Effect.fnUntraced(function*<E, R>(endpoints: Endpoints, app: HttpApp.Default<E, R>) {
  const request = yield* HttpServerRequest.HttpServerRequest
  const started = yield* Clock.currentTimeNanos
  const incoming = request.headers["x-request-id"]
  const requestId = incoming !== undefined && INCOMING_ID.test(incoming) ? incoming : randomUUID()
  // The HTTP server span, when tracing is on (read as an option: a missing span is no error to build).
  const traceId = Option.getOrUndefined(Option.map(yield* Effect.serviceOption(Tracer.ParentSpan), (span) => span.traceId))
  notesOf(request).requestId = requestId
  yield* HttpApp.appendPreResponseHandler(setRequestId)
  // Every line logged for the request names it. Set for the rest of the fiber, not for a region (`annotateLogs`, ~25
  // runtime steps of an opening's ~630): the server and the tests' client run each request in a fiber of its own.
  yield* FiberRef.update(FiberRef.currentLogAnnotations, (current) =>
    HashMap.set(HashMap.remove(current, "traceId"), "requestId", requestId).pipe(
      (ids) => traceId === undefined ? ids : HashMap.set(ids, "traceId", traceId)
    ))
  const exit = yield* Effect.exit(app)
  const status = Exit.isSuccess(exit) ? exit.value.status : HttpServerError.causeResponseStripped(exit.cause)[0].status
  // Bounded labels: the endpoint's template; anything outside the API (docs, metrics, 404s) is "other".
  const route = endpoints.of(request)?.path ?? "other"
  const seconds = Number((yield* Clock.currentTimeNanos) - started) / 1e9
  yield* httpRequest(request.method, route, status, seconds)
  // The line is built only when it is written (the benchmarks run at LOG_LEVEL=Warn).
  if (LogLevel.greaterThanEqual(LogLevel.Info, yield* FiberRef.get(FiberRef.currentMinimumLogLevel))) {
    const userId = notesIfAny(request)?.userId
    yield* Effect.logInfo("Sent HTTP response").pipe(
      Effect.annotateLogs({
        "http.method": request.method,
        "http.route": route,
        "http.url": loggableUrl(endpoints.resolve, request.url),
        "http.status": status,
        "http.duration_ms": Math.round(seconds * 1e4) / 10,
        ...(userId === undefined ? {} : { userId: String(userId) })
      })
    )
  }
  return yield* exit
})

/** The access log, for `HttpApiBuilder.serve` (and the tests' in-process app). */
export const makeAccessLog: Effect.Effect<<E, R>(app: HttpApp.Default<E, R>) => HttpApp.Default<E, R>> = Effect.map(
  makeEndpoints,
  (endpoints) => <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> => logged(endpoints, app)
)
