/**
 * Headers on every /api response: answers carry balances, sessions and secrets of one user, so no
 * browser or proxy may store them (`Cache-Control: no-store`), and a JSON body is never sniffed as
 * something else (`X-Content-Type-Options: nosniff`). The API reference pages may be cached. Once the
 * service is shutting down, `Connection: close` tells clients to take their next request elsewhere.
 */
import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Lifecycle } from "../../layers/Lifecycle"
import { Api } from "../Api"

const CACHEABLE = new Set(["/api/docs", "/api/docs-json"])

export const ResponseHeadersLive = HttpApiBuilder.middleware(
  Api,
  Effect.map(Lifecycle, (lifecycle) => (app) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = new URL(request.url, "http://localhost").pathname
      const headers: Record<string, string> = CACHEABLE.has(path)
        ? { "x-content-type-options": "nosniff" }
        : { "x-content-type-options": "nosniff", "cache-control": "no-store" }
      yield* HttpApp.appendPreResponseHandler((_, response) =>
        Effect.map(lifecycle.draining, (draining) =>
          HttpServerResponse.setHeaders(response, draining ? { ...headers, connection: "close" } : headers))
      )
      return yield* app
    }))
)
