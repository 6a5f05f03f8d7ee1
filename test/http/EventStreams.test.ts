/**
 * The limits of the event streams (docs/rules.md#stream-limits): a client 1000 events behind is dropped
 * while the others keep receiving, a user's 6th stream ends the oldest, and a stream lives 24 hours.
 */
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, TestClock } from "effect"
import { Broadcast } from "../../src/layers/stores/Broadcast"
import { userChannel } from "../../src/services/platform/Notifications"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { TestStores } from "../support/TestStores"

const closed = (reason: string) => `event: closed\ndata: {"reason":"${reason}"}\n\n`

/** An open stream, read only when the test says so. */
const openStream = (client: TestClient, path: string, headers: Record<string, string>) =>
  Effect.gen(function*() {
    const response = yield* client.open(path, { headers })
    expect(response.status).toBe(200)
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    const stream = { text: "", done: false }
    let pending: Promise<void> | undefined
    const next = () =>
      pending ??= reader.read().then(
        ({ done, value }) => {
          pending = undefined
          if (done) stream.done = true
          else stream.text += decoder.decode(value, { stream: true })
        },
        () => {
          stream.done = true
        }
      )
    /** Reads until `until(text)` holds or the stream ends, for at most `ms` of real time. */
    const readUntil = (until: (text: string) => boolean, ms = 3_000) =>
      Effect.promise(async () => {
        const deadline = Date.now() + ms
        while (!stream.done && !until(stream.text)) {
          let timer: NodeJS.Timeout | undefined
          const late = new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(true), deadline - Date.now())
          })
          const timedOut = await Promise.race([next().then(() => false), late])
          clearTimeout(timer)
          if (timedOut) break
        }
        return stream
      })
    /** Reads to the end; `done` is false if it did not end within `ms`. */
    const readToEnd = (ms?: number) => readUntil(() => false, ms)
    yield* readUntil((text) => text.startsWith(": connected\n\n"))
    return { stream, readUntil, readToEnd, cancel: Effect.promise(() => reader.cancel()) }
  })

/** The `balanceCents` of each `balance.updated` event in the text, in order. */
const balances = (text: string) =>
  [...text.matchAll(/event: balance\.updated\ndata: \{"balanceCents":(\d+)\}/g)].map((match) => Number(match[1]))

const balanceUpdate = (userId: string, balanceCents: number) => ({
  channel: userChannel(BigInt(userId)),
  message: JSON.stringify({ event: "balance.updated", data: { balanceCents } })
})

/** An app whose broadcast the test publishes to directly. */
const clientWithBroadcast = Effect.gen(function*() {
  const stores = yield* Layer.build(TestStores)
  return { broadcast: Context.get(stores, Broadcast), client: yield* makeTestClient({ stores: Layer.succeedContext(stores) }) }
})

