/**
 * The payment gateway (docs/rules.md#deposits), an outside system behind a Layer: charges for deposits and payouts for
 * withdrawals. Implementations: the embedded sandbox (no PAYMENT_GATEWAY_URL) and an HTTP adapter.
 */
import { Context, Data, type Effect } from "effect"

export type PaymentMethod = "PIX" | "CREDIT_CARD" | "CRYPTO"

export interface ChargeRequest {
  /**
   * What the payer is charged, in cents: the deposit's amount plus its fee (docs/rules.md#deposit-fees). The
   * gateway is asked in currency units (cents / 100, docs/rules.md#deposit-initiation).
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

/**
 * Our reference for a withdrawal's payout: the gateway's idempotency key for it (a repeated payout
 * request pays once), what its payout events name, and what a status query asks about
 * (docs/rules.md#withdrawal-payout).
 */
export const payoutReference = (withdrawalId: bigint): string => `withdrawal-${withdrawalId}`

/** The withdrawal a payout reference names, if it is one of ours. */
export const withdrawalOfReference = (reference: string): bigint | undefined => {
  const match = /^withdrawal-([1-9][0-9]{0,18})$/.exec(reference)
  return match === null ? undefined : BigInt(match[1]!)
}

/**
 * Our reference for a deposit's refund (docs/rules.md#deposit-third-party): the gateway's idempotency key for it,
 * so however often it is asked (a retry, the refund job, a redelivered charge.paid) the payment is returned once.
 */
export const refundReference = (depositId: bigint): string => `deposit-${depositId}`

/** Returning a paid charge to its payer, whole (amount and fee): a deposit paid by a third party under BR. */
export interface RefundRequest {
  readonly depositId: bigint
  /** The gateway's charge id (the deposit's externalId). */
  readonly externalId: string
  /** What the payer paid: the deposit's amount plus its fee. */
  readonly amountCents: bigint
}

/**
 * The gateway could not be reached, timed out, or failed on its side (5xx). For a payout this means
 * the outcome is unknown: the money may or may not have left.
 */
export class GatewayError extends Data.TaggedError("GatewayError")<{ readonly message: string }> {}

/** The gateway answered that it will not make a payout (e.g. an unknown PIX key): nothing was paid. */
export class PayoutRefused extends Data.TaggedError("PayoutRefused")<{ readonly message: string }> {}

/** What the gateway knows about a payout, asked by reference (docs/rules.md#withdrawal-reconcile). */
export type PayoutStatus =
  | { readonly _tag: "Paid"; readonly payoutId: string }
  | { readonly _tag: "Failed"; readonly reason: string }
  | { readonly _tag: "Processing" }
  /** The gateway never received a payout with this reference. */
  | { readonly _tag: "Unknown" }

/** The gateway would not cancel the charge: it has been paid (the money arrives by charge.paid). */
export class ChargeAlreadyPaid extends Data.TaggedError("ChargeAlreadyPaid")<{ readonly externalId: string }> {}

interface PaymentGatewayShape {
  readonly createCharge: (request: ChargeRequest) => Effect.Effect<Charge, GatewayError>
  /** Cancels an unpaid charge, so that it can no longer be paid; cancelling twice is not an error. */
  readonly cancelCharge: (externalId: string) => Effect.Effect<void, GatewayError | ChargeAlreadyPaid>
  /** Pays out, idempotent on the withdrawal (its `payoutReference`). */
  readonly payout: (request: PayoutRequest) => Effect.Effect<{ readonly payoutId: string }, GatewayError | PayoutRefused>
  readonly payoutStatus: (withdrawalId: bigint) => Effect.Effect<PayoutStatus, GatewayError>
  /**
   * Returns a paid charge to its payer, idempotent on the deposit (its `refundReference`); any failure is a
   * GatewayError, retried later (docs/rules.md#deposit-refund-retry).
   */
  readonly refund: (request: RefundRequest) => Effect.Effect<{ readonly refundId: string }, GatewayError>
}

export class PaymentGateway extends Context.Tag("app/PaymentGateway")<PaymentGateway, PaymentGatewayShape>() {}
