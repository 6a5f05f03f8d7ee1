/**
 * Headers on every /api response: answers carry balances, sessions and secrets of one user, so no
 * browser or proxy may store them (`Cache-Control: no-store`), and a JSON body is never sniffed as
 * something else (`X-Content-Type-Options: nosniff`). The API reference pages may be cached. Once the
 * service is shutting down, `Connection: close` tells clients to take their next request elsewhere.
 * The rate limits' headers (RateLimit.ts) are noted for the request and set here too: one pre-response
 * handler for the API's headers, not one per middleware (each is a fiber-local update and a step per response).
 */
import { HttpApiBuilder, HttpApp, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Lifecycle } from "../../layers/Lifecycle"
import { Api } from "../Api"
import { notesIfAny, notesOf } from "./RequestNotes"

const CACHEABLE = new Set(["/api/docs", "/api/docs-json"])

/** Adds `headers` to the answer of `request` (an API request, which passes through ResponseHeadersLive). */
export const noteResponseHeaders = (request: HttpServerRequest.HttpServerRequest, headers: Record<string, string>): void => {
  notesOf(request).responseHeaders = headers
}

export const ResponseHeadersLive = HttpApiBuilder.middleware(
  Api,
  Effect.map(Lifecycle, (lifecycle) => {
    // One function for every request, not a closure per request: the platform keeps the pre-response handlers in an
    // Option in a fiber reference, and updating it compares the old and new Options with Equal, which gives a function
    // it meets for the first time a random hash kept in a global WeakMap. A closure per request was an entry per
    // request there until the next full collection (docs/decisions.md "What outlives a request").
    const setHeaders: HttpApp.PreResponseHandler = (request, response) =>
      Effect.map(lifecycle.draining, (draining) => {
        const queryAt = request.url.indexOf("?")
        const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt)
        const headers: Record<string, string> = {
          ...notesIfAny(request)?.responseHeaders,
          "x-content-type-options": "nosniff",
          ...(CACHEABLE.has(path) ? {} : { "cache-control": "no-store" }),
          ...(draining ? { connection: "close" } : {})
        }
        return HttpServerResponse.setHeaders(response, headers)
      })
    return (app) => Effect.zipRight(HttpApp.appendPreResponseHandler(setHeaders), app)
  })
)
