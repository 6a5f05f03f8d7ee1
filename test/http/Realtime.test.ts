/** The user's realtime stream (docs/rules.md#realtime): balance updates and notifications as Server-Sent Events. */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { fundedPlayer, makeCase } from "../support/GameFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

/** Reads the stream until `count` events arrived; returns them as {event, data}. */
const readEvents = (reader: ReadableStreamDefaultReader<Uint8Array>, count: number) =>
  Effect.promise(async () => {
    const decoder = new TextDecoder()
    let text = ""
    const events = () =>
      text.split("\n\n").filter((block) => block.startsWith("event: ")).map((block) => {
        const [event, data] = block.split("\n")
        return { event: event!.slice(7), data: JSON.parse(data!.slice(6)) }
      })
    while (events().length < count) text += decoder.decode((await reader.read()).value)
    return events()
  })

layer(TestDatabase)("realtime", (it) => {
  it.scoped("balance changes and new notifications reach only their user's stream", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { adminIdpIds: ["root"], trustProxy: 1 } })
      const { kase } = yield* makeCase({ priceCents: 300n })
      const player = yield* fundedPlayer(client, "listener", 0)
      const other = yield* fundedPlayer(client, "other-listener", 0)
      const admin = yield* fundedPlayer(client, "root", 0)
      const fromBrazil = yield* signIn(client, "listener", { "x-forwarded-for": "200.147.67.142" })
      const mine = (yield* client.open("/api/realtime", { headers: fromBrazil.auth })).body!.getReader()
      const theirs = (yield* client.open("/api/realtime", { headers: other.auth })).body!.getReader()
      // Wait for the subscriptions (each stream starts with a comment once subscribed).
      yield* Effect.promise(() => mine.read())
      yield* Effect.promise(() => theirs.read())

      yield* client.post(`/api/admin/users/${player.id}/adjust-balance`, { amountCents: 1000, reason: "gift" }, admin.auth)
      yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)
      // The Brazilian session used from another country makes a SECURITY_ALERT notification.
      yield* client.get("/api/auth/me", { ...fromBrazil.auth, "x-forwarded-for": "8.8.8.8" })

      const events = yield* readEvents(mine, 3)
      expect(events).toEqual([
        { event: "balance.updated", data: { balanceCents: 1000 } },
        { event: "balance.updated", data: { balanceCents: 700 } },
        { event: "notification", data: { id: expect.any(String), type: "SECURITY_ALERT", title: expect.any(String), message: expect.any(String) } }
      ])
      yield* Effect.promise(() => mine.cancel())
      yield* client.post(`/api/admin/users/${other.id}/adjust-balance`, { amountCents: 5, reason: "gift" }, admin.auth)
      expect(yield* readEvents(theirs, 1)).toEqual([{ event: "balance.updated", data: { balanceCents: 5 } }])
      yield* Effect.promise(() => theirs.cancel())
      expect((yield* client.get("/api/realtime")).status).toBe(401)
    }))
})
