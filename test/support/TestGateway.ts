/**
 * A payment gateway for tests (the PaymentGateway interface): records every payout and charge it is asked for and
 * can be told to fail them: payouts refused outright, or timing out (paid or not,
 * docs/rules.md#withdrawal-payout); the payout status query answers from what it paid unless told otherwise.
 * `TestGateway` (always succeeds, records nothing anyone reads) is what `makeTestClient` uses unless a test
 * passes its own `gateway`.
 */
import { Clock, Duration, Effect, Layer, Ref } from "effect"
import {
  type Charge,
  ChargeAlreadyPaid,
  type ChargeRequest,
  GatewayError,
  PaymentGateway,
  PayoutRefused,
  type PayoutRequest,
  type PayoutStatus,
  type RefundRequest
} from "../../src/layers/PaymentGateway"

export interface TestGatewayControl {
  readonly layer: Layer.Layer<PaymentGateway>
  /** Every payout call, in order (failed ones included). */
  readonly payouts: Effect.Effect<ReadonlyArray<PayoutRequest>>
  /** Every charge call, in order. */
  readonly charges: Effect.Effect<ReadonlyArray<ChargeRequest>>
  /** From now on the gateway refuses payouts with this message; `undefined` makes them succeed again. */
  readonly failPayouts: (message: string | undefined) => Effect.Effect<void>
  /**
   * From now on payouts time out (outcome unknown to the caller); with `paid` the gateway made the
   * payout all the same. `undefined` makes them succeed again.
   */
  readonly timeOutPayouts: (mode: { readonly paid: boolean } | undefined) => Effect.Effect<void>
  /** What the status query answers for a withdrawal from now on; `undefined`: what the gateway did. */
  readonly answerPayoutStatus: (withdrawalId: bigint, status: PayoutStatus | undefined) => Effect.Effect<void>
  /** Every payout status query (withdrawal ids), in order. */
  readonly statusQueries: Effect.Effect<ReadonlyArray<bigint>>
  /**
   * A slow gateway: from now on a payout call (`holdPayouts`) or a status query (`holdPayoutStatus`) runs `gate` once
   * recorded, before it decides its answer, which is then what the gateway does or knows when the gate ends;
   * `undefined`: they answer at once again. A call keeps the gate it met.
   */
  readonly holdPayouts: (gate: Effect.Effect<void> | undefined) => Effect.Effect<void>
  readonly holdPayoutStatus: (gate: Effect.Effect<void> | undefined) => Effect.Effect<void>
  /** From now on charges fail with this message; `undefined` makes them succeed again. */
  readonly failCharges: (message: string | undefined) => Effect.Effect<void>
  /** Every charge cancellation asked for (external ids), in order. */
  readonly cancels: Effect.Effect<ReadonlyArray<string>>
  /** How the gateway answers cancellations from now on (default: cancelled). */
  readonly answerCancels: (answer: CancelAnswer) => Effect.Effect<void>
  /** Every refund call, in order (failed ones included). */
  readonly refunds: Effect.Effect<ReadonlyArray<RefundRequest>>
  /** From now on refunds fail (GatewayError) with this message; `undefined` makes them succeed again. */
  readonly failRefunds: (message: string | undefined) => Effect.Effect<void>
}

export type CancelAnswer = "cancelled" | "already paid" | "unavailable"

export interface TestGatewayOptions {
  /** How long a payout takes (on the Clock in use: real time only in a real-clock block). */
  readonly payoutDelay?: Duration.DurationInput
}

/** Charge ids are unique across gateways: tests in a file share one database. */
let chargeSeq = 0

