/**
 * A payment gateway for tests (D9's interface): records every payout and charge it is asked for and
 * can be told to fail them. `TestGateway` (always succeeds, records nothing anyone reads) is what
 * `makeTestClient` uses unless a test passes its own `gateway`.
 */
import { Clock, Duration, Effect, Layer, Ref } from "effect"
import {
  type Charge,
  ChargeAlreadyPaid,
  type ChargeRequest,
  GatewayError,
  PaymentGateway,
  type PayoutRequest
} from "../../src/layers/PaymentGateway"

export interface TestGatewayControl {
  readonly layer: Layer.Layer<PaymentGateway>
  /** Every payout call, in order (failed ones included). */
  readonly payouts: Effect.Effect<ReadonlyArray<PayoutRequest>>
  /** Every charge call, in order. */
  readonly charges: Effect.Effect<ReadonlyArray<ChargeRequest>>
  /** From now on payouts fail with this message; `undefined` makes them succeed again. */
  readonly failPayouts: (message: string | undefined) => Effect.Effect<void>
  /** From now on charges fail with this message; `undefined` makes them succeed again. */
  readonly failCharges: (message: string | undefined) => Effect.Effect<void>
  /** Every charge cancellation asked for (external ids), in order. */
  readonly cancels: Effect.Effect<ReadonlyArray<string>>
  /** How the gateway answers cancellations from now on (default: cancelled). */
  readonly answerCancels: (answer: CancelAnswer) => Effect.Effect<void>
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
          const message = yield* Ref.get(failure)
          if (message !== undefined) return yield* new GatewayError({ message })
          return { payoutId: `po_test_${request.withdrawalId}_${++seq}` }
        })
    })

    return {
      layer,
      payouts: Ref.get(payouts),
      charges: Ref.get(charges),
      failPayouts: (message) => Ref.set(failure, message),
      failCharges: (message) => Ref.set(chargeFailure, message),
      cancels: Ref.get(cancels),
      answerCancels: (answer) => Ref.set(cancelAnswer, answer)
    } satisfies TestGatewayControl
  })

/** Always succeeds; for tests that do not look at the gateway. */
export const TestGateway: Layer.Layer<PaymentGateway> = Layer.unwrapEffect(
  Effect.map(makeTestGateway(), (gateway) => gateway.layer)
)
