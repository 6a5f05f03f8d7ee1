/**
 * Server-Sent Events responses: the fan-out writes each delivery straight into the response's body (no fiber, queue or
 * stream per delivery), with a heartbeat for proxies.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Clock, Duration, Effect, Exit, Runtime, Scope } from "effect"
import type { ServerResponse } from "node:http"
import { Readable } from "node:stream"
import { Lifecycle } from "../../layers/Lifecycle"
import { sseClientOpen } from "../../layers/AppMetrics"
import type { Deliver } from "../../layers/stores/Broadcast"
import { Realtime } from "../../services/platform/Realtime"

const HEARTBEAT_MS = Duration.toMillis("15 seconds")
/** The longest a stream stays open (docs/rules.md#stream-limits); then it ends and the client reconnects. */
const MAX_STREAM_LIFE = Duration.toMillis("24 hours")
/**
 * The most messages that wait for one client (docs/rules.md#stream-limits): written to its stream and not yet taken by
 * its connection. One more and the stream ends with `closed: lagging`, what waited let go: a client that stopped
 * reading holds this much at most, and never holds up the others.
 */
const SUBSCRIBER_QUEUE_LIMIT = 1000
/**
 * How long a stream that ended (its last event written) may wait for its client to read that event; then its
 * connection is closed. What it held is let go at the end already: this only frees the connection of a client that
 * stopped reading.
 */
const LAST_READ_GRACE_MS = Duration.toMillis("30 seconds")
const encoder = new TextEncoder()
const CONTENT_TYPE = "text/event-stream"
const HEADERS = { "cache-control": "no-cache", "x-accel-buffering": "no" }

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
 * A delivery's event bytes, made once however many streams write it: the fan-out hands the same array to every
 * subscriber of the channel, so 5 000 streams write one buffer. One cache per `toEvent` (a function made once, not
 * per request).
 */
const encoders = new WeakMap<(message: string) => string, (messages: ReadonlyArray<string>) => Uint8Array>()
const encoderOf = (toEvent: (message: string) => string) => {
  const known = encoders.get(toEvent)
  if (known !== undefined) return known
  const made = new WeakMap<ReadonlyArray<string>, Uint8Array>()
  const encode = (messages: ReadonlyArray<string>) => {
    let bytes = made.get(messages)
    if (bytes === undefined) {
      bytes = encoder.encode(messages.map(toEvent).join(""))
      made.set(messages, bytes)
    }
    return bytes
  }
  encoders.set(toEvent, encode)
  return encode
}

/**
 * The response's body. Its connection takes one chunk at a time (`_read`); what it has not taken waits here, joined
 * into one chunk when it asks again, and counts against SUBSCRIBER_QUEUE_LIMIT. `finish` writes the last event once,
 * whichever end comes first, and calls `onFinish`; a body not read to its end LAST_READ_GRACE_MS later is destroyed.
 * Its methods are not named `write` or `end`: Node would take it for a writable stream.
 */
class EventBody extends Readable {
  private waiting: Array<Uint8Array> = [CONNECTED]
  private waitingMessages = 0
  /** The connection asked for a chunk that was not there yet. */
  private wanted = false
  private ended = false
  /** Open while nothing waits: the client has taken everything sent (closed when it stopped reading). */
  readonly caughtUp = Effect.unsafeMakeLatch(true)

  constructor(private readonly onFinish: () => void) {
    super({ highWaterMark: 1 })
  }

  override _read(): void {
    this.wanted = true
    this.pass()
  }

  /** Sends `messages` events' bytes; false when the client is SUBSCRIBER_QUEUE_LIMIT messages behind. */
  send(bytes: Uint8Array, messages: number): boolean {
    if (this.ended) return true
    this.waiting.push(bytes)
    this.waitingMessages += messages
    if (this.waitingMessages > SUBSCRIBER_QUEUE_LIMIT) return false
    this.pass()
    if (this.waiting.length > 0) this.caughtUp.unsafeClose()
    return true
  }

  /** The stream's last event (NONE: none) after what waits, or instead of it (`dropWaiting`), then its end. */
  finish(event: Uint8Array, dropWaiting = false): void {
    if (this.ended) return
    this.ended = true
    if (dropWaiting) this.waiting = []
    if (event.length > 0) this.waiting.push(event)
    if (this.waiting.length > 0) this.push(joined(this.waiting))
    this.waiting = []
    this.push(null)
    this.caughtUp.unsafeOpen()
    this.onFinish()
    const late = setTimeout(() => this.destroy(), LAST_READ_GRACE_MS).unref()
    this.once("close", () => clearTimeout(late))
  }

