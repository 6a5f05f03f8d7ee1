/**
 * Publish/subscribe for realtime fan-out across instances (docs/rules.md#realtime). With Redis, one subscriber
 * connection per process carries every channel that has local subscribers (refcounted SUBSCRIBE and
 * UNSUBSCRIBE), and each message fans out locally through an Effect PubSub per channel. In memory the
 * PubSubs alone do it.
 */
import { Context, Deferred, Effect, Layer, PubSub, type Scope, Stream } from "effect"
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
   * is in the stream, in order; the stream ends when the scope closes.
   */
  readonly subscribe: (channel: string) => Effect.Effect<Stream.Stream<string>, ServiceUnavailable, Scope.Scope>
}

interface Channel {
  readonly pubsub: PubSub.PubSub<string>
  /** Completes once the channel's messages reach `pubsub` (the Redis SUBSCRIBE is confirmed). */
  readonly ready: Deferred.Deferred<void, ServiceUnavailable>
  refs: number
}

/**
 * Local fan-out with per-channel reference counts; `onFirst` and `onLast` connect a channel to its
 * source. A subscriber takes its PubSub subscription before the source is connected, so nothing that
 * arrives once the source is connected can be missed. Unbounded PubSubs: a slow subscriber buffers
 * rather than losing messages or holding up the others.
 */
const makeFanout = (hooks: {
  readonly onFirst: (channel: string) => Effect.Effect<void, ServiceUnavailable>
  readonly onLast: (channel: string) => Effect.Effect<void>
}) => {
  const channels = new Map<string, Channel>()

  const subscribe = (channel: string): Effect.Effect<Stream.Stream<string>, ServiceUnavailable, Scope.Scope> =>
    Effect.gen(function*() {
      const { entry, first } = yield* Effect.acquireRelease(
        Effect.suspend(() => {
          const existing = channels.get(channel)
          if (existing !== undefined) {
            existing.refs++
            return Effect.succeed({ entry: existing, first: false })
          }
          return Effect.map(
            Effect.all([PubSub.unbounded<string>(), Deferred.make<void, ServiceUnavailable>()]),
            ([pubsub, ready]) => {
              const entry: Channel = { pubsub, ready, refs: 1 }
              channels.set(channel, entry)
              return { entry, first: true }
            }
          )
        }),
        ({ entry }) =>
          Effect.suspend(() => {
            entry.refs--
            if (entry.refs > 0) return Effect.void
            if (channels.get(channel) === entry) channels.delete(channel)
            return Effect.zipRight(PubSub.shutdown(entry.pubsub), hooks.onLast(channel))
          })
      )
      const dequeue = yield* PubSub.subscribe(entry.pubsub)
      // Uninterruptible: other subscribers of the channel wait for `ready`.
      if (first) yield* Effect.uninterruptible(Deferred.complete(entry.ready, hooks.onFirst(channel)))
      yield* Deferred.await(entry.ready)
      return Stream.fromQueue(dequeue)
    })

  /** Delivers to local subscribers; synchronous, for use from event handlers. */
  const deliver = (channel: string, message: string): void => {
    channels.get(channel)?.pubsub.unsafeOffer(message)
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
    const { client, duplicate, prefix } = yield* RedisConnection
    const subscriber = yield* duplicate
    const channelKey = (channel: string) => `${prefix}bc:${channel}`
    const fanout = makeFanout({
      // ioredis resolves these once Redis confirms; it also resubscribes by itself after a reconnect.
      onFirst: (channel) => Effect.asVoid(storeCall(() => subscriber.subscribe(channelKey(channel)))),
      // During an outage there is nothing to unsubscribe from; ioredis resubscribes only what is left.
      onLast: (channel) => Effect.ignore(storeCall(() => subscriber.unsubscribe(channelKey(channel))))
    })
    const own = `${prefix}bc:`
    subscriber.on("message", (channel: string, message: string) => {
      if (channel.startsWith(own)) fanout.deliver(channel.slice(own.length), message)
    })
    return {
      // ioredis writes each command without waiting for the replies before it: one round trip in all.
      publish: (...publications) =>
        Effect.asVoid(storeCall(() =>
          Promise.all(publications.map(({ channel, message }) => client.publish(channelKey(channel), message)))
        )),
      subscribe: fanout.subscribe
    }
  }
)

export class Broadcast extends Context.Tag("app/Broadcast")<Broadcast, BroadcastShape>() {
  static readonly memory: Layer.Layer<Broadcast> = Layer.effect(this, makeMemory)
  static readonly redis: Layer.Layer<Broadcast, StartupError, RedisConnection> = Layer.scoped(this, makeRedis)
}
