/**
 * The API reference (docs/rules.md#api-reference) without a browser: the page asks for nothing but its
 * script from this origin under its policy, and carries the same document as /api/docs-json; the script is
 * answered in front of the API with its type, a year's cache, gzip and its ETag (test/e2e/ApiReference.test.ts
 * has it rendered in Chromium).
 */
import { expect, layer } from "@effect/vitest"
import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { gunzipSync } from "node:zlib"
import { apiReferenceScript, referenceScript } from "../../src/http/platform/ApiReference"
import { makeTestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

/** Whatever is not the script reaches the API behind it (here: a marker). */
const api: HttpApp.Default = Effect.succeed(HttpServerResponse.unsafeJson({ api: true }, { status: 404 }))
const handler = HttpApp.toWebHandler(apiReferenceScript(api))

layer(TestDatabase)("the API reference", (it) => {
  it.scoped("the page: the document, Scalar's configuration and the script of this origin, under a policy of this origin", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const page = yield* client.get("/api/docs")
      expect(page.status).toBe(200)
      expect(page.headers.get("content-security-policy")).toBe([
        "default-src 'self'",
        "script-src 'self' 'wasm-unsafe-eval'",
        "style-src 'self' 'unsafe-inline'",
        "font-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self' http://localhost:3000",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'"
      ].join("; "))
      const html = page.body as string
      const script = yield* referenceScript
      expect([...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((match) => match[1])).toEqual(["/favicon.svg", script.path])
      // No inline script: the document is a JSON block, the configuration an attribute of it.
      const block = /<script id="api-reference" type="application\/json" data-configuration="([^"]*)">([^]*?)<\/script>/.exec(html)!
      expect(JSON.parse(block[1]!.replaceAll("&quot;", "\""))).toEqual({ withDefaultFonts: false, telemetry: false, showToolbar: "never" })
      expect(JSON.parse(block[2]!)).toEqual((yield* client.get("/api/docs-json")).body)
      expect(html.match(/<script\b/g)).toHaveLength(2)
    }))

  it.effect("the script: JavaScript, cached for a year under its hash, gzipped, revalidated by its ETag", () =>
    Effect.gen(function*() {
      const script = yield* referenceScript
      expect(script.path).toMatch(/^\/assets\/scalar-api-reference-[\w-]{12}\.js$/)
      const answer = yield* Effect.promise(() => handler(new Request(`http://localhost${script.path}`, { headers: { "accept-encoding": "gzip" } })))
      expect(answer.status).toBe(200)
      expect(answer.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
      expect(answer.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
      expect(answer.headers.get("content-encoding")).toBe("gzip")
      const body = gunzipSync(Buffer.from(yield* Effect.promise(() => answer.arrayBuffer()))).toString()
      expect(body).toContain("@scalar/api-reference@1.39.3")
      expect(body).not.toContain("sourceMappingURL")
      const again = yield* Effect.promise(() =>
        handler(new Request(`http://localhost${script.path}`, { headers: { "if-none-match": answer.headers.get("etag")! } }))
      )
      expect(again.status).toBe(304)
      for (const [path, method] of [["/assets/scalar-api-reference-AAAAAAAAAAAA.js", "GET"], [script.path, "POST"]] as const) {
        const other = yield* Effect.promise(() => handler(new Request(`http://localhost${path}`, { method })))
        expect(yield* Effect.promise(() => other.json())).toEqual({ api: true })
      }
    }))
})
