/**
 * Headers on every /api response: answers carry balances, sessions and secrets of one user, so no
 * browser or proxy may store them (`Cache-Control: no-store`), and a JSON body is never sniffed as
 * something else (`X-Content-Type-Options: nosniff`). The API reference pages may be cached. Once the
 * service is shutting down, `Connection: close` tells clients to take their next request elsewhere.
 * The rate limits' headers (RateLimit.ts) are noted for the request and set here too: one pre-response
 * handler for the API's headers, not one per middleware (each is a fiber-local update and a step per response).
 */
import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Lifecycle } from "../../layers/Lifecycle"
import { Api } from "../Api"
import { requestKey } from "./ClientInfo"

const CACHEABLE = new Set(["/api/docs", "/api/docs-json"])

/** Headers a middleware inside this one decided for a request's answer (by `requestKey`), read when it is sent. */
const noted = new WeakMap<object, Record<string, string>>()

/** Adds `headers` to the answer of `request` (an API request, which passes through ResponseHeadersLive). */
export const noteResponseHeaders = (request: HttpServerRequest.HttpServerRequest, headers: Record<string, string>): void => {
  noted.set(requestKey(request), headers)
}

export const ResponseHeadersLive = HttpApiBuilder.middleware(
  Api,
  Effect.map(Lifecycle, (lifecycle) => (app) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const queryAt = request.url.indexOf("?")
      const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt)
      const own: Record<string, string> = CACHEABLE.has(path)
        ? { "x-content-type-options": "nosniff" }
        : { "x-content-type-options": "nosniff", "cache-control": "no-store" }
      yield* HttpApp.appendPreResponseHandler((_, response) =>
        Effect.map(lifecycle.draining, (draining) => {
          const headers = { ...noted.get(requestKey(request)), ...own }
          return HttpServerResponse.setHeaders(response, draining ? { ...headers, connection: "close" } : headers)
        })
      )
      return yield* app
    }))
)
