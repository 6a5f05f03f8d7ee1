/** What a request tells about its client: address (TRUST_PROXY decides about X-Forwarded-For), agent, device. */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { isIP } from "node:net"
import { AppConfig } from "../../layers/AppConfig"
import type { ClientInfo } from "../../schema/identity/Session"

/**
 * The client's address (docs/rules.md#client-address). Each proxy appends the address it received the request from to
 * X-Forwarded-For, so with `proxies` trusted proxies in front of the service the client is the entry
 * that many places from the right; everything left of it was written by the client and is ignored.
 * With fewer entries than proxies, the left-most (what the outermost proxy present saw). An entry
 * that is not an IP address, or no proxy trusted: the socket's address.
 */
export const clientIpOf = (request: HttpServerRequest.HttpServerRequest, proxies: number): string => {
  const socket = Option.getOrElse(request.remoteAddress, () => "unknown")
  if (proxies === 0) return socket
  const entries = (request.headers["x-forwarded-for"] ?? "").split(",").map((entry) => entry.trim()).filter((e) => e !== "")
  if (entries.length === 0) return socket
  const client = entries[Math.max(0, entries.length - proxies)]!
  return isIP(client) !== 0 ? client : socket
}

/** Who sent `request`: its address (behind `trustProxy` proxies), user agent and device id. */
export const clientOf = (request: HttpServerRequest.HttpServerRequest, trustProxy: number): ClientInfo => {
  const deviceId = request.headers["x-device-id"]?.trim()
  return {
    ip: clientIpOf(request, trustProxy),
    userAgent: request.headers["user-agent"] ?? "",
    deviceId: deviceId ? deviceId.slice(0, 200) : undefined
  }
}

export const currentClient: Effect.Effect<ClientInfo, never, HttpServerRequest.HttpServerRequest | AppConfig> = Effect
  .zipWith(HttpServerRequest.HttpServerRequest, AppConfig, (request, config) => clientOf(request, config.trustProxy))

/**
 * The session id a request presents and how: `Authorization: Bearer`, else the `sessionId` cookie
 * (docs/rules.md#sessions). The bearer goes first: a page on another site can make a browser send our
 * cookie, never an Authorization header, so only the cookie needs the cross-site check.
 */
export const credentialOf = (
  request: HttpServerRequest.HttpServerRequest
): { readonly sessionId: string; readonly via: "bearer" | "cookie" } | undefined => {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers["authorization"] ?? "")
  if (match !== null) return { sessionId: match[1]!, via: "bearer" }
  const cookie = request.cookies["sessionId"]
  return cookie ? { sessionId: cookie, via: "cookie" } : undefined
}

export const sessionIdOf = (request: HttpServerRequest.HttpServerRequest): string | undefined =>
  credentialOf(request)?.sessionId

const UNSAFE_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"])

/**
 * Whether a cookie-authenticated request may act (docs/rules.md#cross-site-requests): safe methods always; unsafe
 * ones only from our own origin, as the browser says in `Sec-Fetch-Site: same-origin` or `Origin` (PUBLIC_URL's
 * origin; outside production also the origin of the request's own Host, so http://127.0.0.1:3000 works beside
 * http://localhost:3000). SameSite=Lax does not stop a sibling host of the same site; this does.
 */
export const makeSameOriginCheck = (config: { readonly publicUrl: string; readonly production: boolean }) => {
  const ownOrigin = new URL(config.publicUrl).origin
  return (request: HttpServerRequest.HttpServerRequest): boolean => {
    if (!UNSAFE_METHODS.has(request.method)) return true
    if (request.headers["sec-fetch-site"] === "same-origin") return true
    const origin = request.headers["origin"]
    if (origin === undefined) return false
    if (origin === ownOrigin) return true
    const host = request.headers["host"]
    return !config.production && host !== undefined && (origin === `http://${host}` || origin === `https://${host}`)
  }
}
