/**
 * The static pages' handler on a real Node server: content types, caching, compression, the security
 * headers, and paths that try to leave the built folder (sent raw, as an attacker would, not
 * normalised by a URL parser).
 */
import { HttpApp, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, request, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { CONTENT_SECURITY_POLICY, loadWebAssets, webConsole } from "../../src/http/platform/WebConsole"

const root = mkdtempSync(join(tmpdir(), "gp-web-"))
const web = join(root, "web")
const SCRIPT = `console.log(${JSON.stringify("x".repeat(4000))})\n`
const INDEX = "<!doctype html><title>pages</title>"

let server: Server
let port = 0

/** Every request that is not for a page reaches the API behind it (here: a marker). */
const api: HttpApp.Default = Effect.succeed(HttpServerResponse.unsafeJson({ api: true }, { status: 404 }))

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: Buffer
}

/** The path exactly as given, no normalisation. */
const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
  new Promise<Answer>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }))
    })
    req.on("error", reject)
    req.end()
  })

beforeAll(async () => {
  mkdirSync(join(web, "assets"), { recursive: true })
  writeFileSync(join(web, "index.html"), INDEX)
  writeFileSync(join(web, "favicon.svg"), "<svg xmlns=\"http://www.w3.org/2000/svg\"/>")
  writeFileSync(join(web, "assets", "index-Ab12Cd34.js"), SCRIPT)
  writeFileSync(join(web, "notes.env"), "SECRET=1")
  writeFileSync(join(root, "outside.html"), "<p>outside the built folder</p>")
  const assets = loadWebAssets(web)!
  const handler = await Effect.runPromise(NodeHttpServer.makeHandler(webConsole(assets)(api)))
  server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as { port: number }).port
})

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
  rmSync(root, { recursive: true, force: true })
})

describe("the pages", () => {
  it.each(["/", "/admin", "/admin/", "/admin/withdrawals", "/admin/withdrawals/", "/admin/users/42", "/?next=1"])(
    "%s: the page, revalidated, with the security headers",
    async (path) => {
      const answer = await get(path)
      expect(answer.status).toBe(200)
      expect(answer.body.toString()).toBe(INDEX)
      expect(answer.headers["content-type"]).toBe("text/html; charset=utf-8")
      expect(answer.headers["cache-control"]).toBe("no-cache")
      expect(answer.headers["content-security-policy"]).toBe(CONTENT_SECURITY_POLICY)
      expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'")
      expect(CONTENT_SECURITY_POLICY).not.toContain("unsafe-inline")
      expect(answer.headers["x-content-type-options"]).toBe("nosniff")
      expect(answer.headers["x-frame-options"]).toBe("DENY")
    }
  )

  it("a hashed asset: its content type, cached for a year, gzipped when asked, 304 on its ETag", async () => {
    const plain = await get("/assets/index-Ab12Cd34.js?v=1")
    expect(plain.status).toBe(200)
    expect(plain.headers["content-type"]).toBe("text/javascript; charset=utf-8")
    expect(plain.headers["cache-control"]).toBe("public, max-age=31536000, immutable")
    expect(plain.headers["content-encoding"]).toBeUndefined()
    expect(plain.body.toString()).toBe(SCRIPT)

    const gzipped = await get("/assets/index-Ab12Cd34.js", { "accept-encoding": "gzip, br" })
    expect(gzipped.headers["content-encoding"]).toBe("gzip")
    expect(gzipped.headers["vary"]).toBe("Accept-Encoding")
    expect(gunzipSync(gzipped.body).toString()).toBe(SCRIPT)
    expect(gzipped.body.length).toBeLessThan(SCRIPT.length / 10)

    const etag = String(plain.headers["etag"])
    const again = await get("/assets/index-Ab12Cd34.js", { "if-none-match": etag })
    expect(again.status).toBe(304)
    expect(again.body.length).toBe(0)

    const head = await get("/assets/index-Ab12Cd34.js", {}, "HEAD")
    expect(head.status).toBe(200)
    expect(head.headers["content-length"]).toBe(String(Buffer.byteLength(SCRIPT)))
    expect(head.body.length).toBe(0)
  })

  it("an image: its content type, revalidated", async () => {
    const answer = await get("/favicon.svg")
    expect(answer.status).toBe(200)
    expect(answer.headers["content-type"]).toBe("image/svg+xml")
    expect(answer.headers["cache-control"]).toBe("no-cache")
  })

  it.each([
    "/assets/../../outside.html",
    "/assets/..%2f..%2foutside.html",
    "/assets/%2e%2e/%2e%2e/outside.html",
    "/%2e%2e/outside.html",
    "/..%5coutside.html",
    "/admin/../../outside.html",
    "/admin/%2e%2e/%2e%2e/outside.html",
    "/assets%2findex-Ab12Cd34.js",
    "/assets/index-Ab12Cd34.js%00.html",
    "/assets/index-Ab12Cd34.js/",
    "//assets/index-Ab12Cd34.js",
    "/ASSETS/index-Ab12Cd34.js",
    "/index.html",
    "/notes.env",
    "/assets",
    "/assets/",
    `/assets/${"a".repeat(8000)}.js`,
    `/admin/${"a".repeat(33)}`,
    "/admin/withdrawals/x/y",
    "/admin/users/4x2",
    "/admin/users/42/deposits",
    `/admin/users/${"9".repeat(20)}`,
    "/api/docs"
  ])("%s: not a page; on to the API", async (path) => {
    const answer = await get(path)
    expect(answer.status).toBe(404)
    expect(JSON.parse(answer.body.toString())).toEqual({ api: true })
  })

  it("other methods go on to the API", async () => {
    expect((await get("/", {}, "POST")).body.toString()).toBe(JSON.stringify({ api: true }))
    expect((await get("/admin", {}, "DELETE")).body.toString()).toBe(JSON.stringify({ api: true }))
  })

  it("no build (no index.html): nothing to serve", () => {
    expect(loadWebAssets(join(root, "missing"))).toBeUndefined()
    expect(loadWebAssets(join(web, "assets"))).toBeUndefined()
  })
})
