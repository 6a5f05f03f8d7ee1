/**
 * Deposits (docs/rules.md#deposits): ids, statuses, the
 * payment methods with their fees, the amount limits and how an amount is written for people.
 */
import { Schema, Struct } from "effect"
import { message } from "../platform/Errors"
import { idFromString, UserId } from "../platform/Ids"
import { amountBoundsProblem } from "./Money"
import { PlainString } from "../platform/Text"

export const DepositId = idFromString("DepositId")
export type DepositId = typeof DepositId.Type

/**
 * REFUND_PENDING and REFUNDED: a deposit never credited, being (then) returned to the payer: under JURISDICTION=BR one
 * paid by someone other than the account holder (docs/rules.md#deposit-third-party), in every jurisdiction one paid
 * while its owner is self-excluded (docs/rules.md#deposit-excluded).
 */
export const DepositStatus = Schema.Literal(
  "PENDING",
  "CONFIRMED",
  "FAILED",
  "EXPIRED",
  "CANCELLED",
  "REFUND_PENDING",
  "REFUNDED"
).annotations({
  message: () => ({
    message: "must be one of PENDING, CONFIRMED, FAILED, EXPIRED, CANCELLED, REFUND_PENDING, REFUNDED",
    override: true
  })
})
export type DepositStatus = typeof DepositStatus.Type

export const PaymentMethod = Schema.Literal("PIX", "CREDIT_CARD", "CRYPTO").annotations({
  message: () => ({ message: "must be one of PIX, CREDIT_CARD, CRYPTO", override: true })
})
export type PaymentMethod = typeof PaymentMethod.Type

/** Each method's fee (docs/rules.md#deposit-methods) in basis points (1/100 of a percent) of the amount. */
const FEE_BASIS_POINTS: Readonly<Record<PaymentMethod, bigint>> = { PIX: 0n, CREDIT_CARD: 350n, CRYPTO: 100n }

/**
 * docs/rules.md#deposit-fees: the fee the payer pays on top of `amountCents` (the gateway charges the sum, the user is
 * credited `amountCents`): the method's percentage of the amount, rounded half up to the cent.
 */
export const depositFeeCents = (method: PaymentMethod, amountCents: bigint): bigint =>
  (amountCents * FEE_BASIS_POINTS[method] + 5_000n) / 10_000n

/** The methods, listed by `GET /payment/methods`; the fee is paid on top of the amount (docs/rules.md#deposit-fees). */
export const PAYMENT_METHODS: ReadonlyArray<{
  readonly id: PaymentMethod
  readonly name: string
  readonly feePercent: number
  readonly processingTime: string
}> = [
  { id: "PIX", name: "PIX", feePercent: Number(FEE_BASIS_POINTS.PIX) / 100, processingTime: "instant" },
  { id: "CREDIT_CARD", name: "Credit card", feePercent: Number(FEE_BASIS_POINTS.CREDIT_CARD) / 100, processingTime: "instant" },
  { id: "CRYPTO", name: "Crypto (BTC/ETH)", feePercent: Number(FEE_BASIS_POINTS.CRYPTO) / 100, processingTime: "10 to 60 minutes" }
]

const MIN_DEPOSIT_CENTS = 500n
const MAX_DEPOSIT_CENTS = 10_000_000n

/** docs/rules.md#deposit-limits: the message for an amount out of bounds, if it is. */
export const depositAmountProblem = amountBoundsProblem("deposit", MIN_DEPOSIT_CENTS, MAX_DEPOSIT_CENTS)

/**
 * `POST /payment/deposit/initiate`: the amount range is checked by the service, for its own messages
 * (docs/rules.md#deposit-limits).
 */
export const DepositRequest = Schema.Struct({
  amountCents: Schema.Int.annotations({ message: () => ({ message: "must be an integer number of cents", override: true }) }),
  method: PaymentMethod
}).annotations({ identifier: "DepositRequest", parseOptions: { errors: "all" } })
export type DepositRequest = typeof DepositRequest.Type

/**
 * One deposit in a list; `amountCents` (what the user is credited) is a string (docs/rules.md#deposit-initiation). The
 * fee is paid on top: the gateway charges `totalCents` = amountCents + feeCents (docs/rules.md#deposit-fees).
 */
export const DepositView = Schema.Struct({
  id: DepositId,
  /** What the user is credited once paid. */
  amountCents: Schema.BigInt,
  /** The method's fee, paid on top of the amount (docs/rules.md#deposit-fees). */
  feeCents: Schema.BigIntFromNumber,
  /** What the payer is charged: amountCents + feeCents. */
  totalCents: Schema.BigIntFromNumber,
  amountFormatted: Schema.String,
  method: PaymentMethod,
  status: DepositStatus,
  /** The gateway's charge id. */
  externalId: Schema.String,
  expiresAt: Schema.Date,
  createdAt: Schema.Date,
  confirmedAt: Schema.NullOr(Schema.Date),
  /** The gateway's reason, for FAILED deposits. */
  failureReason: Schema.NullOr(Schema.String)
})
export type DepositView = typeof DepositView.Type

