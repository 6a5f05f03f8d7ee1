/** Liveness, readiness and the API reference, through the real API. */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { StoreHealth, Stores } from "../../src/layers/stores/Stores"
import { ServiceUnavailable } from "../../src/schema/platform/Errors"
import { makeTestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

/** The stores as they are when Redis does not answer. */
const RedisDown = Layer.merge(
  Stores.memory,
  Layer.succeed(StoreHealth, { check: new ServiceUnavailable({ message: "Service unavailable: redis" }) })
)

layer(TestDatabase)("health and docs", (it) => {
  it.scoped("GET /api/health answers while the process runs", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const response = yield* client.get("/api/health")
      expect(response.status).toBe(200)
      expect(response.body).toEqual({ status: "ok" })
    }))

  it.scoped("GET /api/ready reports the database and the stores", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const response = yield* client.get("/api/ready")
      expect(response.status).toBe(200)
      expect(response.body).toEqual({ status: "ready", checks: { database: "up", redis: "in-memory" } })
    }))

  it.scoped("GET /api/ready is a 503 in the error shape when Redis does not answer", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ stores: RedisDown })
      const response = yield* client.get("/api/ready")
      expect(response.status).toBe(503)
      expect(response.body).toEqual({ statusCode: 503, message: "Service unavailable: redis" })
      expect((yield* client.get("/api/health")).status).toBe(200)
    }))

  it.scoped("GET /api/docs-json is the OpenAPI 3.1 document derived from the schemas", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const response = yield* client.get("/api/docs-json")
      expect(response.status).toBe(200)
      expect(response.body.openapi).toBe("3.1.0")
      expect(response.body.info.title).toBe("Game Platform API")
      expect(Object.keys(response.body.paths)).toEqual(
        expect.arrayContaining(["/api/health", "/api/ready", "/api/webhooks", "/api/webhooks/{id}"])
      )
      // Errors are documented in the house error shape (docs/rules.md#error-body).
      const deleteResponses = response.body.paths["/api/webhooks/{id}"].delete.responses
      expect(Object.keys(deleteResponses)).toEqual(expect.arrayContaining(["401", "404"]))
      // Decode failures are answered as ValidationError, so HttpApi's own decode error is not documented.
      expect(JSON.stringify(response.body)).not.toContain("HttpApiDecodeError")
      expect(response.body.paths["/api/cases/{id}/open"].post.responses["400"].content["application/json"].schema.anyOf)
        .toContainEqual({ $ref: "#/components/schemas/ValidationError" })
    }))

  it.scoped("API answers are never stored by browsers or proxies; the reference may be", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      for (const path of ["/api/health", "/api/auth/me", "/api/nowhere"]) {
        const response = yield* client.get(path)
        expect([path, response.headers.get("cache-control"), response.headers.get("x-content-type-options")])
          .toEqual([path, "no-store", "nosniff"])
      }
      const reference = yield* client.get("/api/docs-json")
      expect(reference.headers.get("cache-control")).toBeNull()
      expect(reference.headers.get("x-content-type-options")).toBe("nosniff")
    }))

  it.scoped("GET /api/docs serves the interactive reference", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const response = yield* client.get("/api/docs")
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toMatch(/text\/html/)
      expect(response.body).toMatch(/<html/i)
    }))
  it.scoped("under JURISDICTION=BR both probes name the jurisdiction (docs/rules.md#jurisdiction)", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { jurisdiction: "BR" } })
      expect((yield* client.get("/api/health")).body).toEqual({ status: "ok", jurisdiction: "BR" })
      expect((yield* client.get("/api/ready")).body).toEqual({
        status: "ready",
        checks: { database: "up", redis: "in-memory" },
        jurisdiction: "BR"
      })
    }))
})
