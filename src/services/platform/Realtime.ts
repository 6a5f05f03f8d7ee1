/**
 * Pushes to one user's realtime channel (docs/rules.md#realtime): `balance.updated` after every
 * committed balance change, and (from Notifications) `notification`. Messages are JSON
 * `{event, data}` on channel `user:<id>`, fanned out across instances by the Broadcast store.
 */
import { Effect, type Scope, type Stream } from "effect"
import { Broadcast, type Publication } from "../../layers/stores/Broadcast"
import type { ServiceUnavailable } from "../../schema/platform/Errors"
import { userChannel } from "./Notifications"
import { afterCommit } from "./SqlRows"

/** The `balance.updated` push for a committed balance, to publish with others (`Broadcast.publish`). */
const balanceUpdate = (userId: bigint, balanceCents: bigint): Publication => ({
  channel: userChannel(userId),
  message: JSON.stringify({ event: "balance.updated", data: { balanceCents: Number(balanceCents) } })
})

export class Realtime extends Effect.Service<Realtime>()("app/Realtime", {
  effect: Effect.gen(function*() {
    const broadcast = yield* Broadcast

    /** Call after the transaction that changed the balance (see `afterCommit`). */
    const balanceChanged = (userId: bigint, balanceCents: bigint): Effect.Effect<void> =>
      afterCommit(broadcast.publish(balanceUpdate(userId, balanceCents)))

    /** The user's `{event, data}` messages published after subscribing, until the scope closes. */
    const subscribe = (userId: bigint): Effect.Effect<Stream.Stream<string>, ServiceUnavailable, Scope.Scope> =>
      broadcast.subscribe(userChannel(userId))

    return { balanceChanged, balanceUpdate, subscribe } as const
  })
}) {}
