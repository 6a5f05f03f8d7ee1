/**
 * Server-Sent Events responses: the fan-out writes each delivery straight into the response's body (no fiber, queue or
 * stream per delivery), with a heartbeat for proxies.
 */
import { HttpServerResponse } from "@effect/platform"
import { Clock, Duration, Effect, Exit, Runtime, Scope } from "effect"
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
 * whichever end comes first. Its methods are not named `write` or `end`: Node would take it for a writable stream.
 */
class EventBody extends Readable {
  private waiting: Array<Uint8Array> = [CONNECTED]
  private waitingMessages = 0
  /** The connection asked for a chunk that was not there yet. */
  private wanted = false
  private ended = false
  /** Open while nothing waits: the client has taken everything sent (closed when it stopped reading). */
  readonly caughtUp = Effect.unsafeMakeLatch(true)

  constructor() {
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
 * answer (a store that fails is a 503, not a broken stream) and let go when the body closes: the client went away, or
 * read the last event.
 *
 * The stream ends, once, at the first of: `whenEnded` calls back (the session it was opened with is revoked: no last
 * event); the service stops (SHUTDOWN_EVENT, docs/rules.md#event-streams); the owner opens one stream too many;
 * MAX_STREAM_LIFE has passed; or the client falls SUBSCRIBER_QUEUE_LIMIT messages behind (each a `closed` event). An
 * open stream is one fiber (its heartbeat) besides the request's.
 */
export const eventStream = <E1, E2>(
  owner: bigint,
  subscribe: (deliver: Deliver) => Effect.Effect<void, E1, Scope.Scope>,
  toEvent: (message: string) => string,
  whenEnded: (onEnded: () => void) => Effect.Effect<void, E2, Scope.Scope>
) =>
  Effect.gen(function*() {
    const lifecycle = yield* Lifecycle
    const realtime = yield* Realtime
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const encode = encoderOf(toEvent)
    const scope = yield* Scope.make()
    const body = new EventBody()
    body.once("close", () => runFork(Scope.close(scope, Exit.void)))
    const endWith = (event: Uint8Array) => () => body.finish(event)
    const closesAt = (yield* Clock.currentTimeMillis) + MAX_STREAM_LIFE
    // A heartbeat every HEARTBEAT_MS until MAX_STREAM_LIFE from the opening, however late this starts. It waits while
    // the client is not reading (a heartbeat would tell it nothing): the end is seen when it reads on.
    const beat: Effect.Effect<void> = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      now >= closesAt
        ? Effect.sync(endWith(EXPIRED_EVENT))
        : Effect.sleep(Math.min(HEARTBEAT_MS, closesAt - now)).pipe(
          Effect.zipRight(Clock.currentTimeMillis),
          Effect.flatMap((then) => then >= closesAt ? Effect.void : Effect.sync(() => body.send(HEARTBEAT_COMMENT, 0))),
          Effect.zipRight(body.caughtUp.await),
          Effect.zipRight(Effect.suspend(() => beat))
        ))
    yield* Effect.gen(function*() {
      yield* sseClientOpen
      yield* realtime.streamOpened(owner, endWith(REPLACED_EVENT))
      yield* lifecycle.onShutdown(endWith(SHUTDOWN_EVENT))
      yield* subscribe((messages) => {
        if (!body.send(encode(messages), messages.length)) body.finish(LAGGING_EVENT, true)
      })
      yield* whenEnded(endWith(NONE))
      yield* Effect.forkScoped(beat)
    }).pipe(
      Scope.extend(scope),
      Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, exit))
    )
    return HttpServerResponse.raw(body, {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
    })
  })
