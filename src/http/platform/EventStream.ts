/** Server-Sent Events responses from a stream of messages, with a heartbeat for proxies. */
import { HttpServerResponse } from "@effect/platform"
import { Chunk, Clock, Deferred, Duration, Effect, Exit, Fiber, FiberId, Queue, type Scope, Stream } from "effect"
import { Lifecycle } from "../../layers/Lifecycle"
import { sseClientOpen } from "../../layers/AppMetrics"
import { Realtime } from "../../services/platform/Realtime"

const HEARTBEAT_MS = Duration.toMillis("15 seconds")
/** The longest a stream stays open (docs/rules.md#stream-limits); then it ends and the client reconnects. */
const MAX_STREAM_LIFE = Duration.toMillis("24 hours")
const encoder = new TextEncoder()

const CONNECTED = encoder.encode(": connected\n\n")
const HEARTBEAT_COMMENT = encoder.encode(": heartbeat\n\n")
/** The last event of every stream when the service shuts down: clients reconnect to another instance. */
const SHUTDOWN_EVENT = encoder.encode("event: shutdown\ndata: {}\n\n")
/** The last event of a stream ended by one of its limits (docs/rules.md#stream-limits), and why. */
const closedEvent = (reason: "replaced" | "expired" | "lagging") => encoder.encode(`event: closed\ndata: {"reason":"${reason}"}\n\n`)
const REPLACED_EVENT = closedEvent("replaced")
const EXPIRED_EVENT = closedEvent("expired")
const LAGGING_EVENT = closedEvent("lagging")
/** No last event (the session ended: its client signs in again). */
const NONE = new Uint8Array(0)

/**
 * How many writes wait for one response at most. The bounded buffer is the subscription's (Broadcast: a client
 * that falls SUBSCRIBER_QUEUE_LIMIT messages behind is dropped there); this one only hands them to the response,
 * and is small so that little more than that limit waits for a client that stopped reading.
 */
const PENDING_WRITES = 16
/** The end of a response's writes. */
const END = Symbol("end")

/**
 * A message's event bytes, made once per message and `toEvent` however many streams send it (a live drop goes to
 * every open stream): the last RECENT_EVENTS messages are kept, more than a stream can have waiting before it is
 * dropped (Broadcast's SUBSCRIBER_QUEUE_LIMIT), so that streams behind by hundreds still share them.
 */
const RECENT_EVENTS = 2048
const encoders = new WeakMap<(message: string) => string, (message: string) => Uint8Array>()
const encoderOf = (toEvent: (message: string) => string) => {
  const known = encoders.get(toEvent)
  if (known !== undefined) return known
  const recent = new Map<string, Uint8Array>()
  const encode = (message: string) => {
    let bytes = recent.get(message)
    if (bytes === undefined) {
      bytes = encoder.encode(toEvent(message))
      if (recent.size >= RECENT_EVENTS) recent.delete(recent.keys().next().value!)
      recent.set(message, bytes)
    }
    return bytes
  }
  encoders.set(toEvent, encode)
  return encode
}

/** What waited together, as one write. */
const joined = (chunk: Chunk.Chunk<Uint8Array>): Chunk.Chunk<Uint8Array> =>
  Chunk.size(chunk) <= 1 ? chunk : Chunk.of(Buffer.concat(Chunk.toReadonlyArray(chunk)))

/**
 * Subscribes when the client starts reading and unsubscribes when it goes away; `toEvent` turns a message into
 * `event: <name>\ndata: <json>\n\n` (a function made once, not per request: its events are shared by all streams).
 * The stream counts as one of its owner's open streams. The response ends when `ended` completes (the session it
 * was opened with is revoked), with SHUTDOWN_EVENT when the service stops (docs/rules.md#event-streams), and with a
 * `closed` event when the owner opens one stream too many, after MAX_STREAM_LIFE, or when the client falls too far
 * behind (the messages end: see Broadcast) (docs/rules.md#stream-limits).
 *
 * Everything the response writes goes through one queue; what waited together is one write. Every end completes
 * one signal with the stream's last event, the first one to come winning: shutdown and replacement by callbacks,
 * the lag by the forwarding fiber's end, the 24 h by the heartbeat's fiber, the session by a fiber of its own. An
 * open stream is four fibers besides the request's (it was nine, with a fiber for each end raced), and each event
 * costs a queue offer and take, no per-event merge or race.
 */
