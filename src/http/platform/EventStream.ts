/** Server-Sent Events responses from a stream of messages, with a heartbeat for proxies. */
import { HttpServerResponse } from "@effect/platform"
import { Chunk, Effect, Schedule, type Scope, Stream } from "effect"
import { Lifecycle } from "../../layers/Lifecycle"
import { sseClientOpen } from "../../layers/AppMetrics"

const HEARTBEAT = "15 seconds"
const encoder = new TextEncoder()

/** The last event of every stream when the service shuts down: clients reconnect to another instance. */
const SHUTDOWN_EVENT = "event: shutdown\ndata: {}\n\n"

/**
 * Subscribes when the client starts reading and unsubscribes when it goes away; `toEvent` turns a
 * message into `event: <name>\ndata: <json>\n\n`. The response ends when `ended` completes (the
 * session it was opened with is revoked), and with SHUTDOWN_EVENT when the service stops (docs/rules.md#event-streams).
 */
export const eventStream = <E, E1, E2>(
  subscribe: Effect.Effect<Stream.Stream<string, E>, E1, Scope.Scope>,
  toEvent: (message: string) => string,
  ended: Effect.Effect<Effect.Effect<void>, E2, Scope.Scope>
) =>
  Effect.map(Lifecycle, (lifecycle) =>
    HttpServerResponse.stream(
      Stream.unwrapScoped(Effect.gen(function*() {
        const messages = yield* subscribe
        const end = yield* ended
        yield* sseClientOpen
        return Stream.merge(
          Stream.map(messages, toEvent),
          Stream.fromSchedule(Schedule.spaced(HEARTBEAT)).pipe(Stream.as(": heartbeat\n\n"))
        ).pipe(
          Stream.prepend(Chunk.of(": connected\n\n")),
          Stream.interruptWhen(end),
          Stream.interruptWhen(lifecycle.shutdown),
          // After either end; only a shutdown says goodbye.
          Stream.concat(Stream.fromEffect(lifecycle.draining).pipe(Stream.filter((draining) => draining), Stream.as(SHUTDOWN_EVENT)))
        )
      })).pipe(Stream.map((text) => encoder.encode(text))),
      { contentType: "text/event-stream", headers: { "cache-control": "no-cache", "x-accel-buffering": "no" } }
    ))
