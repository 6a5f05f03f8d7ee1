/**
 * The interactive API reference at /api/docs (docs/rules.md#api-reference): Scalar's API reference,
 * everything it needs served by this service, so the page works offline and asks no other site for
 * anything. The browser bundle is the one @effect/platform ships (Scalar 1.39.3, what its
 * HttpApiScalar.layer writes inline into the page): here it is served as a file of its own,
 * `/assets/scalar-api-reference-<hash>.js`, cached for a year under its content's hash and kept
 * gzipped, in front of the API as the console's files are, so outside the rate limits. It is read
 * once, on the first request that needs it (not at start: 3 MB).
 *
 * The page itself is the OpenAPI document (the same as /api/docs-json) in a JSON block and the
 * script tag: no inline script, so its Content-Security-Policy allows scripts, fonts and connections
 * to this origin only. Styles also allow 'unsafe-inline': Scalar writes its style sheets and style
 * attributes from its script. Scalar's configuration turns off its web fonts (from fonts.scalar.com:
 * the system's fonts instead), its usage analytics (api.scalar.com) and its localhost-only developer
 * toolbar (whose "Share" uploads the document to api.scalar.com).
 */
import { type HttpApp, HttpApi, HttpApiBuilder, HttpServerRequest, HttpServerResponse, OpenApi } from "@effect/platform"
import { type Context, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { gzip } from "node:zlib"
import { type Asset, respond } from "./WebConsole"

const SCRIPT_PREFIX = "/assets/scalar-api-reference-"

/** Scalar's configuration (its `data-configuration`). */
const SCALAR_CONFIGURATION = {
  withDefaultFonts: false,
  telemetry: false,
  showToolbar: "never"
} as const

interface ReferenceScript extends Asset {
  readonly path: string
}

/**
 * The bundle from the module @effect/platform keeps it in (not among its exports, so by its file);
 * jsDelivr's source map comment goes (that map is not here).
 */
const loadScript = async (): Promise<ReferenceScript> => {
  const platform = dirname(createRequire(import.meta.url).resolve("@effect/platform/package.json"))
  const module = await import(pathToFileURL(join(platform, "dist/esm/internal/httpApiScalar.js")).href)
  if (typeof module.javascript !== "string") throw new Error("@effect/platform no longer ships Scalar's bundle")
  const source = (module.javascript as string).replace(/\n\/\/# sourceMappingURL=\S*\s*$/, "\n")
  const body = new TextEncoder().encode(source)
  const hash = createHash("sha256").update(body).digest("base64url")
  return {
    path: `${SCRIPT_PREFIX}${hash.slice(0, 12)}.js`,
    body,
    gzipped: new Uint8Array(await promisify(gzip)(body)),
    contentType: "text/javascript; charset=utf-8",
    etag: `"${hash.slice(0, 22)}"`,
    cacheControl: "public, max-age=31536000, immutable"
  }
}

let loading: Promise<ReferenceScript> | undefined

/** The script, read on first use. */
export const referenceScript: Effect.Effect<ReferenceScript> = Effect.promise(() => (loading ??= loadScript()))

/** In front of the API: GET and HEAD of the reference's script; everything else passes on. */
export const apiReferenceScript = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    if ((request.method !== "GET" && request.method !== "HEAD") || !request.url.startsWith(SCRIPT_PREFIX)) return app
    const query = request.url.indexOf("?")
    const pathname = query === -1 ? request.url : request.url.slice(0, query)
    return Effect.flatMap(referenceScript, (script) => pathname === script.path ? Effect.succeed(respond(request, script)) : app)
  })

/** The page's policy; `connect-src` also names the public address (the document's server) when it is another origin. */
export const referenceContentSecurityPolicy = (publicUrl: string) => {
  const publicOrigin = URL.canParse(publicUrl) ? new URL(publicUrl).origin : "null"
  return [
    "default-src 'self'",
    "script-src 'self' 'wasm-unsafe-eval'",
    "style-src 'self' 'unsafe-inline'",
    "font-src 'self'",
    "img-src 'self' data:",
    publicOrigin === "null" ? "connect-src 'self'" : `connect-src 'self' ${publicOrigin}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

/** JSON inside a `<script type="application/json">`: no `<` that could end the block. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c")

export const referencePage = (spec: OpenApi.OpenAPISpec, scriptPath: string) =>
  `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>${escapeHtml(spec.info.title)}</title>${
    spec.info.description === undefined ? "" : `
    <meta name="description" content="${escapeHtml(spec.info.description)}">`
  }
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <link rel="icon" href="/favicon.svg" type="image/svg+xml">
  </head>
  <body>
    <script id="api-reference" type="application/json" data-configuration="${
    escapeHtml(JSON.stringify(SCALAR_CONFIGURATION))
  }">${scriptJson(spec)}</script>
    <script src="${escapeHtml(scriptPath)}"></script>
  </body>
</html>
`

/** The options of `apiReferenceLayer`. */
interface ApiReferenceOptions {
  readonly path: `/${string}`
  readonly publicUrl: string
}

/** `apiReferenceLayer`'s route, added to `router`. */
const addReferenceRoute = Effect.fnUntraced(function*(
  router: Context.Tag.Service<typeof HttpApiBuilder.Router>,
  options: ApiReferenceOptions
) {
  const { api } = yield* HttpApi.Api
  const spec = OpenApi.fromApi(api)
  const headers = {
    "content-security-policy": referenceContentSecurityPolicy(options.publicUrl),
    "referrer-policy": "same-origin"
  }
  let page: string | undefined
  yield* router.get(
    options.path,
    Effect.map(referenceScript, (script) =>
      HttpServerResponse.html(page ??= referencePage(spec, script.path)).pipe(HttpServerResponse.setHeaders(headers)))
  )
})

/** GET `path`: the reference page of the API in context, documented at `publicUrl`. */
export const apiReferenceLayer = (options: ApiReferenceOptions) =>
  HttpApiBuilder.Router.use((router) => addReferenceRoute(router, options)) satisfies Layer.Layer<
    never,
    never,
    HttpApi.Api
  >