  private pass(): void {
    if (!this.wanted || this.waiting.length === 0) return
    const chunk = joined(this.waiting)
    this.waiting = []
    this.waitingMessages = 0
    this.wanted = this.push(chunk)
    this.caughtUp.unsafeOpen()
  }
}

const joined = (chunks: ReadonlyArray<Uint8Array>): Uint8Array => chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)

/**
 * An event stream of `owner` (one of their open streams, docs/rules.md#stream-limits): `subscribe` is given the
 * function that writes a delivery; `toEvent` turns a message into `event: <name>\ndata: <json>\n\n` (a function made
 * once, not per request: a delivery's events are made once for all streams). Everything is subscribed before the
 * answer (a store that fails is a 503, not a broken stream, and replaces none of the owner's streams) and let go when
 * the stream ends or its body closes (the client went away; on Node, also the response's end, so that a body never
 * read, as a HEAD's, holds nothing). A HEAD is answered with the headers alone, nothing subscribed.
 *
 * The stream ends, once, at the first of: `whenEnded` calls back (the session it was opened with is revoked: no last
 * event); the service stops (SHUTDOWN_EVENT, docs/rules.md#event-streams); the owner opens one stream too many;
 * MAX_STREAM_LIFE has passed; or the client falls SUBSCRIBER_QUEUE_LIMIT messages behind (each a `closed` event). An
 * open stream is one fiber (its heartbeat) besides the request's.
 */
export const eventStream = Effect.fnUntraced(function*<E1, E2>(owner: bigint, subscribe: (deliver: Deliver) => Effect.Effect<void, E1, Scope.Scope>, toEvent: (message: string) => string, whenEnded: (onEnded: () => void) => Effect.Effect<void, E2, Scope.Scope>) {
  const request = yield* HttpServerRequest.HttpServerRequest
  // The router answers a HEAD with the GET's handler.
  if (request.method === "HEAD") return HttpServerResponse.empty({ status: 200, headers: { "content-type": CONTENT_TYPE, ...HEADERS } })
  const lifecycle = yield* Lifecycle
  const realtime = yield* Realtime
  const runFork = Runtime.runFork(yield* Effect.runtime<never>())
  const encode = encoderOf(toEvent)
  const scope = yield* Scope.make()
  let released = false
  // After the current callback (an end may come from inside the fan-out, the shutdown or the replacement).
  const release = () => {
    if (!released) queueMicrotask(() => runFork(Scope.close(scope, Exit.void)))
    released = true
  }
  const body = new EventBody(release)
  body.once("close", release)
  ;(NodeHttpServerRequest.toServerResponse(request) as ServerResponse | undefined)?.once("close", () => body.destroy())
  const endWith = (event: Uint8Array) => () => body.finish(event)
  const closesAt = (yield* Clock.currentTimeMillis) + MAX_STREAM_LIFE
  // A heartbeat every HEARTBEAT_MS until MAX_STREAM_LIFE from the opening, however late this starts. While the
  // client is not reading it waits (a heartbeat would tell it nothing) until it reads on or the stream's life ends.
  const beat: Effect.Effect<void> = Effect.flatMap(Clock.currentTimeMillis, (now) =>
    now >= closesAt
      ? Effect.sync(endWith(EXPIRED_EVENT))
      : Effect.sleep(Math.min(HEARTBEAT_MS, closesAt - now)).pipe(
        Effect.zipRight(Clock.currentTimeMillis),
        Effect.flatMap((then) =>
          then >= closesAt
            ? Effect.void
            : Effect.zipRight(
              Effect.sync(() => body.send(HEARTBEAT_COMMENT, 0)),
              Effect.raceFirst(body.caughtUp.await, Effect.sleep(closesAt - then))
            )
        ),
        Effect.zipRight(Effect.suspend(() => beat))
      ))
  yield* sseClientOpen.pipe(
    Effect.flatMap(() =>
      subscribe((messages) => {
        if (!body.send(encode(messages), messages.length)) body.finish(LAGGING_EVENT, true)
      })
    ),
    Effect.flatMap(() => whenEnded(endWith(NONE))),
    Effect.flatMap(() => lifecycle.onShutdown(endWith(SHUTDOWN_EVENT))),
    // Last: a stream that could not open replaces none of its owner's others.
    Effect.flatMap(() => realtime.streamOpened(owner, endWith(REPLACED_EVENT))),
    Effect.flatMap(() => Effect.forkScoped(beat)),
    Scope.extend(scope),
    Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, exit))
  )
  return HttpServerResponse.raw(body, { contentType: CONTENT_TYPE, headers: HEADERS })
})
