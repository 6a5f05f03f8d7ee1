/** Outbound webhook registration through the API (docs/rules.md#webhook-registration). */
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
      const internal = [
        "http://127.0.0.1:8080/hook", "http://10.1.2.3/hook", "http://[::1]/hook", "http://localhost/hook",
        // Ways around a short list (docs/rules.md#webhook-private-targets): NAT64 and 6to4 prefixes that carry
        // an IPv4 address of their choosing, IPv4-mapped addresses in both notations, IPv4 spelled as one
        // number or in hex.
        "http://[64:ff9b::a9fe:a9fe]/latest/meta-data", "http://[64:ff9b:1::a00:1]/", "http://[2002:a9fe:a9fe::1]/",
        "http://[::ffff:169.254.169.254]/", "http://[::ffff:a9fe:a9fe]/", "http://[::a00:1]/", "http://2130706433/",
        "http://0x7f.1/", "http://0.0.0.0/", "http://100.64.1.1/", "http://224.0.0.1/", "http://255.255.255.255/",
        "http://[2001:0:4136:e378::1]/", "http://[fec0::1]/", "http://[ff02::1]/", "http://[2001:db8::1]/"
      ]
      for (const url of internal) {
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
