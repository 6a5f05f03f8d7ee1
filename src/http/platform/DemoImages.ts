/**
 * The demo catalog's images (docs/rules.md#demo-images): a small SVG card per demo item and case, drawn from
 * its name and rarity (a case takes the rarity of its rarest item), served at
 * `/images/demo/<items|cases>/<slug>.svg`. They are rendered once, at start, for the names of the demo
 * catalog only (src/services/games/DemoCatalog.ts) and served from memory in front of the API, as the
 * browser pages are: outside the API's rate limits (a page of cases shows a dozen images), and no other
 * path reaches this code (anything else goes on to the API: a JSON 404 for an unknown image).
 *
 * Every text drawn is escaped for XML. An SVG opened on its own is a document that could run script, so
 * each answer also carries a Content-Security-Policy that allows nothing (`default-src 'none'`, `sandbox`)
 * and `nosniff`. The paths of the first demo catalog (`/images/items/<slug>.png`, `/images/cases/<slug>.png`,
 * never served) redirect to these, so a database seeded before keeps no broken image and no stored
 * `imageUrl` is rewritten. Operators' own `imageUrl`s are theirs: nothing here reads or changes them.
 */
import { type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import type { Rarity } from "../../schema/games/Catalog"
import { demoCases, demoImagePath, demoItems, slugOf } from "../../services/games/DemoCatalog"

/** Each rarity's colour (the usual grades: grey, light blue, blue, purple, pink, red, gold). */
const RARITY_COLORS: Readonly<Record<Rarity, string>> = {
  CONSUMER: "#b0c3d9",
  INDUSTRIAL: "#5e98d9",
  MIL_SPEC: "#4b69ff",
  RESTRICTED: "#8847ff",
  CLASSIFIED: "#d32ce6",
  COVERT: "#eb4b4b",
  EXTRAORDINARY: "#e4ae39"
}

const RARITY_ORDER: ReadonlyArray<Rarity> = Object.keys(RARITY_COLORS) as Array<Rarity>

/** Text for XML content or a quoted attribute. */
export const escapeXml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&apos;" })[c]!)

/** Up to two initials: of the finish for a skin (`Pistol | Sand Dune` -> `SD`), else of the name's words. */
const initialsOf = (name: string): string => {
  const finish = name.includes("|") ? name.slice(name.indexOf("|") + 1) : name
  const words = finish.split(/\s+/).map((word) => /[\p{L}\p{N}]/u.exec(word)?.[0]).filter((c) => c !== undefined)
  return words.slice(0, 2).join("").toUpperCase() || "?"
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/** A 256x256 card: the rarity's colour as border and band, the initials, the name and the rarity below. */
export const demoImageSvg = (name: string, rarity: Rarity, kind: "item" | "case"): string => {
  const color = RARITY_COLORS[rarity]
  const label = `${kind === "case" ? "CASE · " : ""}${rarity.replace("_", "-")}`
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256" role="img">`,
    `<title>${escapeXml(name)}</title>`,
    `<rect x="4" y="4" width="248" height="248" rx="20" fill="#161a23" stroke="${color}" stroke-width="8"/>`,
    `<rect x="8" y="182" width="240" height="54" fill="${color}" fill-opacity="0.25"/>`,
    `<text x="128" y="138" text-anchor="middle" font-family="system-ui, sans-serif" font-size="84" font-weight="700" fill="${color}">${
      escapeXml(initialsOf(name))
    }</text>`,
    `<text x="128" y="206" text-anchor="middle" font-family="system-ui, sans-serif" font-size="17" fill="#ffffff">${
      escapeXml(clip(name, 26))
    }</text>`,
    `<text x="128" y="226" text-anchor="middle" font-family="system-ui, sans-serif" font-size="11" fill="#c8cdd8">${
      escapeXml(label)
    }</text>`,
    `</svg>`
  ].join("")
}

/** Nothing in the document may load or run: an SVG opened on its own is a page of this origin. */
export const SVG_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'; sandbox"
const LONG_CACHE = "public, max-age=31536000, immutable"

interface Image {
  readonly body: Uint8Array
  readonly etag: string
}

const imageOf = (svg: string): Image => {
  const body = new TextEncoder().encode(svg)
  return { body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"` }
}

/** Path -> image of every demo item and case; path -> new path for the first demo catalog's paths. */
export const makeDemoImages = () => {
  const images = new Map<string, Image>()
  const redirects = new Map<string, string>()
  const rarityOf = new Map(demoItems.map((item) => [item.name, item.rarity]))
  for (const item of demoItems) {
    const slug = slugOf(item.name)
    images.set(demoImagePath("items", slug), imageOf(demoImageSvg(item.name, item.rarity, "item")))
    redirects.set(`/images/items/${slug}.png`, demoImagePath("items", slug))
  }
  for (const demo of demoCases) {
    const rarest = demo.items.map(([name]) => RARITY_ORDER.indexOf(rarityOf.get(name)!)).reduce((a, b) => Math.max(a, b), 0)
    images.set(demoImagePath("cases", demo.slug), imageOf(demoImageSvg(demo.name, RARITY_ORDER[rarest]!, "case")))
    redirects.set(`/images/cases/${demo.slug}.png`, demoImagePath("cases", demo.slug))
  }
  return { images: images as ReadonlyMap<string, Image>, redirects: redirects as ReadonlyMap<string, string> }
}

const respond = (request: HttpServerRequest.HttpServerRequest, image: Image) => {
  const headers: Record<string, string> = {
    "content-security-policy": SVG_CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "cache-control": LONG_CACHE,
    etag: image.etag
  }
  if (request.headers["if-none-match"]?.split(",").some((tag) => tag.trim() === image.etag)) {
    return HttpServerResponse.empty({ status: 304, headers })
  }
  return HttpServerResponse.uint8Array(request.method === "HEAD" ? new Uint8Array(0) : image.body, {
    contentType: "image/svg+xml; charset=utf-8",
    headers: request.method === "HEAD" ? { ...headers, "content-length": String(image.body.length) } : headers
  })
}

/** In front of the API: GET and HEAD of a demo image (or one of its first paths); everything else passes on. */
export const demoImages = ({ images, redirects } = makeDemoImages()) =>
<E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    if ((request.method !== "GET" && request.method !== "HEAD") || !request.url.startsWith("/images/")) return app
    const query = request.url.indexOf("?")
    const pathname = query === -1 ? request.url : request.url.slice(0, query)
    const image = images.get(pathname)
    if (image !== undefined) return Effect.succeed(respond(request, image))
    const moved = redirects.get(pathname)
    if (moved === undefined) return app
    return Effect.succeed(HttpServerResponse.empty({ status: 301, headers: { location: moved, "cache-control": LONG_CACHE } }))
  })
