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

/** `group.endpoint`, as named in the HttpApi groups, e.g. `auth.verify2fa`. */
export type EndpointName = `${string}.${string}`

interface ResolvedEndpoint {
  readonly name: EndpointName
  /** The route's template, e.g. `/api/auth/sessions/:id`. */
  readonly path: string
}

export type ResolveEndpoint = (method: string, url: string) => ResolvedEndpoint | undefined

interface Route {
  readonly name: EndpointName
  readonly method: string
  readonly path: string
}

// Read on first use: modules the API itself imports (the security middleware) use this too.
let routes: ReadonlyArray<Route> | undefined
const allRoutes = (): ReadonlyArray<Route> =>
  routes ??= Object.entries(Api.groups).flatMap(([group, { endpoints }]) =>
    Object.entries(endpoints).map(([name, endpoint]) => ({
      name: `${group}.${name}` as const,
      method: endpoint.method,
      path: endpoint.path
    }))
  )

/** Fails at start-up when a rule names an endpoint the API does not have (a renamed endpoint). */
export const endpoint = (name: EndpointName): EndpointName => {
  if (!allRoutes().some((e) => e.name === name)) throw new Error(`Routes: the API has no endpoint ${name}`)
  return name
}

/** A resolver built with the router configuration in effect (the one the API's router is built with). */
export const makeResolveEndpoint: Effect.Effect<ResolveEndpoint> = Effect.map(
  FiberRef.get(HttpRouter.currentRouterConfig),
  (config) => {
    const router = FindMyWay.make<ResolvedEndpoint>(config)
    for (const { method, name, path } of allRoutes()) router.on(method, path as FindMyWay.PathInput, { name, path })
    return (method, url) => {
      // As the platform's router: HEAD is answered by the GET route.
      const found = router.find(method, url) ?? (method === "HEAD" ? router.find("GET", url) : undefined)
      return found?.handler
    }
  }
)
