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

/** The session id a request presents: the `sessionId` cookie, else `Authorization: Bearer` (docs/rules.md#sessions). */
export const sessionIdOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const cookie = request.cookies["sessionId"]
  if (cookie) return cookie
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers["authorization"] ?? "")
  return match?.[1]
}
