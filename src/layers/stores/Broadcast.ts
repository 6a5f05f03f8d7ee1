/**
 * Publish/subscribe for realtime fan-out across instances (docs/rules.md#realtime). With Redis, one subscriber
 * connection per process carries every channel that has local subscribers (refcounted SUBSCRIBE and
 * UNSUBSCRIBE), and each message fans out locally to a callback per subscriber. In memory the local
 * fan-out alone does it.
 */
import { Cause, Context, Deferred, Effect, Layer, Runtime, type Scope } from "effect"
import type { ServiceUnavailable } from "../../schema/platform/Errors"
import { storeCall } from "../Failures"
import type { StartupError } from "../AppConfig"
import { RedisConnection } from "./RedisConnection"

/** A message for a channel's subscribers. */
export interface Publication {
  readonly channel: string
  readonly message: string
}

/**
 * What a subscriber does with one delivery: a channel's messages in order, a burst together (at most one delivery per
 * COALESCE_MS, MESSAGES_PER_DELIVERY messages at most). Called synchronously from the fan-out, so it must only hand
 * the messages on (an event stream writes them to its response), never wait.
 */
export type Deliver = (messages: ReadonlyArray<string>) => void

interface BroadcastShape {
  /**
   * Announces, in the order given: best effort (what it announces is already committed), so it never fails its
   * publisher; a failure is logged. With one Redis (or Sentinel's primary) the commands are sent and their replies
   * not waited for: the publisher's next command on the connection (the user lock's release) reaches Redis after
   * them. On a cluster a channel and the lock's key may live on two nodes, so there the replies are waited for,
   * to keep a user's pushes in the order of their operations (docs/decisions.md "Redis round trips of a request").
   */
  readonly publish: (...publications: ReadonlyArray<Publication>) => Effect.Effect<void>
  /**
   * Publishes in the order given and waits until Redis has taken them; fails (503) if it has not. For a
   * publication that must not be lost without its caller knowing: a session's end, which closes its open streams.
   */
  readonly publishConfirmed: (...publications: ReadonlyArray<Publication>) => Effect.Effect<void, ServiceUnavailable>
  /**
   * Subscribes for the lifetime of the scope: every message published after this effect completes is given to
   * `deliver`, in order. A subscriber keeps no queue here: holding what its client has not taken yet, and dropping a
   * client that falls too far behind, is the subscriber's own (src/http/platform/EventStream.ts).
   */
  readonly subscribe: (channel: string, deliver: Deliver) => Effect.Effect<void, ServiceUnavailable, Scope.Scope>
}

/**
 * A channel passes its messages on at most once per COALESCE_MS (docs/decisions.md "Live-drop fan-out"): the
 * first message after a quiet moment goes at once, those that follow within the window go together at its end.
 * A burst then costs each subscriber one delivery (one write to its client) instead of one per message, up to
 * MESSAGES_PER_DELIVERY: 200 drops a second to 5 000 streams is 100 000 deliveries a second, not a million.
 */
const COALESCE_MS = 250
/**
 * The most messages in one delivery: a window that gathers this many is passed on at once, so that a delivery stays
 * small against the messages a client may have waiting (EventStream's SUBSCRIBER_QUEUE_LIMIT).
 */
const MESSAGES_PER_DELIVERY = 64

/** A local subscriber. */
interface Subscriber {
  readonly deliver: Deliver
  /** Messages of the current window published before it subscribed: not its own. */
  skip: number
}

interface Channel {
  readonly subscribers: Set<Subscriber>
  /** Completes once the channel's messages reach `subscribers` (the Redis SUBSCRIBE is confirmed). */
  readonly ready: Deferred.Deferred<void, ServiceUnavailable>
  refs: number
  /** Messages of the current window, passed on at its end. */
  pending: Array<string>
  /** The end of the current window, while messages wait for it. */
  timer: ReturnType<typeof setTimeout> | undefined
  /** When the channel last passed messages on (ms). */
  lastDelivery: number
}

/** What connects a fan-out's channel to its source (see `makeFanout`). */
interface FanoutHooks {
  readonly onFirst: (channel: string) => Effect.Effect<void, ServiceUnavailable>
  readonly onLast: (channel: string) => Effect.Effect<void>
}

/** A fan-out's `subscribe` (see `makeFanout`): `deliver` among `channel`'s subscribers, the first connecting it. */
const subscribeTo = Effect.fnUntraced(function*(
  channels: Map<string, Channel>,
  hooks: FanoutHooks,
  channel: string,
  deliver: Deliver
) {
  const subscriber: Subscriber = { deliver, skip: 0 }
  const { entry, first } = yield* Effect.acquireRelease(
    Effect.suspend(() => {
      const existing = channels.get(channel)
      if (existing !== undefined) {
        existing.refs++
        subscriber.skip = existing.pending.length
        existing.subscribers.add(subscriber)
        return Effect.succeed({ entry: existing, first: false })
      }
      return Effect.map(Deferred.make<void, ServiceUnavailable>(), (ready) => {
        const entry: Channel = {
          subscribers: new Set([subscriber]),
          ready,
          refs: 1,
          pending: [],
          timer: undefined,
          lastDelivery: 0
        }
        channels.set(channel, entry)
        return { entry, first: true }
      })
    }),
    ({ entry }) =>
      Effect.suspend(() => {
        entry.subscribers.delete(subscriber)
        entry.refs--
        if (entry.refs > 0) return Effect.void
        clearTimeout(entry.timer)
        if (channels.get(channel) === entry) channels.delete(channel)
        return hooks.onLast(channel)
      })
  )
  // Uninterruptible: other subscribers of the channel wait for `ready`.
  if (first) yield* Effect.uninterruptible(Deferred.complete(entry.ready, hooks.onFirst(channel)))
  yield* Deferred.await(entry.ready)
})

