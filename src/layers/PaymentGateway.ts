/**
 * The payment gateway (D9), an outside system behind a Layer: charges for deposits and payouts for
 * withdrawals. Implementations: the embedded sandbox (no PAYMENT_GATEWAY_URL) and an HTTP adapter.
 */
import { Context, Data, type Effect } from "effect"

export type PaymentMethod = "PIX" | "CREDIT_CARD" | "CRYPTO"

export interface ChargeRequest {
  /**
   * What the payer is charged, in cents: the deposit's amount plus its fee (D21). The gateway is asked
   * in currency units (cents / 100, SPEC deposit rule 2).
   */
  readonly amountCents: bigint
  readonly method: PaymentMethod
  /** Our reference for the charge, unique per deposit attempt (also the idempotency key). */
  readonly reference: string
}

export interface Charge {
  /** The gateway's charge id, e.g. `ch_<random>`; stored as the deposit's externalId. */
  readonly externalId: string
  /** PIX "copia e cola" (EMV BR Code) payload. */
  readonly qrCodeText: string
  /** PNG data URL of the QR code. */
  readonly qrCode: string
  readonly expiresAt: Date
}

export interface PayoutRequest {
  readonly withdrawalId: bigint
  readonly amountCents: bigint
  readonly pixKeyType: string
  readonly pixKey: string
}

/** The gateway could not be reached or refused the request. */
export class GatewayError extends Data.TaggedError("GatewayError")<{ readonly message: string }> {}

/** The gateway would not cancel the charge: it has been paid (the money arrives by charge.paid). */
export class ChargeAlreadyPaid extends Data.TaggedError("ChargeAlreadyPaid")<{ readonly externalId: string }> {}

export interface PaymentGatewayShape {
  readonly createCharge: (request: ChargeRequest) => Effect.Effect<Charge, GatewayError>
  /** Cancels an unpaid charge, so that it can no longer be paid; cancelling twice is not an error. */
  readonly cancelCharge: (externalId: string) => Effect.Effect<void, GatewayError | ChargeAlreadyPaid>
  readonly payout: (request: PayoutRequest) => Effect.Effect<{ readonly payoutId: string }, GatewayError>
}

export class PaymentGateway extends Context.Tag("app/PaymentGateway")<PaymentGateway, PaymentGatewayShape>() {}
