/**
 * Pushes to one user's realtime channel (docs/rules.md#realtime): `balance.updated` after every
 * committed balance change, and (from Notifications) `notification`. Messages are JSON
 * `{event, data}` on channel `user:<id>`, fanned out across instances by the Broadcast store.
 * Also counts each user's open event streams on this instance (docs/rules.md#stream-limits).
 */
import { Effect, type Scope } from "effect"
import { Broadcast, type Deliver, type Publication } from "../../layers/stores/Broadcast"
import type { ServiceUnavailable } from "../../schema/platform/Errors"
import { userChannel } from "./Notifications"
import { afterCommit } from "./SqlRows"

/** The `balance.updated` push for a committed balance, to publish with others (`Broadcast.publish`). */
const balanceUpdate = (userId: bigint, balanceCents: bigint): Publication => ({
  channel: userChannel(userId),
  message: JSON.stringify({ event: "balance.updated", data: { balanceCents: Number(balanceCents) } })
})

/**
 * The most event streams (realtime and live drops together) one user has open on this instance
 * (docs/rules.md#stream-limits); opening one more ends the oldest.
 */
const MAX_STREAMS_PER_USER = 5

export class Realtime extends Effect.Service<Realtime>()("app/Realtime", {
  effect: Effect.gen(function*() {
    const broadcast = yield* Broadcast

    /** Call after the transaction that changed the balance (see `afterCommit`). */
    const balanceChanged = (userId: bigint, balanceCents: bigint): Effect.Effect<void> =>
      afterCommit(broadcast.publish(balanceUpdate(userId, balanceCents)))

    /** The user's `{event, data}` messages published after subscribing, given to `deliver` until the scope closes. */
    const subscribe = (userId: bigint) => (deliver: Deliver): Effect.Effect<void, ServiceUnavailable, Scope.Scope> =>
      broadcast.subscribe(userChannel(userId), deliver)

    /** Each user's open event streams, oldest first: the callback that ends each one. */
    const openStreams = new Map<bigint, Array<() => void>>()

    /**
     * Counts an event stream of the user as open until the scope closes. `onReplaced` (synchronous) is called when
     * the user opens more than MAX_STREAMS_PER_USER and this one is the oldest: it is replaced.
     */
    const streamOpened = (userId: bigint, onReplaced: () => void): Effect.Effect<void, never, Scope.Scope> =>
      Effect.acquireRelease(
        Effect.sync(() => {
          // A function of its own, so that the same callback given twice is still two streams.
          const replaced = () => onReplaced()
          const open = openStreams.get(userId) ?? []
          if (open.length === 0) openStreams.set(userId, open)
          open.push(replaced)
          const oldest = open.length > MAX_STREAMS_PER_USER ? open.shift() : undefined
          oldest?.()
          return replaced
        }),
        (replaced) =>
          Effect.sync(() => {
            const open = openStreams.get(userId)
            const at = open === undefined ? -1 : open.indexOf(replaced)
            // Not found: it was replaced, and is out of the list already.
            if (open === undefined || at < 0) return
            open.splice(at, 1)
            if (open.length === 0) openStreams.delete(userId)
          })
      )

    return { balanceChanged, balanceUpdate, subscribe, streamOpened } as const
  })
}) {}