export const makeTestGateway = (options: TestGatewayOptions = {}) =>
  Effect.gen(function*() {
    const payouts = yield* Ref.make<ReadonlyArray<PayoutRequest>>([])
    const charges = yield* Ref.make<ReadonlyArray<ChargeRequest>>([])
    const failure = yield* Ref.make<string | undefined>(undefined)
    const chargeFailure = yield* Ref.make<string | undefined>(undefined)
    const cancels = yield* Ref.make<ReadonlyArray<string>>([])
    const cancelAnswer = yield* Ref.make<CancelAnswer>("cancelled")
    const timeout = yield* Ref.make<{ readonly paid: boolean } | undefined>(undefined)
    /** Payouts the gateway made, by withdrawal: one per withdrawal (idempotent on its reference). */
    const paid = new Map<bigint, string>()
    const statusAnswers = new Map<bigint, PayoutStatus>()
    const statusQueries = yield* Ref.make<ReadonlyArray<bigint>>([])
    const payoutGate = yield* Ref.make<Effect.Effect<void>>(Effect.void)
    const statusGate = yield* Ref.make<Effect.Effect<void>>(Effect.void)
    const refunds = yield* Ref.make<ReadonlyArray<RefundRequest>>([])
    const refundFailure = yield* Ref.make<string | undefined>(undefined)
    let seq = 0

    const layer = Layer.succeed(PaymentGateway, {
      createCharge: (request) =>
        Effect.gen(function*() {
          yield* Ref.update(charges, (all) => [...all, request])
          const message = yield* Ref.get(chargeFailure)
          if (message !== undefined) return yield* new GatewayError({ message })
          const id = `ch_test_${++chargeSeq}`
          const now = yield* Clock.currentTimeMillis
          return {
            externalId: id,
            qrCodeText: `00020126-test-${id}`,
            qrCode: "data:image/png;base64,iVBORw0KGgo=",
            expiresAt: new Date(now + 30 * 60_000)
          } satisfies Charge
        }),
      cancelCharge: (externalId) =>
        Effect.gen(function*() {
          yield* Ref.update(cancels, (all) => [...all, externalId])
          const answer = yield* Ref.get(cancelAnswer)
          if (answer === "already paid") return yield* new ChargeAlreadyPaid({ externalId })
          if (answer === "unavailable") return yield* new GatewayError({ message: "down" })
        }),
      payout: (request) =>
        Effect.gen(function*() {
          yield* Ref.update(payouts, (all) => [...all, request])
          if (options.payoutDelay !== undefined) yield* Effect.sleep(options.payoutDelay)
          yield* Effect.flatten(Ref.get(payoutGate))
          const message = yield* Ref.get(failure)
          if (message !== undefined) return yield* new PayoutRefused({ message })
          const pay = () => {
            const payoutId = paid.get(request.withdrawalId) ?? `po_test_${request.withdrawalId}_${++seq}`
            paid.set(request.withdrawalId, payoutId)
            return payoutId
          }
          const timingOut = yield* Ref.get(timeout)
          if (timingOut !== undefined) {
            if (timingOut.paid) pay()
            return yield* new GatewayError({ message: "The payment gateway is unavailable" })
          }
          return { payoutId: pay() }
        }),
      payoutStatus: (withdrawalId) =>
        Effect.gen(function*() {
          yield* Ref.update(statusQueries, (all) => [...all, withdrawalId])
          yield* Effect.flatten(Ref.get(statusGate))
          const answer = statusAnswers.get(withdrawalId)
          if (answer !== undefined) return answer
          const payoutId = paid.get(withdrawalId)
          return payoutId === undefined ? { _tag: "Unknown" as const } : { _tag: "Paid" as const, payoutId }
        }),
      refund: (request) =>
        Effect.gen(function*() {
          yield* Ref.update(refunds, (all) => [...all, request])
          const message = yield* Ref.get(refundFailure)
          if (message !== undefined) return yield* new GatewayError({ message })
          // One refund per deposit, however often asked (idempotent on its reference).
          return { refundId: `re_test_${request.depositId}` }
        })
    })

    return {
      layer,
      payouts: Ref.get(payouts),
      charges: Ref.get(charges),
      failPayouts: (message) => Ref.set(failure, message),
      timeOutPayouts: (mode) => Ref.set(timeout, mode),
      answerPayoutStatus: (withdrawalId, status) =>
        Effect.sync(() => status === undefined ? statusAnswers.delete(withdrawalId) : statusAnswers.set(withdrawalId, status)),
      statusQueries: Ref.get(statusQueries),
      holdPayouts: (gate) => Ref.set(payoutGate, gate ?? Effect.void),
      holdPayoutStatus: (gate) => Ref.set(statusGate, gate ?? Effect.void),
      failCharges: (message) => Ref.set(chargeFailure, message),
      cancels: Ref.get(cancels),
      answerCancels: (answer) => Ref.set(cancelAnswer, answer),
      refunds: Ref.get(refunds),
      failRefunds: (message) => Ref.set(refundFailure, message)
    } satisfies TestGatewayControl
  })

/** Always succeeds; for tests that do not look at the gateway. */
export const TestGateway: Layer.Layer<PaymentGateway> = Layer.unwrapEffect(
  Effect.map(makeTestGateway(), (gateway) => gateway.layer)
)
