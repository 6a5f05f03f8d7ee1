/**
 * The browser pages (`/` and the administration console under `/admin`): the files `npm run build`
 * writes to `dist/web` (Vite, from `web/`), read into memory once at start and served from there.
 * Only the names found in that folder are ever served, so no spelling of a path (`..`, encoded
 * slashes, long names) reaches the file system; everything else goes on to the API (a JSON 404 for an
 * unknown path). The pages call the public API with the session cookie, like any other client.
 *
 * Hashed assets (`/assets/<name>-<hash>.<ext>`) never change under their name and are cached for a
 * year; the HTML page and the other files are revalidated (ETag). Text files are also kept gzipped.
 * Every page answer carries a Content-Security-Policy that allows scripts, styles and connections to
 * this origin only (no inline script, no other site may frame the pages). The demo catalog's images
 * (`/images/demo/...`, src/http/platform/DemoImages.ts) are answered in front of the pages.
 */
import { type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { extname, join, relative, resolve, sep } from "node:path"
import { gzipSync } from "node:zlib"
import { demoImages } from "./DemoImages"

/** Where the build writes the pages, relative to the working directory (like DATA_DIR). */
const WEB_DIR = "dist/web"

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2"
}

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
  "x-frame-options": "DENY"
}

const IMMUTABLE = "public, max-age=31536000, immutable"
const REVALIDATE = "no-cache"

export interface Asset {
  readonly body: Uint8Array
  readonly gzipped: Uint8Array | undefined
  readonly contentType: string
  readonly etag: string
  readonly cacheControl: string
}

/** URL path -> file, e.g. `/assets/index-3f2a.js`. */
type WebAssets = ReadonlyMap<string, Asset>

const filesUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? filesUnder(path) : entry.isFile() ? [path] : []
  })

/** The built pages in `dir`, or undefined when there is no `index.html` (not built). */
export const loadWebAssets = (dir: string): WebAssets | undefined => {
  const root = resolve(dir)
  if (!existsSync(join(root, "index.html"))) return undefined
  const assets = new Map<string, Asset>()
  for (const file of filesUnder(root)) {
    const contentType = CONTENT_TYPES[extname(file).toLowerCase()]
    if (contentType === undefined) continue
    const body = new Uint8Array(readFileSync(file))
    const urlPath = `/${relative(root, file).split(sep).join("/")}`
    const compressible = /^(text\/|application\/json|image\/svg)/.test(contentType) && body.length > 1024
    assets.set(urlPath, {
      body,
      gzipped: compressible ? new Uint8Array(gzipSync(body)) : undefined,
      contentType,
      etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
      cacheControl: urlPath.startsWith("/assets/") ? IMMUTABLE : REVALIDATE
    })
  }
  return assets
}

/**
 * The console's own routes, all answered with the one page (the page shows the section): a section, or one
 * player's page (`/admin/users/<id>`), so that either can be reloaded, bookmarked and returned to after sign-in.
 */
const PAGE_PATH = /^\/(admin(\/[a-z-]{1,32}|\/users\/\d{1,19})?\/?)?$/

const assetFor = (assets: WebAssets, pathname: string): Asset | undefined =>
  PAGE_PATH.test(pathname) ? assets.get("/index.html") : pathname === "/index.html" ? undefined : assets.get(pathname)

/** A file's answer: its headers, a 304 for its ETag, gzipped when the client takes it. */
export const respond = (request: HttpServerRequest.HttpServerRequest, asset: Asset) => {
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    "cache-control": asset.cacheControl,
    etag: asset.etag
  }
  if (asset.gzipped !== undefined) headers["vary"] = "Accept-Encoding"
  if (request.headers["if-none-match"]?.split(",").some((tag) => tag.trim() === asset.etag)) {
    return HttpServerResponse.empty({ status: 304, headers })
  }
  const gzip = asset.gzipped !== undefined && /\bgzip\b/i.test(request.headers["accept-encoding"] ?? "")
  if (gzip) headers["content-encoding"] = "gzip"
  const body = gzip ? asset.gzipped! : asset.body
  return HttpServerResponse.uint8Array(request.method === "HEAD" ? new Uint8Array(0) : body, {
    contentType: asset.contentType,
    headers: request.method === "HEAD" ? { ...headers, "content-length": String(body.length) } : headers
  })
}

/** In front of the API: GET and HEAD of a built file or a console route; everything else passes on. */
export const webConsole = (assets: WebAssets) => <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    if (request.method !== "GET" && request.method !== "HEAD") return app
    const query = request.url.indexOf("?")
    const pathname = query === -1 ? request.url : request.url.slice(0, query)
    const asset = pathname.startsWith("/api/") ? undefined : assetFor(assets, pathname)
    return asset === undefined ? app : Effect.succeed(respond(request, asset))
  })

/**
 * The middleware for the pages built in WEB_DIR, behind the demo catalog's images (src/http/platform/DemoImages.ts,
 * built or not); without a build, the images and the API (and a warning).
 */
export const makeWebConsole: Effect.Effect<<E, R>(app: HttpApp.Default<E, R>) => HttpApp.Default<E, R>> = Effect
  .suspend(() => {
    const assets = loadWebAssets(WEB_DIR)
    const images = demoImages()
    return assets === undefined
      ? Effect.as(
        Effect.logWarning(`The web pages are not built (no ${WEB_DIR}/index.html): run npm run build`),
        images
      )
      : Effect.succeed(<E, R>(app: HttpApp.Default<E, R>) => images(webConsole(assets)(app)))
  })
