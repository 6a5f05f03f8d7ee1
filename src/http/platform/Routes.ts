/**
 * Which endpoint a request is for, resolved the way the API's router resolves it: the same matcher
 * (find-my-way-ts) with the same options over the same routes. The router forgives spellings (a
 * trailing slash, `//`, upper case, percent-encoding, a `;suffix`), so rules that key on a path —
 * rate limits, body limits, the stream exemption of device binding, the redaction of logged URLs —
 * key on the endpoint this resolves instead, and no spelling escapes them (docs/rules.md#rate-limit-matching).
 */
import { HttpRouter } from "@effect/platform"
import { Effect, FiberRef } from "effect"
import * as FindMyWay from "find-my-way-ts"
import { Api } from "../Api"
import { AdminAuthentication, Authentication } from "../identity/Authentication"
import { notesByKey } from "./RequestNotes"

/** `group.endpoint`, as named in the HttpApi groups, e.g. `auth.verify2fa`. */
export type EndpointName = `${string}.${string}`

export interface ResolvedEndpoint {
  readonly name: EndpointName
  /** The route's template, e.g. `/api/auth/sessions/:id`. */
  readonly path: string
  /** Whether it validates a session (Authentication or AdminAuthentication). */
  readonly authenticated: boolean
}

export type ResolveEndpoint = (method: string, url: string) => ResolvedEndpoint | undefined

interface Route extends ResolvedEndpoint {
  readonly method: string
}

// Read on first use: modules the API itself imports (the security middleware) use this too.
let routes: ReadonlyArray<Route> | undefined
const allRoutes = (): ReadonlyArray<Route> =>
  routes ??= Object.entries(Api.groups).flatMap(([group, { endpoints, middlewares }]) =>
    Object.entries(endpoints).map(([name, endpoint]) => ({
      name: `${group}.${name}` as const,
      method: endpoint.method,
      path: endpoint.path,
      authenticated: [...middlewares, ...endpoint.middlewares].some((m) => m === Authentication || m === AdminAuthentication)
    }))
  )

/** Fails at start-up when a rule names an endpoint the API does not have (a renamed endpoint). */
export const endpoint = (name: EndpointName): EndpointName => {
  if (!allRoutes().some((e) => e.name === name)) throw new Error(`Routes: the API has no endpoint ${name}`)
  return name
}

/** What one HTTP request is, to the router; `source` is the underlying request, shared by its wrappers. */
interface RequestLine {
  readonly method: string
  readonly url: string
  readonly source: unknown
}

export interface Endpoints {
  /**
   * The endpoint of a request. The access log, rate limits, body limits and authentication each ask;
   * the router is searched once per request, by whichever asks first.
   */
  readonly of: (request: RequestLine) => ResolvedEndpoint | undefined
  /** The endpoint a method and URL would reach (for a URL that is not the request's own). */
  readonly resolve: ResolveEndpoint
}

type Router = FindMyWay.Router<ResolvedEndpoint>

/** One router per router configuration (in practice one): built on first use, shared by every middleware. */
const routers = new WeakMap<object, Router>()
/** The resolver of the router configuration in effect (the one the API's router is built with). */
export const makeEndpoints: Effect.Effect<Endpoints> = Effect.map(
  FiberRef.get(HttpRouter.currentRouterConfig),
  (config) => {
    let router = routers.get(config)
    if (router === undefined) {
      router = FindMyWay.make<ResolvedEndpoint>(config)
      for (const { authenticated, method, name, path } of allRoutes()) {
        router.on(method, path as FindMyWay.PathInput, { name, path, authenticated })
      }
      routers.set(config, router)
    }
    const found = router
    const resolve: ResolveEndpoint = (method, url) =>
      // As the platform's router: HEAD is answered by the GET route.
      (found.find(method, url) ?? (method === "HEAD" ? found.find("GET", url) : undefined))?.handler
    const of = ({ method, source, url }: RequestLine) => {
      // Found once per request, kept in its notes (the body limit wraps the request object; the wrapper keeps the source).
      const notes = typeof source === "object" && source !== null ? notesByKey(source) : undefined
      const known = notes?.endpoint
      if (known !== undefined && known.method === method && known.url === url) return known.endpoint
      const endpoint = resolve(method, url)
      if (notes !== undefined) notes.endpoint = { method, url, endpoint }
      return endpoint
    }
    return { of, resolve }
  }
)
