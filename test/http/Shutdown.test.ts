/**
 * Shutting down (docs/rules.md#shutdown), in-process: once shutdown begins readiness answers 503, answers carry
 * `Connection: close`, and open event streams end with a final `shutdown` event.
 */
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Lifecycle } from "../../src/layers/Lifecycle"
import { signIn } from "../support/SignIn"
import { makeTestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

/** A stream's reader: its first chunk now, and later everything else it sends until it ends. */
const reading = (response: Response) =>
  Effect.promise(async () => {
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    const first = decoder.decode((await reader.read()).value)
    const rest = Effect.promise(async () => {
      let text = ""
      while (true) {
        const { done, value } = await reader.read()
        if (done) return text
        text += decoder.decode(value)
      }
    })
    return { first, rest }
  })

layer(TestDatabase)("shutdown", (it) => {
  it.scoped("readiness turns 503, answers say Connection: close, event streams end with a shutdown event", () =>
    Effect.gen(function*() {
      const lifecycle = yield* Layer.build(Lifecycle.live)
      const client = yield* makeTestClient({ lifecycle: Layer.succeedContext(lifecycle) })
      const player = yield* signIn(client, "stays-till-the-end")
      expect((yield* client.get("/api/ready")).status).toBe(200)
      const realtime = yield* client.open("/api/realtime", { headers: player.auth })
      const drops = yield* client.open("/api/live-drops/stream", { headers: player.auth })
      expect([realtime.status, drops.status]).toEqual([200, 200])
      const streams = [yield* reading(realtime), yield* reading(drops)]
      for (const { first } of streams) expect(first).toBe(": connected\n\n")
      const ends = yield* Effect.fork(Effect.all(streams.map(({ rest }) => rest), { concurrency: 2 }))

      yield* Context.get(lifecycle, Lifecycle).beginShutdown
      expect(yield* ends).toEqual(["event: shutdown\ndata: {}\n\n", "event: shutdown\ndata: {}\n\n"])
      const ready = yield* client.get("/api/ready")
      expect(ready.status).toBe(503)
      expect(ready.body).toEqual({ statusCode: 503, message: "Service unavailable: shutting down" })
      expect(ready.headers.get("connection")).toBe("close")
      // Requests still being served finish normally.
      const me = yield* client.get("/api/auth/me", player.auth)
      expect(me.status).toBe(200)
      expect(me.headers.get("connection")).toBe("close")
      expect((yield* client.get("/api/health")).status).toBe(200)
    }))
})
