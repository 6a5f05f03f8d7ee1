/** What a request tells about its client: address (TRUST_PROXY decides about X-Forwarded-For), agent, device. */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { AppConfig } from "../layers/AppConfig"
import type { ClientInfo } from "../schema/Session"

export const clientIpOf = (request: HttpServerRequest.HttpServerRequest, trustProxy: boolean): string => {
  if (trustProxy) {
    const forwarded = request.headers["x-forwarded-for"]?.split(",")[0]?.trim()
    if (forwarded) return forwarded
  }
  return Option.getOrElse(request.remoteAddress, () => "unknown")
}

export const currentClient: Effect.Effect<ClientInfo, never, HttpServerRequest.HttpServerRequest | AppConfig> = Effect
  .gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const config = yield* AppConfig
    const deviceId = request.headers["x-device-id"]?.trim()
    return {
      ip: clientIpOf(request, config.trustProxy),
      userAgent: request.headers["user-agent"] ?? "",
      deviceId: deviceId ? deviceId.slice(0, 200) : undefined
    }
  })

/** The session id a request presents: the `sessionId` cookie, else `Authorization: Bearer` (SPEC Authentication 2). */
export const sessionIdOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const cookie = request.cookies["sessionId"]
  if (cookie) return cookie
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers["authorization"] ?? "")
  return match?.[1]
}
