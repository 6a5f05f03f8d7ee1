/**
 * A stolen session (docs/rules.md#device-binding) through the public API, on the stores the service runs with
 * (Redis when REDIS_URL is set): device binding to the first X-Device-Id seen, and event streams that close when
 * their session is revoked or their user banned, also when that happens through another instance.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { TestStores } from "../support/TestStores"

let seq = 0
const login = (name: string) => `${name}-${++seq}`
const DAY = 24 * 60 * 60 * 1000
const mismatch = { statusCode: 401, message: "Device mismatch" }

const auditRows = (action: string, userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ metadata: unknown }>`SELECT metadata FROM audit_logs WHERE action = ${action} AND user_id = ${userId} ORDER BY id`)

/** Reads a Server-Sent Events response until it ends; true when it did within `ms`. */
const endsWithin = (reader: ReadableStreamDefaultReader<Uint8Array>, ms: number) =>
  Effect.promise(async () => {
    const deadline = Date.now() + ms
    while (Date.now() < deadline) {
      const next = await Promise.race([reader.read(), new Promise<"wait">((r) => setTimeout(() => r("wait"), 50))])
      if (next !== "wait" && next.done) return true
    }
    return false
  })

/** Opens a stream and waits until it is subscribed (its first comment). */
const openStream = (client: TestClient, path: string, headers: Record<string, string>) =>
  Effect.gen(function*() {
    const response = yield* client.open(path, { headers })
    expect(response.status).toBe(200)
    const reader = response.body!.getReader()
    yield* Effect.promise(() => reader.read())
    return reader
  })

