/**
 * The payment gateway's events, each taken once (docs/rules.md#gateway-event-ids; docs/decisions.md "Gateway
 * callback replays").
 *
 * ONE database transaction records the event's id in `gateway_events` and runs what the event does (the
 * deposit's or the withdrawal's own transaction becomes part of it): a crash can never keep the id without
 * the effect, or the effect without the id. An id already recorded is a replay (a captured callback sent
 * again, or the gateway repeating a delivery whose answer it lost): answered as a duplicate, and nothing
 * runs. Two deliveries of one event at once: the second waits on the first's row and then finds it. An
 * event that fails (an unknown charge, a database outage) leaves no id behind, so it can be sent again.
 * Publications (balance pushes, notifications) wait for that commit.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import type { GatewayEvent, GatewayEventReceipt } from "../../schema/money/Deposit"
import type { PayoutEvent } from "../../schema/money/Withdrawal"
import { Deposits } from "./Deposits"
import { Withdrawals } from "./Withdrawals"
import { inTransaction, rowCountOf } from "../platform/SqlRows"

/** A decoded event: a deposit's charge (docs/rules.md#deposit-states) or a withdrawal's payout (docs/rules.md#payout-events). */
export type ReceivedGatewayEvent =
  | { readonly _tag: "Charge"; readonly event: GatewayEvent }
  | { readonly _tag: "Payout"; readonly event: PayoutEvent }

export class GatewayEvents extends Effect.Service<GatewayEvents>()("app/GatewayEvents", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const deposits = yield* Deposits
    const withdrawals = yield* Withdrawals
    const transaction = inTransaction(sql)

    /** Runs the event unless its id was taken before; `duplicate` says which. */
    const receive = Effect.fn("GatewayEvents.receive")(function*(receipt: GatewayEventReceipt, received: ReceivedGatewayEvent) {
      return yield* transaction(receiveInTransaction(receipt, received))
    })

    /** What `receive` runs in its transaction: the event's id taken, then the event run, unless it was taken before. */
    const receiveInTransaction = Effect.fnUntraced(function*(
      receipt: GatewayEventReceipt,
      received: ReceivedGatewayEvent
    ) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const claimed = yield* rowCountOf(sql`
        INSERT INTO gateway_events (event_id, event, object_id, signed_at, received_at)
        VALUES (${receipt.eventId}, ${received.event.event}, ${received.event.data.id}, ${receipt.signedAt ?? null}, ${now})
        ON CONFLICT (event_id) DO NOTHING
        RETURNING 1`)
      if (claimed === 0) {
        yield* Effect.logDebug(`Gateway event ${received.event.event} ${received.event.data.id} received again: a duplicate, not acted on`)
        return { duplicate: true }
      }
      if (received._tag === "Payout") yield* withdrawals.handlePayoutEvent(received.event)
      else yield* deposits.handleGatewayEvent(received.event)
      return { duplicate: false }
    })

    return { receive } as const
  }),
  dependencies: [Deposits.Default, Withdrawals.Default]
}) {}
