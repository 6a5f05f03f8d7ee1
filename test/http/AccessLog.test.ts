/**
 * The access log (src/http/platform/AccessLog.ts, docs/operations.md "Logs"): each request writes exactly one line
 * at Info, with its method, route template, URL, status, duration, request id and, when signed in, the user's id;
 * everything else a request logs is at Debug. In the development format (src/layers/LogLine.ts) it is one line.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { logLine } from "../../src/layers/LogLine"
import { fundedPlayer, makeCase } from "../support/GameFixtures"
import { gatewayCall } from "../support/PaymentFixtures"
import { makeTestClient, type TestResponse } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

interface Entry {
  readonly level: string
  readonly message: unknown
  readonly annotations: Record<string, unknown>
  /** The entry as `npm start` writes it outside production. */
  readonly line: string
}

layer(TestDatabase)("access log", (it) => {
  it.scoped("one Info line per request: method, route, URL, status, duration, request id, user id", () =>
    Effect.gen(function*() {
      const entries: Array<Entry> = []
      const capture = Logger.zip(Logger.structuredLogger, logLine).pipe(Logger.map(([entry, line]) => {
        entries.push({ level: entry.logLevel, message: entry.message, annotations: entry.annotations, line })
      }))
      const client = yield* makeTestClient({
        config: { adminIdpIds: ["root"] },
        accessLog: true,
        logging: Logger.replace(Logger.defaultLogger, capture)
      })
      const { kase } = yield* makeCase({ priceCents: 500n })
      const player = yield* fundedPlayer(client, "access-logged", 500)

      /** What one request logged at Info and above: exactly one entry, whose fields are returned. */
      const onlyLineOf = (request: Effect.Effect<TestResponse>) =>
        Effect.gen(function*() {
          entries.length = 0
          const response = yield* request
          const info = entries.filter((entry) => entry.level !== "DEBUG" && entry.level !== "TRACE")
          expect(info.map((entry) => [entry.level, entry.message])).toEqual([["INFO", "Sent HTTP response"]])
          const [entry] = info
          expect(entry!.line).not.toContain("\n")
          expect(entry!.annotations.requestId).toBe(response.headers.get("x-request-id"))
          expect(typeof entry!.annotations["http.duration_ms"]).toBe("number")
          return { response, annotations: entry!.annotations, line: entry!.line }
        })

      const health = yield* onlyLineOf(client.get("/api/health"))
      expect(health.annotations).toMatchObject({
        "http.method": "GET",
        "http.route": "/api/health",
        "http.url": "/api/health",
        "http.status": 200
      })
      expect(health.annotations).not.toHaveProperty("userId")

      const me = yield* onlyLineOf(client.get("/api/auth/me", player.auth))
      expect(me.annotations).toMatchObject({ "http.route": "/api/auth/me", "http.status": 200, userId: player.id })
      // The development line: the request's fields first, on the one line.
      expect(me.line).toMatch(
        new RegExp(
          `INFO \\(#\\d+\\): Sent HTTP response http\\.method=GET http\\.route=/api/auth/me http\\.url=/api/auth/me ` +
            `http\\.status=200 http\\.duration_ms=[\\d.]+ requestId=[\\w-]+ userId=${player.id}( |$)`
        )
      )

      const opened = yield* onlyLineOf(client.post(`/api/cases/${kase.id}/open`, undefined, player.auth))
      expect(opened.response.status).toBe(200)
      expect(opened.annotations).toMatchObject({
        "http.method": "POST",
        "http.route": "/api/cases/:id/open",
        "http.url": `/api/cases/${kase.id}/open`,
        "http.status": 200,
        userId: player.id
      })

      // Refused, and the refusal's reason at Debug only: still the one line, with the user.
      const broke = yield* onlyLineOf(client.post(`/api/cases/${kase.id}/open`, undefined, player.auth))
      expect(broke.annotations).toMatchObject({ "http.status": 400, userId: player.id })

      // Refused before any user is known, and outside the API.
      expect((yield* onlyLineOf(client.get("/api/auth/me", { authorization: "Bearer nobody" }))).annotations)
        .toMatchObject({ "http.status": 401, "http.route": "/api/auth/me" })
      const missing = yield* onlyLineOf(client.get("/api/no-such-thing?x=1"))
      expect(missing.annotations).toMatchObject({ "http.route": "other", "http.url": "/api/no-such-thing?x=1", "http.status": 404 })
      expect(missing.annotations).not.toHaveProperty("userId")
    }))

  it.scoped("a line logged while serving a request carries its request id; the next request's lines carry the next id", () =>
    Effect.gen(function*() {
      const entries: Array<{ readonly message: unknown; readonly annotations: Record<string, unknown> }> = []
      const client = yield* makeTestClient({
        accessLog: true,
        logging: Logger.replace(
          Logger.defaultLogger,
          Logger.map(Logger.structuredLogger, (entry) => void entries.push({ message: entry.message, annotations: entry.annotations }))
        )
      })
      // A signed callback whose timestamp is stale is refused with a warning, logged by the endpoint itself.
      const stale = (requestId: string) =>
        gatewayCall(client, { event: "charge.paid", data: { id: "unknown" } }, {
          timestamp: Math.floor(Date.now() / 1000) - 3_600,
          headers: { "x-request-id": requestId }
        })
      for (const requestId of ["first-request", "second-request"]) {
        entries.length = 0
        expect((yield* stale(requestId)).status).toBe(401)
        const warned = entries.filter((entry) => String(entry.message).startsWith("Gateway callback refused"))
        expect(warned.map((entry) => entry.annotations.requestId)).toEqual([requestId])
        expect(entries.find((entry) => entry.message === "Sent HTTP response")?.annotations.requestId).toBe(requestId)
      }
    }))
})