layer(TestDatabase)("a stolen session", (it) => {
  it.scoped("a session without a device binds to the first X-Device-Id; then another device or none is a mismatch (streams may omit it)", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ stores: TestStores })
      const { auth } = yield* signIn(client, login("binder"))
      const me = (yield* client.get("/api/auth/me", auth)).body
      // Not bound yet: requests without a device id are served.
      expect((yield* client.get("/api/auth/me", auth)).status).toBe(200)
      expect((yield* client.get("/api/auth/me", { ...auth, "x-device-id": "phone-A" })).status).toBe(200)

      const missing = yield* client.get("/api/auth/me", auth)
      expect(missing.status).toBe(401)
      expect(missing.body).toEqual(mismatch)
      const other = yield* client.get("/api/auth/me", { ...auth, "x-device-id": "laptop-B" })
      expect(other.body).toEqual(mismatch)
      expect(yield* auditRows("DEVICE_MISMATCH", me.id)).toEqual([
        { metadata: { expectedDevice: "phone-A", receivedDevice: null } },
        { metadata: { expectedDevice: "phone-A", receivedDevice: "laptop-B" } }
      ])
      // The owner's device still works; a stream may come without the header (EventSource), not from another device.
      expect((yield* client.get("/api/auth/me", { ...auth, "x-device-id": "phone-A" })).status).toBe(200)
      const stream = yield* openStream(client, "/api/realtime", auth)
      yield* Effect.promise(() => stream.cancel())
      const drops = yield* openStream(client, "/API/live-drops/stream/", auth)
      yield* Effect.promise(() => drops.cancel())
      expect((yield* client.open("/api/realtime", { headers: { ...auth, "x-device-id": "laptop-B" } })).status).toBe(401)
      // Spelling the path of a stream otherwise does not make another endpoint a stream.
      expect((yield* client.get("/api/auth/me;realtime", auth)).status).toBe(401)
    }))

  it.scoped("requests from another device do not keep a bound session alive; its own device's do", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ stores: TestStores })
      const { auth: own } = yield* signIn(client, login("idle-owner"), { "x-device-id": "tablet" })
      const bare = { authorization: own.authorization! }
      yield* TestClock.adjust(6 * DAY)
      expect((yield* client.get("/api/auth/me", own)).status).toBe(200)
      // The owner's last use was at day 6: a thief's refused requests on days 12 and 13 change nothing.
      yield* TestClock.adjust(6 * DAY)
      expect((yield* client.get("/api/auth/me", { ...bare, "x-device-id": "laptop" })).body).toEqual(mismatch)
      yield* TestClock.adjust(DAY - 1000)
      expect((yield* client.get("/api/auth/me", bare)).body).toEqual(mismatch)
      yield* TestClock.adjust(2000)
      expect((yield* client.get("/api/auth/me", own)).status).toBe(401)
    }))

  it.scoped("a session created on a device is bound from the start; of two racing first devices exactly one wins", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ stores: TestStores })
      const bound = yield* signIn(client, login("born-bound"), { "x-device-id": "tablet" })
      expect((yield* client.get("/api/auth/me", { authorization: bound.auth.authorization })).body).toEqual(mismatch)

      const racing = yield* signIn(client, login("racer"))
      const answers = yield* Effect.all(
        Array.from({ length: 8 }, (_, i) => client.get("/api/auth/me", { ...racing.auth, "x-device-id": `device-${i}` })),
        { concurrency: "unbounded" }
      )
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1)
      expect(answers.filter((a) => a.status === 401).every((a) => a.body.message === "Device mismatch")).toBe(true)
    }))

  it.scoped("revoking a session, signing out or banning the user closes the streams opened with it, on every instance", () =>
    Effect.gen(function*() {
      // Two instances over the same stores (with REDIS_URL: the same Redis, its pub/sub between them).
      const stores = yield* Layer.build(TestStores)
      const one = yield* makeTestClient({ stores: Layer.succeedContext(stores), config: { adminIdpIds: ["root"] } })
      const two = yield* makeTestClient({ stores: Layer.succeedContext(stores), config: { adminIdpIds: ["root"] } })
      const name = login("streamer")
      const stolen = yield* signIn(one, name)
      const owner = yield* signIn(one, name)

      // Revoked by its owner through the other instance: the thief's streams end there and here.
      const realtime = yield* openStream(one, "/api/realtime", stolen.auth)
      const drops = yield* openStream(two, "/api/live-drops/stream", stolen.auth)
      const mine = yield* openStream(one, "/api/realtime", owner.auth)
      expect((yield* two.request(`/api/auth/sessions/${stolen.sessionId}`, { method: "DELETE", headers: owner.auth })).status).toBe(200)
      expect(yield* endsWithin(realtime, 3_000)).toBe(true)
      expect(yield* endsWithin(drops, 3_000)).toBe(true)
      // The owner's own stream goes on.
      expect(yield* endsWithin(mine, 300)).toBe(false)

      // Signing out ends the session's streams too.
      const again = yield* openStream(two, "/api/realtime", owner.auth)
      expect((yield* one.post("/api/auth/logout", undefined, owner.auth)).status).toBe(200)
      expect(yield* endsWithin(mine, 3_000)).toBe(true)
      expect(yield* endsWithin(again, 3_000)).toBe(true)

      // A ban closes every stream of the user.
      const banned = yield* signIn(one, login("banned-streamer"))
      const bannedMe = (yield* one.get("/api/auth/me", banned.auth)).body
      const secondDevice = yield* signIn(two, bannedMe.idpId)
      const a = yield* openStream(one, "/api/realtime", banned.auth)
      const b = yield* openStream(two, "/api/live-drops/stream", secondDevice.auth)
      const root = yield* signIn(two, "root")
      expect((yield* two.post(`/api/admin/users/${bannedMe.id}/ban`, { reason: "fraud" }, root.auth)).body.sessionsRevoked).toBe(2)
      expect(yield* endsWithin(a, 3_000)).toBe(true)
      expect(yield* endsWithin(b, 3_000)).toBe(true)
      // And no new one opens.
      expect((yield* one.open("/api/realtime", { headers: banned.auth })).status).toBe(401)
    }), { timeout: 30_000 })
})
