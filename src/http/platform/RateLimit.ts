/**
 * Rate limits (docs/rules.md#rate-limits) on every /api request, counted in fixed windows per signed-in user
 * (per client address otherwise, and always for the sign-in endpoints). Every response carries the
 * X-RateLimit headers of the tightest limit that applies; a request over any limit gets 429 with
 * Retry-After and does not reach the endpoint. Rules name endpoints, resolved as the router resolves
 * the request (src/http/platform/Routes.ts), so no spelling of a path escapes its limit (docs/rules.md#rate-limit-matching).
 */
import { HttpApiBuilder, type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Option } from "effect"
import { AppConfig, type RateLimit, type RateLimits } from "../../layers/AppConfig"
import { type RateCount, RateCounter } from "../../layers/stores/RateCounter"
import { rateLimitRejection } from "../../layers/AppMetrics"
import { UserLock } from "../../layers/stores/UserLock"
import { Sessions } from "../../services/identity/Sessions"
import { Api } from "../Api"
import { startSessionReadAhead } from "../identity/SessionReadAhead"
import { clientIpOf, credentialOf, makeSameOriginCheck } from "./ClientInfo"
import { noteResponseHeaders } from "./ResponseHeaders"
import { endpoint, type EndpointName, makeEndpoints } from "./Routes"

interface Rule {
  readonly name: keyof RateLimits
  /** Whether the rule counts a request for this endpoint (undefined: no endpoint, e.g. an unknown path). */
  readonly applies: (endpoint: EndpointName | undefined) => boolean
  /** Counted per client address even for a signed-in user. */
  readonly perAddress?: boolean
}

const only = (...names: ReadonlyArray<EndpointName>) => {
  const set = new Set(names.map(endpoint))
  return (name: EndpointName | undefined) => name !== undefined && set.has(name)
}
// The gateway's callback is exempt: it comes from a few addresses at the gateway's pace, and is
// authenticated by its signature (docs/rules.md#rate-limit-counting).
const paymentCallback = only("paymentCallback.payment")

const rules: ReadonlyArray<Rule> = [
  { name: "global", applies: (name) => !paymentCallback(name) },
  { name: "auth", applies: only("idp.login", "idp.callback"), perAddress: true },
  { name: "caseOpen", applies: only("openings.open") },
  { name: "withdrawal", applies: only("withdrawals.request") },
  { name: "twoFactorVerify", applies: only("auth.verify2fa") },
  { name: "twoFactorDisable", applies: only("auth.disable2fa") },
  { name: "identityVerify", applies: only("compliance.verifyIdentity") }
]

/**
 * Endpoints whose operation takes the user's lock (`user:<id>`) as its first step: the limiter sends that taking with
 * its counts (UserLock's `withTakenAhead`), one round trip fewer (docs/decisions.md "The user lock taken ahead").
 */
const takesUserLock = only("openings.open", "upgrades.upgrade")

interface Counted {
  readonly name: keyof RateLimits
  readonly limit: RateLimit
  readonly count: RateCount
}

const remaining = ({ count, limit }: Counted) => Math.max(0, limit.count - count.count)

const headersOf = (tightest: Counted) => ({
  "x-ratelimit-limit": String(tightest.limit.count),
  "x-ratelimit-remaining": String(remaining(tightest)),
  "x-ratelimit-reset": String(Math.ceil(tightest.count.resetAtMs / 1000))
})

/** The 429 answer to a request over the `exceeded` limits, with the tightest limit's headers. */
const tooMany = Effect.fnUntraced(function*(exceeded: ReadonlyArray<Counted>, headers: Record<string, string>) {
  yield* Effect.forEach(exceeded, ({ name }) => rateLimitRejection(name), { discard: true })
  const now = yield* Clock.currentTimeMillis
  const resetAtMs = Math.max(...exceeded.map(({ count }) => count.resetAtMs))
  return yield* HttpServerResponse.json({ statusCode: 429, message: "Too many requests" }, {
    status: 429,
    headers: { ...headers, "retry-after": String(Math.max(1, Math.ceil((resetAtMs - now) / 1000))) }
  }).pipe(Effect.orDie)
})

export const RateLimitLive = HttpApiBuilder.middleware(
  Api,
  Effect.gen(function*() {
    const counter = yield* RateCounter
    const sessions = yield* Sessions
    const lock = yield* UserLock
    const config = yield* AppConfig
    const endpoints = yield* makeEndpoints
    const sameOrigin = makeSameOriginCheck(config)

    return Effect.fnUntraced(function*(app: HttpApp.Default) {
      const request = yield* HttpServerRequest.HttpServerRequest
      const resolved = endpoints.of(request)
      const name = resolved?.name
      const applicable = rules.filter((rule) => rule.applies(name))
      if (applicable.length === 0) return yield* app
      const address = `ip:${clientIpOf(request, config)}`
      // A request the cross-site check will refuse (docs/rules.md#cross-site-requests) is counted against its
      // address, never against the user whose cookie a page on another origin made the browser send: such a
      // page must not be able to keep a player at 429.
      const credential = credentialOf(request)
      const usable = credential !== undefined && (credential.via === "bearer" || sameOrigin(request))
      // The session's read for the authentication is sent first and leaves with the counts (SessionReadAhead.ts).
      const slid = usable && resolved?.authenticated === true
        ? yield* startSessionReadAhead(sessions, request, credential.sessionId)
        : undefined
      // The owner as remembered before this request (from an earlier read of the session; forgotten when a request of
      // another device presented it): only such an owner's lock is taken ahead.
      const remembered = usable ? yield* sessions.rememberedOwner(credential.sessionId) : Option.none()
      const user = Option.map(
        usable && Option.isNone(remembered) ? yield* sessions.readOwner(credential.sessionId, slid) : remembered,
        (id) => `user:${id}`
      )
      const limits = applicable.map((rule) => ({
        rule,
        limit: config.rateLimits[rule.name],
        subject: rule.perAddress ? address : Option.getOrElse(user, () => address)
      }))
      // The rest of the request runs from this continuation, not from inside a generator made for it here: from
      // inside one, measured, ~10 KB more of every request outlived two young-generation collections (why is not
      // known; docs/decisions.md "What reaches the old generation, and what does not explain it").
      const limited = Effect.flatMap(
        counter.hitAll(limits.map(({ limit, rule, subject }) => ({ subject, name: rule.name, windowMs: limit.windowMs }))),
        (counts) => {
          const counted = limits.map(({ limit, rule }, i): Counted => ({ name: rule.name, limit, count: counts[i]! }))
          const tightest = counted.reduce((a, b) =>
            remaining(b) < remaining(a) || (remaining(b) === remaining(a) && b.limit.count < a.limit.count) ? b : a
          )
          const headers = headersOf(tightest)
          const exceeded = counted.filter(({ count, limit }) => count.count > limit.count)
          if (exceeded.length > 0) return tooMany(exceeded, headers)
          noteResponseHeaders(request, headers)
          return app
        }
      )
      // The lock's taking is sent before the counts, so that both leave in one write; the operation uses it, or it is
      // released when the request ends (UserLock's withTakenAhead).
      return yield* (Option.isSome(remembered) && takesUserLock(name)
        ? lock.withTakenAhead(`user:${remembered.value}`, limited)
        : limited)
    })
  })
)
