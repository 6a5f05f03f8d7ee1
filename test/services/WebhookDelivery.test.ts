/**
 * Outbound webhook delivery end to end (docs/rules.md#webhook-delivery): a local HTTP receiver is
 * registered through the API, a deposit is confirmed through the gateway callback, and the worker's
 * rounds deliver the event; retries follow the backoff on the test clock; claims never overlap.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer, TestClock } from "effect"
import { createHmac } from "node:crypto"
import { AppConfig } from "../../src/layers/AppConfig"
import { MAX_ATTEMPTS, retryDelay, WebhookDelivery } from "../../src/services/platform/WebhookDelivery"
import { signIn } from "../support/SignIn"
import { confirmedDeposit } from "../support/PaymentFixtures"
import { makeTestClient, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { startWebhookReceiver } from "../support/WebhookReceiver"

const ADMIN = { authorization: "Bearer test-admin-token" }
const SECRET = "receiver-secret-0123"

/** The worker's service over the test database, driven round by round. */
const Worker = WebhookDelivery.Default.pipe(Layer.provide(Layer.succeed(AppConfig, testConfig)))

const register = (client: TestClient, url: string) =>
  Effect.gen(function*() {
    const registered = yield* client.post("/api/webhooks", { url, events: ["deposit.confirmed"], secret: SECRET }, ADMIN)
    expect(registered.status).toBe(201)
    return registered.body.id as string
  })

const deliveriesOf = (client: TestClient, webhookId: string) =>
  Effect.map(client.get(`/api/webhooks/${webhookId}/deliveries`, ADMIN), (r) =>
    r.body.deliveries as ReadonlyArray<{
      status: string
      attempts: ReadonlyArray<{ statusCode: number | null; error: string | null }>
    }>)

// Each scenario has a database of its own: receivers registered by one must not see another's events.

layer(TestDatabase)("webhook delivery", (it) => {
  it.scoped("a confirmed deposit reaches a registered receiver, signed in the body and the header", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver
      const client = yield* makeTestClient()
      const worker = yield* Effect.provide(WebhookDelivery, Worker)
      const webhookId = yield* register(client, `${receiver.url}/deposits`)
      const player = yield* signIn(client, "hooked")
      const me = (yield* client.get("/api/auth/me", player.auth)).body
      const deposit = yield* confirmedDeposit(client, player.auth, 4_321)

      expect(yield* worker.runOnce()).toBe(1)
      const [request] = receiver.received()
      expect(receiver.received().length).toBe(1)
      expect(request!.path).toBe("/deposits")
      const payload = JSON.parse(request!.body)
      expect(Object.keys(payload)).toEqual(["event", "timestamp", "data", "signature"])
      expect(payload).toMatchObject({
        event: "deposit.confirmed",
        data: { depositId: deposit.depositId, userId: me.id, amountCents: 4321 }
      })
      expect(new Date(payload.timestamp).toISOString()).toBe(payload.timestamp)
      const expected = "sha256=" + createHmac("sha256", SECRET)
        .update(JSON.stringify({ event: payload.event, timestamp: payload.timestamp, data: payload.data }))
        .digest("hex")
      expect(payload.signature).toBe(expected)
      expect(request!.headers["x-webhook-signature"]).toBe(expected)
      expect(request!.headers["content-type"]).toContain("application/json")

      expect(yield* deliveriesOf(client, webhookId)).toMatchObject([{ status: "DELIVERED", attempts: [{ statusCode: 200, error: null }] }])
      // Nothing more is due: delivered means delivered once.
      yield* TestClock.adjust(Duration.hours(1))
      expect(yield* worker.runOnce()).toBe(0)
      expect(receiver.received().length).toBe(1)
    }))
})

layer(TestDatabase)("webhook delivery", (it) => {
  it.scoped("a receiver that fails twice gets the event on the third attempt, after 1 and 2 minutes", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver
      const client = yield* makeTestClient()
      const worker = yield* Effect.provide(WebhookDelivery, Worker)
      const webhookId = yield* register(client, `${receiver.url}/flaky`)
      const player = yield* signIn(client, "flaky-player")
      receiver.failNext(2, 503)
      yield* confirmedDeposit(client, player.auth, 1_000)

      expect(yield* worker.runOnce()).toBe(1)
      yield* TestClock.adjust(Duration.toMillis(retryDelay(1)) - 1)
      expect(yield* worker.runOnce()).toBe(0)
      yield* TestClock.adjust(1)
      expect(yield* worker.runOnce()).toBe(1)
      yield* TestClock.adjust(Duration.toMillis(retryDelay(2)) - 1)
      expect(yield* worker.runOnce()).toBe(0)
      yield* TestClock.adjust(1)
      expect(yield* worker.runOnce()).toBe(1)

      const flaky = receiver.received().filter((r) => r.path === "/flaky")
      expect(flaky.length).toBe(3)
      expect(new Set(flaky.map((r) => r.body)).size).toBe(1)
      expect(yield* deliveriesOf(client, webhookId)).toMatchObject([{
        status: "DELIVERED",
        attempts: [{ statusCode: 503 }, { statusCode: 503 }, { statusCode: 200 }]
      }])
    }))
})

layer(TestDatabase)("webhook delivery", (it) => {
  it.scoped("a receiver that never answers fails after 8 attempts and is not tried again", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const worker = yield* Effect.provide(WebhookDelivery, Worker)
      // Nothing listens on port 9 of the loopback: every attempt is a refused connection.
      const webhookId = yield* register(client, "http://127.0.0.1:9/down")
      const player = yield* signIn(client, "down-player")
      yield* confirmedDeposit(client, player.auth, 1_000)

      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        expect(yield* worker.runOnce()).toBe(1)
        if (attempt < MAX_ATTEMPTS) yield* TestClock.adjust(retryDelay(attempt))
      }
      const [delivery] = yield* deliveriesOf(client, webhookId)
      expect(delivery!.status).toBe("FAILED")
      expect(delivery!.attempts.length).toBe(MAX_ATTEMPTS)
      expect(delivery!.attempts.every((a) => a.statusCode === null && a.error !== null)).toBe(true)
      yield* TestClock.adjust(Duration.days(30))
      expect(yield* worker.runOnce()).toBe(0)
    }))
})

layer(TestDatabase)("webhook delivery", (it) => {
  it.scoped("two workers at once never send the same delivery twice", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver
      const client = yield* makeTestClient({
        config: { rateLimits: { ...testConfig.rateLimits, global: { count: 10_000, windowMs: 60_000 } } }
      })
      const first = yield* Effect.provide(WebhookDelivery, Worker)
      const second = yield* Effect.provide(WebhookDelivery, Worker)
      yield* register(client, `${receiver.url}/crowd`)
      const player = yield* signIn(client, "crowd-player")
      for (let i = 0; i < 30; i++) yield* confirmedDeposit(client, player.auth, 500 + i)

      const [a, b] = yield* Effect.all([first.runOnce(), second.runOnce()], { concurrency: 2 })
      expect(a + b).toBe(30)
      const crowd = receiver.received().filter((r) => r.path === "/crowd")
      const ids = crowd.map((r) => r.headers["x-webhook-delivery"])
      expect(ids.length).toBe(30)
      expect(new Set(ids).size).toBe(30)
      expect(new Set(crowd.map((r) => JSON.parse(r.body).data.amountCents)).size).toBe(30)
    }))
})
