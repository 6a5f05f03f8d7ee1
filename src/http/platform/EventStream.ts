/** Server-Sent Events responses from a stream of messages, with a heartbeat for proxies. */
import { HttpServerResponse } from "@effect/platform"
import { Chunk, Clock, Duration, Effect, Schedule, type Scope, Stream } from "effect"
import { Lifecycle } from "../../layers/Lifecycle"
import { sseClientOpen } from "../../layers/AppMetrics"
import { Realtime } from "../../services/platform/Realtime"

const HEARTBEAT = "15 seconds"
/** The longest a stream stays open (docs/rules.md#stream-limits); then it ends and the client reconnects. */
const MAX_STREAM_LIFE = Duration.toMillis("24 hours")
const encoder = new TextEncoder()

/** The last event of every stream when the service shuts down: clients reconnect to another instance. */
const SHUTDOWN_EVENT = "event: shutdown\ndata: {}\n\n"

/** The last event of a stream ended by one of its limits (docs/rules.md#stream-limits), and why. */
const closedEvent = (reason: "replaced" | "expired" | "lagging") => `event: closed\ndata: {"reason":"${reason}"}\n\n`
const REPLACED_EVENT = closedEvent("replaced")
const EXPIRED_EVENT = closedEvent("expired")
const LAGGING_EVENT = closedEvent("lagging")

/**
 * Subscribes when the client starts reading and unsubscribes when it goes away; `toEvent` turns a
 * message into `event: <name>\ndata: <json>\n\n`. The stream counts as one of its owner's open streams.
 * The response ends when `ended` completes (the session it was opened with is revoked), with
 * SHUTDOWN_EVENT when the service stops (docs/rules.md#event-streams), and with a `closed` event when the
 * owner opens one stream too many, after MAX_STREAM_LIFE, or when the client falls too far behind (the
 * messages end: see Broadcast) (docs/rules.md#stream-limits).
 */
export const eventStream = <E, E1, E2>(
  owner: bigint,
  subscribe: Effect.Effect<Stream.Stream<string, E>, E1, Scope.Scope>,
  toEvent: (message: string) => string,
  ended: Effect.Effect<Effect.Effect<void>, E2, Scope.Scope>
) =>
  Effect.map(Effect.zip(Lifecycle, Realtime), ([lifecycle, realtime]) =>
    HttpServerResponse.stream(
      Stream.unwrapScoped(Effect.gen(function*() {
        const messages = yield* subscribe
        const end = yield* ended
        const replaced = yield* realtime.streamOpened(owner)
        const closesAt = (yield* Clock.currentTimeMillis) + MAX_STREAM_LIFE
        yield* sseClientOpen
        // The messages end only when the client fell too far behind; anything else that ends the stream
        // says here what its last event is ("" for none).
        let last = LAGGING_EVENT
        const stop = Effect.raceAll([
          Effect.as(end, ""),
          Effect.as(lifecycle.shutdown, SHUTDOWN_EVENT),
          Effect.as(replaced, REPLACED_EVENT),
          // From the opening time, however late this starts.
          Effect.as(Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sleep(Math.max(0, closesAt - now))), EXPIRED_EVENT)
        ]).pipe(Effect.map((event) => {
          last = event
        }))
        return Stream.merge(
          Stream.map(messages, toEvent),
          Stream.fromSchedule(Schedule.spaced(HEARTBEAT)).pipe(Stream.as(": heartbeat\n\n")),
          { haltStrategy: "left" }
        ).pipe(
          Stream.prepend(Chunk.of(": connected\n\n")),
          // One signal for every end: each interruptWhen would cost every event a merge step.
          Stream.interruptWhen(stop),
          // A shutdown says goodbye whatever ended the stream.
          Stream.concat(Stream.fromEffect(lifecycle.draining).pipe(
            Stream.map((draining) => draining ? SHUTDOWN_EVENT : last),
            Stream.filter((event) => event !== "")
          ))
        )
      })).pipe(Stream.map((text) => encoder.encode(text))),
      { contentType: "text/event-stream", headers: { "cache-control": "no-cache", "x-accel-buffering": "no" } }
    ))