layer(TestDatabase)("event stream limits", (it) => {
  it.scoped("a client that stops reading is dropped 1000 events behind; the user's other stream keeps receiving", () =>
    Effect.gen(function*() {
      const { broadcast, client } = yield* clientWithBroadcast
      const player = yield* signIn(client, "slow-reader")
      const id = (yield* client.get("/api/auth/me", player.auth)).body.id as string
      const slow = yield* openStream(client, "/api/realtime", player.auth)
      const fast = yield* openStream(client, "/api/realtime", player.auth)

      // 1200 events in batches the fast client reads as they come; the slow one reads nothing.
      for (let batch = 0; batch < 12; batch++) {
        const values = Array.from({ length: 100 }, (_, i) => batch * 100 + i + 1)
        yield* broadcast.publish(...values.map((value) => balanceUpdate(id, value)))
        yield* fast.readUntil((text) => text.includes(`{"balanceCents":${values.at(-1)}}`))
      }
      expect(balances(fast.stream.text)).toEqual(Array.from({ length: 1200 }, (_, i) => i + 1))
      expect(fast.stream.done).toBe(false)

      // The slow client, reading again, gets what its connection had taken (about the first batch), then the
      // end: the 1000 events after those waited for it when the next one came, and were let go.
      const { done, text } = yield* slow.readToEnd()
      expect(done).toBe(true)
      expect(text.endsWith(closed("lagging"))).toBe(true)
      const got = balances(text)
      expect(got).toEqual(got.map((_, i) => i + 1))
      expect(got.length).toBeLessThan(200)

      // The fast one still receives.
      yield* broadcast.publish(balanceUpdate(id, 1201))
      expect(balances((yield* fast.readUntil((text) => text.includes(`{"balanceCents":1201}`))).text).at(-1)).toBe(1201)
      yield* fast.cancel
    }))

  it.scoped("a user's 6th open stream ends the oldest of that user's streams, of either kind", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { adminIdpIds: ["root"] } })
      const admin = yield* signIn(client, "root")
      const player = yield* signIn(client, "many-tabs")
      const other = yield* signIn(client, "one-tab")
      const id = (yield* client.get("/api/auth/me", player.auth)).body.id as string
      // Another user's stream, opened first, is not one of this user's.
      const theirs = yield* openStream(client, "/api/realtime", other.auth)
      const oldest = yield* openStream(client, "/api/live-drops/stream", player.auth)
      const streams = []
      for (let i = 0; i < 4; i++) streams.push(yield* openStream(client, "/api/realtime", player.auth))
      expect((yield* oldest.readToEnd(300)).done).toBe(false)

      streams.push(yield* openStream(client, "/api/realtime", player.auth))
      const ended = yield* oldest.readToEnd()
      expect(ended.done).toBe(true)
      expect(ended.text.endsWith(closed("replaced"))).toBe(true)

      // The five newest stay open and receive; so does the other user's.
      const adjusted = yield* client.post(`/api/admin/users/${id}/adjust-balance`, { amountCents: 700, reason: "gift" }, admin.auth)
      expect(adjusted.status).toBe(200)
      for (const stream of streams) {
        expect(balances((yield* stream.readUntil((text) => balances(text).length > 0)).text)).toEqual([700])
      }
      expect((yield* theirs.readToEnd(300)).done).toBe(false)

      // A stream that closes frees its place: the next one replaces nobody.
      yield* streams[0]!.cancel
      const next = yield* openStream(client, "/api/realtime", player.auth)
      for (const stream of [...streams.slice(1), next]) expect((yield* stream.readToEnd(300)).done).toBe(false)
    }))

  it.scoped("a stream dropped for lagging gives its place up at once, though its client reads nothing more", () =>
    Effect.gen(function*() {
      const { broadcast, client } = yield* clientWithBroadcast
      const player = yield* signIn(client, "stalled-tab")
      const id = (yield* client.get("/api/auth/me", player.auth)).body.id as string
      const readers = []
      for (let i = 0; i < 4; i++) readers.push(yield* openStream(client, "/api/realtime", player.auth))
      const stalled = yield* openStream(client, "/api/realtime", player.auth)

      // 1100 events, which the four readers read as they come: the stalled stream, read by no one, is dropped.
      for (let batch = 0; batch < 11; batch++) {
        yield* broadcast.publish(...Array.from({ length: 100 }, (_, i) => balanceUpdate(id, batch * 100 + i + 1)))
        for (const reader of readers) yield* reader.readUntil((text) => text.includes(`{"balanceCents":${batch * 100 + 100}}`))
      }
      // Its client has not read its end, but it holds no place: a new stream is the 5th, and replaces nobody.
      yield* openStream(client, "/api/realtime", player.auth)
      for (const reader of readers) expect((yield* reader.readToEnd(300)).done).toBe(false)
      expect((yield* stalled.readToEnd()).text.endsWith(closed("lagging"))).toBe(true)
    }))

  it.scoped("a HEAD of a stream answers its headers and opens nothing: the owner's streams stay open", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const player = yield* signIn(client, "head-probe")
      const streams = []
      for (let i = 0; i < 5; i++) streams.push(yield* openStream(client, "/api/realtime", player.auth))
      for (const path of ["/api/realtime", "/api/live-drops/stream"]) {
        const head = yield* client.open(path, { method: "HEAD", headers: player.auth })
        expect([head.status, head.headers.get("content-type")]).toEqual([200, "text/event-stream"])
      }
      for (const stream of streams) expect((yield* stream.readToEnd(300)).done).toBe(false)
    }))

  it.scoped("a stream ends after 24 hours open, with realtime pushes up to then", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { adminIdpIds: ["root"] } })
      const admin = yield* signIn(client, "root")
      const player = yield* signIn(client, "all-day")
      const id = (yield* client.get("/api/auth/me", player.auth)).body.id as string
      const stream = yield* openStream(client, "/api/realtime", player.auth)

      yield* TestClock.adjust("23 hours")
      yield* TestClock.adjust("59 minutes")
      yield* client.post(`/api/admin/users/${id}/adjust-balance`, { amountCents: 300, reason: "gift" }, admin.auth)
      const before = yield* stream.readUntil((text) => balances(text).length > 0)
      expect(balances(before.text)).toEqual([300])
      expect(before.done).toBe(false)

      yield* TestClock.adjust("1 minute")
      const { done, text } = yield* stream.readToEnd()
      expect(done).toBe(true)
      expect(text.endsWith(closed("expired"))).toBe(true)
    }))
})
