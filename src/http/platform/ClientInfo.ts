/** What a request tells about its client: address (TRUSTED_PROXIES and TRUST_PROXY decide about X-Forwarded-For), agent, device. */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { BlockList, isIP } from "node:net"
import { addCidr, AppConfig } from "../../layers/AppConfig"
import type { ClientInfo } from "../../schema/identity/Session"

/** The settings that decide who the client is (docs/rules.md#client-address). */
export interface ProxySettings {
  /** `TRUST_PROXY`: how many proxies append to X-Forwarded-For in front of the service. */
  readonly trustProxy: number
  /** `TRUSTED_PROXIES`: the CIDRs whose connections may speak for a client through X-Forwarded-For. */
  readonly trustedProxies: ReadonlyArray<string>
}

/** `::ffff:127.0.0.1` (an IPv4 peer on a dual-stack socket) is 127.0.0.1. */
const plainAddress = (address: string) => address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address

const matchers = new WeakMap<ReadonlyArray<string>, (address: string) => boolean>()

/**
 * Whether an address is in one of `cidrs` (TRUSTED_PROXIES, GATEWAY_ALLOWED_IPS), compared as addresses, not as
 * text: `2001:DB8::5` is `2001:db8:0::5`, `::ffff:1.2.3.4` is `1.2.3.4`. Built once per setting.
 */
export const matcherOf = (cidrs: ReadonlyArray<string>): (address: string) => boolean => {
  const cached = matchers.get(cidrs)
  if (cached !== undefined) return cached
  const list = new BlockList()
  for (const cidr of cidrs) addCidr(list, cidr)
  const check = (address: string) => {
    const plain = plainAddress(address)
    const family = isIP(plain)
    return family !== 0 && list.check(plain, family === 4 ? "ipv4" : "ipv6")
  }
  matchers.set(cidrs, check)
  return check
}

/**
 * The client's address (docs/rules.md#client-address). Each proxy appends the address it received the request
 * from to X-Forwarded-For. Starting from the socket's address, while the address at hand is a trusted proxy
 * and fewer than `trustProxy` hops were taken, the next entry from the right is taken: so a peer outside
 * TRUSTED_PROXIES (a client that reached the port directly) never chooses its address, and an entry
 * written by an untrusted hop ends the walk there. An entry that is not an IP address: the socket's address.
 */
export const clientIpOf = (request: HttpServerRequest.HttpServerRequest, settings: ProxySettings): string => {
  const socket = Option.match(request.remoteAddress, { onNone: () => "unknown", onSome: plainAddress })
  if (settings.trustProxy === 0) return socket
  const trusted = matcherOf(settings.trustedProxies)
  const entries = (request.headers["x-forwarded-for"] ?? "").split(",").map((entry) => entry.trim()).filter((e) => e !== "")
  let client = socket
  for (let hop = 0; hop < settings.trustProxy && entries.length > 0 && trusted(client); hop++) {
    const entry = entries.pop()!
    if (isIP(entry) === 0) return socket
    client = plainAddress(entry)
  }
  return client
}

/** The request's `X-Device-Id` (docs/rules.md#device-binding), trimmed, at most 200 characters. */
export const deviceIdOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const deviceId = request.headers["x-device-id"]?.trim()
  return deviceId ? deviceId.slice(0, 200) : undefined
}

/** Who sent `request`: its address (behind the trusted proxies), user agent and device id. */
export const clientOf = (request: HttpServerRequest.HttpServerRequest, settings: ProxySettings): ClientInfo => ({
  ip: clientIpOf(request, settings),
  userAgent: request.headers["user-agent"] ?? "",
  deviceId: deviceIdOf(request)
})

export const currentClient: Effect.Effect<ClientInfo, never, HttpServerRequest.HttpServerRequest | AppConfig> = Effect
  .zipWith(HttpServerRequest.HttpServerRequest, AppConfig, (request, config) => clientOf(request, config))

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