/**
 * Local fan-out with per-channel reference counts; `onFirst` and `onLast` connect a channel to its
 * source. A subscriber is in the channel before the source is connected, so nothing that arrives once the
 * source is connected can be missed. Messages are passed on in order, those of one COALESCE_MS window
 * together, to every subscriber, synchronously: no fiber, queue or stream per subscriber.
 */
const makeFanout = (hooks: FanoutHooks) =>
  Effect.map(Effect.runtime<never>(), (runtime) => {
    const log = Runtime.runFork(runtime)
    const channels = new Map<string, Channel>()

    const subscribe = (channel: string, deliver: Deliver): Effect.Effect<void, ServiceUnavailable, Scope.Scope> =>
      subscribeTo(channels, hooks, channel, deliver)

    /** Passes the channel's waiting messages on, as one delivery to each subscriber. */
    const flush = (entry: Channel): void => {
      clearTimeout(entry.timer)
      entry.timer = undefined
      entry.lastDelivery = Date.now()
      const delivery = entry.pending
      entry.pending = []
      for (const subscriber of entry.subscribers) {
        const own = subscriber.skip === 0 ? delivery : delivery.slice(subscriber.skip)
        subscriber.skip = 0
        if (own.length === 0) continue
        // A subscriber that throws (a defect) is let go: the others still get the delivery, and the publisher (a
        // request, a Redis event, a timer) does not fail with it.
        try {
          subscriber.deliver(own)
        } catch (error) {
          entry.subscribers.delete(subscriber)
          log(Effect.logError("A broadcast subscriber failed on a delivery; it gets no more", Cause.die(error)))
        }
      }
    }

    /** Delivers to local subscribers (see COALESCE_MS); synchronous, for use from event handlers. */
    const deliver = (channel: string, message: string): void => {
      const entry = channels.get(channel)
      if (entry === undefined) return
      entry.pending.push(message)
      if (entry.pending.length >= MESSAGES_PER_DELIVERY) return flush(entry)
      if (entry.timer !== undefined) return
      const wait = entry.lastDelivery + COALESCE_MS - Date.now()
      if (wait <= 0) flush(entry)
      else entry.timer = setTimeout(() => flush(entry), wait)
    }

    return { subscribe, deliver }
  })

const makeMemory = Effect.map(makeFanout({ onFirst: () => Effect.void, onLast: () => Effect.void }), (fanout): BroadcastShape => {
  const publish = (...publications: ReadonlyArray<Publication>) =>
    Effect.sync(() => {
      for (const { channel, message } of publications) fanout.deliver(channel, message)
    })
  return { publish, publishConfirmed: publish, subscribe: fanout.subscribe }
})

const makeRedis: Effect.Effect<BroadcastShape, StartupError, RedisConnection | Scope.Scope> = Effect.gen(
  function*() {
    const connection = yield* RedisConnection
    const { client, prefix, sharded } = connection
    const subscriber = yield* connection.subscriber
    const channelKey = (channel: string) => `${prefix}bc:${channel}`
    // On a cluster, sharded pub/sub: one channel's messages all go through the node of its slot, in order.
    const commands = sharded
      ? { publish: "spublish", subscribe: "ssubscribe", unsubscribe: "sunsubscribe", message: "smessage" } as const
      : { publish: "publish", subscribe: "subscribe", unsubscribe: "unsubscribe", message: "message" } as const
    const fanout = yield* makeFanout({
      // ioredis resolves these once Redis confirms; it also resubscribes by itself after a reconnect.
      onFirst: (channel) => Effect.asVoid(storeCall(() => subscriber[commands.subscribe](channelKey(channel)))),
      // During an outage there is nothing to unsubscribe from; ioredis resubscribes only what is left.
      onLast: (channel) => Effect.ignore(storeCall(() => subscriber[commands.unsubscribe](channelKey(channel))))
    })
    const own = `${prefix}bc:`
    const failed = (cause: unknown) => Effect.logWarning("A publication failed", Cause.fail(cause))
    // Where a publication not waited for is logged when it fails: this layer's runtime (its logger).
    const runtime = yield* Effect.runtime<never>()
    const logFailure = (cause: unknown) => void Runtime.runFork(runtime)(failed(cause))
    subscriber.on(commands.message, (channel: string, message: string) => {
      if (channel.startsWith(own)) fanout.deliver(channel.slice(own.length), message)
    })
    // The commands of one turn of the event loop leave in one write (RedisConnection): one round trip for several.
    const publishConfirmed = (...publications: ReadonlyArray<Publication>) =>
      Effect.asVoid(storeCall(() =>
        Promise.all(publications.map(({ channel, message }) => client[commands.publish](channelKey(channel), message)))
      ))
    return {
      publish: sharded
        ? (...publications) => Effect.catchAll(publishConfirmed(...publications), failed)
        : (...publications) =>
          Effect.sync(() => {
            for (const { channel, message } of publications) {
              client[commands.publish](channelKey(channel), message).catch(logFailure)
            }
          }),
      publishConfirmed,
      subscribe: fanout.subscribe
    }
  }
)

export class Broadcast extends Context.Tag("app/Broadcast")<Broadcast, BroadcastShape>() {
  static readonly memory: Layer.Layer<Broadcast> = Layer.effect(this, makeMemory)
  static readonly redis: Layer.Layer<Broadcast, StartupError, RedisConnection> = Layer.scoped(this, makeRedis)
}
