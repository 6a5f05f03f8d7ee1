/**
 * Every error leaves in the house error shape (docs/rules.md#error-body), through the real API: validation
 * failures name each bad field, malformed JSON and unknown routes get 400/404, defects a bare 500.
 */
import { HttpApiError } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { fieldName, toValidationError } from "../../src/http/platform/ErrorEnvelope"
import { makeTestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const admin = { authorization: "Bearer test-admin-token" }

layer(TestDatabase)("error envelope", (it) => {
  it.scoped("an unknown route is a 404 in the error shape", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const response = yield* client.get("/api/no-such-thing")
      expect(response.status).toBe(404)
      expect(response.body).toEqual({ statusCode: 404, message: "Route not found" })
    }))

  it.scoped("a known path with the wrong method is a 404 too", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const response = yield* client.request("/api/health", { method: "PUT" })
      expect(response.status).toBe(404)
      expect(response.body.statusCode).toBe(404)
    }))

  it.scoped("a body with several bad fields is a 400 naming each field once", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const response = yield* client.post("/api/webhooks", { url: "not a url", events: ["deposit.confirmed", "nope"], secret: 5 }, admin)
      expect(response.status).toBe(400)
      expect(response.body.statusCode).toBe(400)
      expect(response.body.message).toBe("Validation failed")
      const fields = response.body.errors.map((e: { field: string }) => e.field).sort()
      expect(fields).toEqual(["events[1]", "secret", "url"])
      for (const error of response.body.errors) expect(typeof error.message).toBe("string")
      expect(Object.keys(response.body).sort()).toEqual(["errors", "message", "statusCode"])
    }))

  it.scoped("a missing field is named", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const response = yield* client.post("/api/webhooks", { url: "https://example.com/hook", events: ["deposit.confirmed"] }, admin)
      expect(response.status).toBe(400)
      expect(response.body.errors).toEqual([{ field: "secret", message: expect.any(String) }])
    }))

  it.scoped("malformed JSON is a 400, not a 500", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const response = yield* client.post("/api/webhooks", "{\"url\": ", admin)
      expect(response.status).toBe(400)
      expect(response.body).toEqual({ statusCode: 400, message: "Malformed JSON body" })
    }))

  it.scoped("an id that is not a positive integer is a 400 naming the parameter", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      for (const id of ["abc", "0", "-3", "1.5", "99999999999999999999"]) {
        const response = yield* client.request(`/api/webhooks/${id}`, { method: "DELETE", headers: admin })
        expect(response.status, id).toBe(400)
        expect(response.body.errors, id).toEqual([{ field: "id", message: expect.any(String) }])
      }
    }))

  it.scoped("a domain error keeps its status and message", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const response = yield* client.request("/api/webhooks/424242", { method: "DELETE", headers: admin })
      expect(response.status).toBe(404)
      expect(response.body).toEqual({ statusCode: 404, message: "Webhook not found" })
    }))

  it.scoped("a missing or wrong credential is a 401 in the error shape", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      for (const headers of [{} as Record<string, string>, { authorization: "Bearer wrong" }, { authorization: "Basic dGVzdA==" }]) {
        const response = yield* client.get("/api/webhooks", headers)
        expect(response.status).toBe(401)
        expect(response.body).toEqual({ statusCode: 401, message: "Unauthorized" })
      }
    }))
})

// Its own database: this test breaks it on purpose.
layer(TestDatabase)("error envelope on a defect", (it) => {
  it.scoped("a defect is a bare 500: no message, stack or SQL reaches the client", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      // A broken database under a working API: the query fails in a way no handler expects.
      yield* (yield* SqlClient.SqlClient)`DROP TABLE webhooks CASCADE`
      const response = yield* client.get("/api/webhooks", admin)
      expect(response.status).toBe(500)
      expect(response.body).toEqual({ statusCode: 500, message: "Internal server error" })
    }))
})

describe("error envelope helpers", () => {
  it("field names follow the path into arrays and objects", () => {
    expect(fieldName(["items", 2, "dropChance"])).toBe("items[2].dropChance")
    expect(fieldName(["id"])).toBe("id")
    expect(fieldName([])).toBe("body")
  })

  it("issues of one field collapse to the first", () => {
    const error = new HttpApiError.HttpApiDecodeError({
      message: "bad",
      issues: [
        { _tag: "Type", path: ["url"], message: "first" },
        { _tag: "Refinement", path: ["url"], message: "second" },
        { _tag: "Missing", path: ["secret"], message: "is missing" }
      ]
    })
    expect(toValidationError(error).errors.map((e) => [e.field, e.message])).toEqual([["url", "first"], ["secret", "is missing"]])
  })
})