export const eventStream = <E, E1, E2>(
  owner: bigint,
  subscribe: Effect.Effect<Stream.Stream<string, E>, E1, Scope.Scope>,
  toEvent: (message: string) => string,
  ended: Effect.Effect<Effect.Effect<void>, E2, Scope.Scope>
) =>
  Effect.map(Effect.zip(Lifecycle, Realtime), ([lifecycle, realtime]) => {
    const encode = encoderOf(toEvent)
    return HttpServerResponse.stream(
      Stream.unwrapScoped(Effect.gen(function*() {
        const messages = yield* subscribe
        const end = yield* ended
        const closesAt = (yield* Clock.currentTimeMillis) + MAX_STREAM_LIFE
        /** The stream's last event (NONE: none), set once by whichever end comes first. */
        const last = Deferred.unsafeMake<Uint8Array>(FiberId.none)
        const finish = (event: Uint8Array) => () => void Deferred.unsafeDone(last, Exit.succeed(event))
        yield* realtime.streamOpened(owner, finish(REPLACED_EVENT))
        yield* lifecycle.onShutdown(finish(SHUTDOWN_EVENT))
        yield* sseClientOpen
        const writes = yield* Queue.bounded<Uint8Array | typeof END>(PENDING_WRITES)
        // The messages end (however they end) only when the client fell too far behind.
        const forwarding = yield* Stream.runForEachChunk(messages, (chunk) => Queue.offerAll(writes, Chunk.map(chunk, encode))).pipe(
          Effect.ensuring(Effect.sync(finish(LAGGING_EVENT))),
          Effect.forkScoped
        )
        // A heartbeat every HEARTBEAT_MS until MAX_STREAM_LIFE from the opening, however late this starts. It waits
        // while the writes are full (a client that stopped reading): the end is seen when the client reads on.
        const beat: Effect.Effect<void> = Effect.flatMap(Clock.currentTimeMillis, (now) =>
          now >= closesAt
            ? Effect.sync(finish(EXPIRED_EVENT))
            : Effect.sleep(Math.min(HEARTBEAT_MS, closesAt - now)).pipe(
              Effect.zipRight(Clock.currentTimeMillis),
              Effect.flatMap((then) => then >= closesAt ? Effect.void : Queue.offer(writes, HEARTBEAT_COMMENT)),
              Effect.zipRight(Effect.suspend(() => beat))
            ))
        const beating = yield* Effect.forkScoped(beat)
        yield* end.pipe(Effect.zipRight(Effect.sync(finish(NONE))), Effect.forkScoped)
        yield* Deferred.await(last).pipe(
          // A shutdown says goodbye whatever ended the stream.
          Effect.flatMap((event) => Effect.map(lifecycle.draining, (draining) => draining ? SHUTDOWN_EVENT : event)),
          Effect.tap(() => Effect.zipRight(Fiber.interrupt(forwarding), Fiber.interrupt(beating))),
          Effect.flatMap((event) => Queue.offerAll(writes, event === NONE ? [END] : [event, END])),
          Effect.forkScoped
        )
        return Stream.fromQueue(writes).pipe(
          Stream.takeWhile((write): write is Uint8Array => write !== END),
          Stream.prepend(Chunk.of(CONNECTED)),
          Stream.mapChunks(joined)
        )
      })),
      { contentType: "text/event-stream", headers: { "cache-control": "no-cache", "x-accel-buffering": "no" } }
    )
  })
