/**
 * The demo catalog's images (docs/rules.md#demo-images) on a real Node server in front of a stand-in API:
 * every demo item and case has one, SVG with the headers an SVG needs, names escaped; the first demo
 * paths redirect; every other path reaches the API. test/DemoWalkthrough.test.ts fetches them from a
 * started service through the `imageUrl`s the API shows.
 */
import { HttpApp, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { createServer, request, type Server } from "node:http"
import { demoImages, demoImageSvg, SVG_CONTENT_SECURITY_POLICY } from "../../src/http/platform/DemoImages"
import { demoCases, demoImagePath, demoItems, slugOf } from "../../src/services/games/DemoCatalog"

let server: Server
let port = 0

const api: HttpApp.Default = Effect.succeed(HttpServerResponse.unsafeJson({ api: true }, { status: 404 }))

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
  new Promise<Answer>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }))
    })
    req.on("error", reject)
    req.end()
  })

beforeAll(async () => {
  const handler = await Effect.runPromise(NodeHttpServer.makeHandler(demoImages()(api)))
  server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as { port: number }).port
})

afterAll(() => new Promise((resolve) => server.close(resolve)))

const paths = [
  ...demoItems.map((item) => demoImagePath("items", slugOf(item.name))),
  ...demoCases.map((demo) => demoImagePath("cases", demo.slug))
]

describe("demo images", () => {
  it("one per demo item and case, each a distinct SVG with a long cache, a closed CSP and nosniff", async () => {
    expect(new Set(paths).size).toBe(demoItems.length + demoCases.length)
    const bodies = new Set<string>()
    for (const path of paths) {
      const answer = await get(path)
      expect(answer.status, path).toBe(200)
      expect(answer.headers["content-type"]).toBe("image/svg+xml; charset=utf-8")
      expect(answer.headers["cache-control"]).toBe("public, max-age=31536000, immutable")
      expect(answer.headers["content-security-policy"]).toBe(SVG_CONTENT_SECURITY_POLICY)
      expect(SVG_CONTENT_SECURITY_POLICY).toContain("default-src 'none'")
      expect(answer.headers["x-content-type-options"]).toBe("nosniff")
      expect(answer.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>[\s\S]*<\/svg>$/)
      expect(answer.body).not.toMatch(/<script|on[a-z]+=|href/i)
      bodies.add(answer.body)
    }
    expect(bodies.size).toBe(paths.length)
  })

  it("names the item and shows its rarity's colour", async () => {
    const answer = await get("/images/demo/items/knife-sapphire-doppler.svg")
    expect(answer.body).toContain("<title>Knife | Sapphire Doppler</title>")
    expect(answer.body).toContain("#e4ae39")
    expect(answer.body).toContain(">SD</text>")
  })

  it("escapes every text it draws", () => {
    const svg = demoImageSvg(`<script>alert("x")</script> & 'Co'`, "COVERT", "item")
    expect(svg).not.toContain("<script")
    expect(svg).not.toContain(`"x"`)
    expect(svg).toContain("<title>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &apos;Co&apos;</title>")
    // Only the markup of the card itself: every `<` opens one of its elements.
    expect(svg.match(/<(?!\/?(svg|title|rect|text)\b)/g)).toBeNull()
  })

  it("HEAD, and a revalidation by ETag", async () => {
    const path = paths[0]!
    const head = await get(path, {}, "HEAD")
    const full = await get(path)
    expect(head.status).toBe(200)
    expect(head.body).toBe("")
    expect(head.headers["content-length"]).toBe(String(Buffer.byteLength(full.body)))
    const again = await get(path, { "if-none-match": String(full.headers["etag"]) })
    expect(again.status).toBe(304)
  })

  it("the first demo catalog's paths (never served) redirect, so a database seeded before shows the images", async () => {
    const item = await get("/images/items/knife-fade.png")
    expect(item.status).toBe(301)
    expect(item.headers["location"]).toBe("/images/demo/items/knife-fade.svg")
    const kase = await get("/images/cases/starter.png?v=1")
    expect(kase.status).toBe(301)
    expect(kase.headers["location"]).toBe("/images/demo/cases/starter.svg")
  })

  it.each([
    "/images/demo/items/not-a-demo-item.svg",
    "/images/demo/items/KNIFE-FADE.svg",
    "/images/demo/items/knife-fade.svg/",
    "/images/demo/items/..%2Fknife-fade.svg",
    "/images/items/operator-own.png",
    "/api/images/demo/items/knife-fade.svg"
  ])("%s goes on to the API", async (path) => {
    const answer = await get(path)
    expect(answer.status).toBe(404)
    expect(JSON.parse(answer.body)).toEqual({ api: true })
  })

  it("only GET and HEAD", async () => {
    const answer = await get(paths[0]!, {}, "POST")
    expect(JSON.parse(answer.body)).toEqual({ api: true })
  })
})
