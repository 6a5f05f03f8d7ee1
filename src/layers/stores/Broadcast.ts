/**
 * Publish/subscribe for realtime fan-out across instances (docs/rules.md#realtime). With Redis, one subscriber
 * connection per process carries every channel that has local subscribers (refcounted SUBSCRIBE and
 * UNSUBSCRIBE), and each message fans out locally to a bounded queue per subscriber. In memory the local
 * fan-out alone does it.
 */
import { Context, Deferred, Effect, Layer, Queue, type Scope, Stream } from "effect"
import type { ServiceUnavailable } from "../../schema/platform/Errors"
import { storeCall } from "../Failures"
import type { StartupError } from "../AppConfig"
import { RedisConnection } from "./RedisConnection"

/** A message for a channel's subscribers. */
export interface Publication {
  readonly channel: string
  readonly message: string
}

interface BroadcastShape {
  /** Publishes in the order given; several are sent together (one round trip to Redis, no fiber each). */
  readonly publish: (...publications: ReadonlyArray<Publication>) => Effect.Effect<void, ServiceUnavailable>
  /**
   * Subscribes for the lifetime of the scope. Every message published after this effect completes
   * is in the stream, in order, until the subscriber falls SUBSCRIBER_QUEUE_LIMIT messages behind: then
   * the stream ends (it is the only way it ends by itself).
   */
  readonly subscribe: (channel: string) => Effect.Effect<Stream.Stream<string>, ServiceUnavailable, Scope.Scope>
}

/**
 * The most messages that wait for one subscriber (docs/rules.md#stream-limits). One more and the subscriber
 * is dropped: it gets nothing more, what waited for it is let go, and its stream ends. A client that
 * stopped reading holds this much at most, and never holds up the others.
 */
const SUBSCRIBER_QUEUE_LIMIT = 1000
/** The most messages a subscriber's stream takes from its queue at once. */
const MESSAGES_PER_TAKE = 16

interface Channel {
  /** A queue per local subscriber, bounded by SUBSCRIBER_QUEUE_LIMIT. */
  readonly subscribers: Set<Queue.Queue<string>>
  /** Completes once the channel's messages reach `subscribers` (the Redis SUBSCRIBE is confirmed). */
  readonly ready: Deferred.Deferred<void, ServiceUnavailable>
  refs: number
}

/**
 * Local fan-out with per-channel reference counts; `onFirst` and `onLast` connect a channel to its
 * source. A subscriber puts its queue in the channel before the source is connected, so nothing that
 * arrives once the source is connected can be missed. Each message is offered to every queue without
 * waiting; a subscriber whose queue is full is dropped (SUBSCRIBER_QUEUE_LIMIT), so a slow one neither
 * holds up the others nor buffers without bound.
 */
const makeFanout = (hooks: {
  readonly onFirst: (channel: string) => Effect.Effect<void, ServiceUnavailable>
  readonly onLast: (channel: string) => Effect.Effect<void>
}) => {
  const channels = new Map<string, Channel>()

  const subscribe = (channel: string): Effect.Effect<Stream.Stream<string>, ServiceUnavailable, Scope.Scope> =>
    Effect.gen(function*() {
      const queue = yield* Queue.bounded<string>(SUBSCRIBER_QUEUE_LIMIT)
      const { entry, first } = yield* Effect.acquireRelease(
        Effect.suspend(() => {
          const existing = channels.get(channel)
          if (existing !== undefined) {
            existing.refs++
            existing.subscribers.add(queue)
            return Effect.succeed({ entry: existing, first: false })
          }
          return Effect.map(Deferred.make<void, ServiceUnavailable>(), (ready) => {
            const entry: Channel = { subscribers: new Set([queue]), ready, refs: 1 }
            channels.set(channel, entry)
            return { entry, first: true }
          })
        }),
        ({ entry }) =>
          Effect.suspend(() => {
            entry.subscribers.delete(queue)
            entry.refs--
            if (entry.refs > 0) return Effect.void
            if (channels.get(channel) === entry) channels.delete(channel)
            return hooks.onLast(channel)
          })
      )
      // Uninterruptible: other subscribers of the channel wait for `ready`.
      if (first) yield* Effect.uninterruptible(Deferred.complete(entry.ready, hooks.onFirst(channel)))
      yield* Deferred.await(entry.ready)
      // A queue shut down (the subscriber dropped) ends the stream. Taken MESSAGES_PER_TAKE at a time: what a
      // subscriber has taken and not yet passed on does not count against SUBSCRIBER_QUEUE_LIMIT, so it stays small.
      return Stream.fromQueue(queue, { maxChunkSize: MESSAGES_PER_TAKE })
    })

  /** Delivers to local subscribers; synchronous, for use from event handlers. */
  const deliver = (channel: string, message: string): void => {
    const entry = channels.get(channel)
    if (entry === undefined) return
    for (const queue of entry.subscribers) {
      if (!queue.unsafeOffer(message)) drop(entry, queue)
    }
  }

  /** A subscriber SUBSCRIBER_QUEUE_LIMIT messages behind: out of the channel, its messages let go, its stream ended. */
  const drop = (entry: Channel, queue: Queue.Queue<string>): void => {
    entry.subscribers.delete(queue)
    // Synchronous: a full queue has no taker waiting, and nothing here waits.
    Effect.runSync(Effect.zipRight(Queue.takeAll(queue), Queue.shutdown(queue)))
  }

  return { subscribe, deliver }
}

const makeMemory = Effect.sync((): BroadcastShape => {
  const fanout = makeFanout({ onFirst: () => Effect.void, onLast: () => Effect.void })
  return {
    publish: (...publications) =>
      Effect.sync(() => {
        for (const { channel, message } of publications) fanout.deliver(channel, message)
      }),
    subscribe: fanout.subscribe
  }
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
    const fanout = makeFanout({
      // ioredis resolves these once Redis confirms; it also resubscribes by itself after a reconnect.
      onFirst: (channel) => Effect.asVoid(storeCall(() => subscriber[commands.subscribe](channelKey(channel)))),
      // During an outage there is nothing to unsubscribe from; ioredis resubscribes only what is left.
      onLast: (channel) => Effect.ignore(storeCall(() => subscriber[commands.unsubscribe](channelKey(channel))))
    })
    const own = `${prefix}bc:`
    subscriber.on(commands.message, (channel: string, message: string) => {
      if (channel.startsWith(own)) fanout.deliver(channel.slice(own.length), message)
    })
    return {
      // ioredis writes each command without waiting for the replies before it: one round trip in all.
      publish: (...publications) =>
        Effect.asVoid(storeCall(() =>
          Promise.all(publications.map(({ channel, message }) => client[commands.publish](channelKey(channel), message)))
        )),
      subscribe: fanout.subscribe
    }
  }
)

export class Broadcast extends Context.Tag("app/Broadcast")<Broadcast, BroadcastShape>() {
  static readonly memory: Layer.Layer<Broadcast> = Layer.effect(this, makeMemory)
  static readonly redis: Layer.Layer<Broadcast, StartupError, RedisConnection> = Layer.scoped(this, makeRedis)
}
