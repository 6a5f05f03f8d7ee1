/** Outbound webhook registration through the API (SPEC "Webhook registration", D12). */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeTestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const admin = { authorization: "Bearer test-admin-token" }
const registration = {
  url: "https://receiver.example.com/hooks",
  events: ["deposit.confirmed", "battle.finished"],
  secret: "receiver-secret-0123"
}

layer(TestDatabase)("webhook registration", (it) => {
  it.scoped("registers, lists and deletes a receiver; the secret is never returned", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const created = yield* client.post("/api/webhooks", registration, admin)
      expect(created.status).toBe(201)
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[1-9][0-9]*$/),
        url: registration.url,
        events: registration.events,
        createdAt: expect.any(String)
      })
      const listed = yield* client.get("/api/webhooks", admin)
      expect(listed.body.webhooks).toContainEqual(created.body)
      expect(JSON.stringify(listed.body)).not.toContain(registration.secret)

      const removed = yield* client.request(`/api/webhooks/${created.body.id}`, { method: "DELETE", headers: admin })
      expect(removed.body).toEqual({ message: "Webhook deleted" })
      const again = yield* client.request(`/api/webhooks/${created.body.id}`, { method: "DELETE", headers: admin })
      expect(again.status).toBe(404)
      expect((yield* client.get("/api/webhooks", admin)).body.webhooks).not.toContainEqual(created.body)
    }))

  it.scoped("refuses loopback and private targets when WEBHOOK_BLOCK_PRIVATE_TARGETS is on", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { webhookBlockPrivateTargets: true } })
      for (const url of ["http://127.0.0.1:8080/hook", "http://10.1.2.3/hook", "http://[::1]/hook", "http://localhost/hook"]) {
        const response = yield* client.post("/api/webhooks", { ...registration, url }, admin)
        expect(response.status, url).toBe(400)
        expect(response.body).toEqual({
          statusCode: 400,
          message: "Validation failed",
          errors: [{ field: "url", message: "must not point to a loopback or private address" }]
        })
      }
      const open = yield* makeTestClient()
      expect((yield* open.post("/api/webhooks", { ...registration, url: "http://127.0.0.1:8080/hook" }, admin)).status)
        .toBe(201)
    }))
})
