/**
 * Headers on every /api response: answers carry balances, sessions and secrets of one user, so no
 * browser or proxy may store them (`Cache-Control: no-store`), and a JSON body is never sniffed as
 * something else (`X-Content-Type-Options: nosniff`). The API reference pages may be cached.
 */
import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "./Api"

const CACHEABLE = new Set(["/api/docs", "/api/docs-json"])

export const ResponseHeadersLive = HttpApiBuilder.middleware(Api, (app) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const path = new URL(request.url, "http://localhost").pathname
    const headers: Record<string, string> = CACHEABLE.has(path)
      ? { "x-content-type-options": "nosniff" }
      : { "x-content-type-options": "nosniff", "cache-control": "no-store" }
    yield* HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))
    return yield* app
  }))
