/** Handlers of the live-drop feed; the stream is Server-Sent Events. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { LiveDrops } from "../services/LiveDrops"
import { Api } from "./Api"
import { eventStream } from "./EventStream"

export const LiveDropsLive = HttpApiBuilder.group(Api, "liveDrops", (handlers) =>
  Effect.gen(function*() {
    const drops = yield* LiveDrops
    return handlers
      .handle("recent", ({ urlParams }) => Effect.map(drops.recent(urlParams.limit), (list) => ({ drops: list })))
      .handle("stream", () =>
        eventStream(drops.subscribe, (json) => `event: drop\ndata: ${json}\n\n`))
  }))

export const LiveDropsAdminLive = HttpApiBuilder.group(Api, "liveDropsAdmin", (handlers) =>
  Effect.gen(function*() {
    const drops = yield* LiveDrops
    return handlers.handle("emit", ({ payload }) => drops.emit(payload))
  }))