/** `POST /payment/deposit/initiate`: the charge to pay and the deposit's figures (docs/rules.md#deposit-initiation). */
export const DepositInitiated = Schema.Struct({
  depositId: DepositId,
  /** PNG data URL of the QR code. */
  qrCode: Schema.String,
  /** PIX "copia e cola" payload. */
  qrCodeText: Schema.String,
  ...Struct.pick(DepositView.fields, "expiresAt", "amountCents", "feeCents", "totalCents", "externalId")
})
export type DepositInitiated = typeof DepositInitiated.Type

/** A deposit as administrators see it: with its user (`GET /admin/deposits`). */
export const AdminDepositView = Schema.extend(
  DepositView,
  Schema.Struct({ user: Schema.Struct({ id: UserId, username: Schema.String }) })
)
export type AdminDepositView = typeof AdminDepositView.Type

/** Gateway events (docs/rules.md#gateway-callback); others are acknowledged. */
export const GatewayEvent = Schema.Struct({
  event: Schema.String,
  data: Schema.Struct({
    id: PlainString.pipe(Schema.nonEmptyString({ message: () => "is required" })),
    failReason: Schema.optional(PlainString),
    /** charge.paid: the payer's CPF digits, checked against the account holder under BR (docs/rules.md#deposit-third-party). */
    payerDocument: Schema.optional(PlainString)
  })
}).annotations({ parseOptions: { errors: "all" } })
export type GatewayEvent = typeof GatewayEvent.Type

/**
 * How a gateway event arrived (docs/rules.md#gateway-event-ids): its id (the SHA-256 of the signed content) and
 * the time the gateway signed it (`x-webhook-timestamp`), if it sent one.
 */
export interface GatewayEventReceipt {
  readonly eventId: string
  readonly signedAt: Date | undefined
}

/**
 * Confirming or cancelling a deposit that is not PENDING, or whose charge the gateway says was paid
 * (docs/rules.md#deposit-cancellation, docs/rules.md#admin-deposit-confirmation) (400).
 */
export class DepositNotPending extends Schema.TaggedError<DepositNotPending>()(
  "DepositNotPending",
  message("Deposit is not pending")
) {}

/**
 * Under JURISDICTION=BR, a deposit by another method than PIX (docs/rules.md#deposit-methods-br) (422).
 */
export class PaymentMethodNotAllowed extends Schema.TaggedError<PaymentMethodNotAllowed>()(
  "PaymentMethodNotAllowed",
  message("Payment method not allowed in this jurisdiction")
) {}

/** Paying a cancelled charge in the sandbox gateway (docs/rules.md#sandbox-gateway) (400). */
export class ChargeCancelled extends Schema.TaggedError<ChargeCancelled>()(
  "ChargeCancelled",
  message("The charge was cancelled")
) {}

/** The sandbox's controls while another gateway is in use (docs/rules.md#sandbox-gateway) (404). */
export class SandboxNotInUse extends Schema.TaggedError<SandboxNotInUse>()(
  "SandboxNotInUse",
  message("The sandbox gateway is not in use")
) {}

/** A gateway callback whose `x-webhook-signature` does not match its body (docs/rules.md#gateway-callback). */
export class InvalidWebhookSignature extends Schema.TaggedError<InvalidWebhookSignature>()(
  "InvalidWebhookSignature",
  message("Invalid webhook signature")
) {}

/**
 * A gateway callback without `x-webhook-timestamp` while one is required, with one that is not whole seconds, or
 * with one more than 5 minutes from our clock (docs/rules.md#gateway-callback-timestamp) (401).
 */
export class InvalidWebhookTimestamp extends Schema.TaggedError<InvalidWebhookTimestamp>()(
  "InvalidWebhookTimestamp",
  message("Invalid webhook timestamp")
) {}

/** A gateway callback from an address outside `GATEWAY_ALLOWED_IPS` (docs/rules.md#gateway-callback) (403). */
export class AddressNotAllowed extends Schema.TaggedError<AddressNotAllowed>()(
  "AddressNotAllowed",
  message("Address not allowed")
) {}

/** What the sandbox's controls do to a deposit's charge (docs/rules.md#sandbox-gateway). */
export const SandboxAction = Schema.Literal("pay", "fail", "expire").annotations({
  message: () => ({ message: "must be one of pay, fail, expire", override: true })
})
export type SandboxAction = typeof SandboxAction.Type

/**
 * The optional body of `POST /sandbox/charges/:externalId/pay`: who pays (docs/rules.md#sandbox-gateway); by
 * default, under BR, the deposit's owner.
 */
export const SandboxPayment = Schema.Struct({
  payerCpf: Schema.optional(
    Schema.String.pipe(
      Schema.filter((cpf) => /^(\d{11}|\d{3}\.\d{3}\.\d{3}-\d{2})$/.test(cpf), {
        message: () => "must be a CPF: 11 digits, bare or as 000.000.000-00"
      })
    )
  )
}).annotations({ identifier: "SandboxPayment", parseOptions: { errors: "all" } })
export type SandboxPayment = typeof SandboxPayment.Type
