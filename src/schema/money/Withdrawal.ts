/**
 * Withdrawals (docs/rules.md#withdrawals): ids, statuses, the
 * amount limits and the validation of PIX keys per type. The checks are plain functions, so the HTTP
 * payload schema and the service apply the very same rules and messages.
 */
import { Schema } from "effect"
import { message } from "../platform/Errors"
import { idFromString, UserId } from "../platform/Ids"
import { amountBoundsProblem } from "./Money"
import { PlainString } from "../platform/Text"

export const WithdrawalId = idFromString("WithdrawalId")
export type WithdrawalId = typeof WithdrawalId.Type

/**
 * PENDING (requested, money debited), PROCESSING (a payout was handed to the gateway, outcome not yet
 * known, docs/rules.md#withdrawal-statuses), COMPLETED (paid out); REJECTED, CANCELLED and FAILED (the gateway
 * reported the payout failed) were refunded.
 */
export const WithdrawalStatus = Schema.Literal("PENDING", "PROCESSING", "COMPLETED", "REJECTED", "CANCELLED", "FAILED")
  .annotations({
    message: () => ({ message: "must be one of PENDING, PROCESSING, COMPLETED, REJECTED, CANCELLED, FAILED", override: true })
  })
export type WithdrawalStatus = typeof WithdrawalStatus.Type

export const WithdrawalMethod = Schema.Literal("PIX").annotations({ message: () => "must be PIX" })
export type WithdrawalMethod = typeof WithdrawalMethod.Type

export const PixKeyType = Schema.Literal("EMAIL", "CPF", "CNPJ", "PHONE", "RANDOM").annotations({
  message: () => ({ message: "must be one of EMAIL, CPF, CNPJ, PHONE, RANDOM", override: true })
})
export type PixKeyType = typeof PixKeyType.Type

const MIN_WITHDRAWAL_CENTS = 1_000n
const MAX_WITHDRAWAL_CENTS = 10_000_000n
/**
 * docs/rules.md#withdrawal-2fa: with 2FA on, a code is needed when this amount plus the user's withdrawals of
 * the last 24 hours (PENDING, PROCESSING or COMPLETED) is MORE than this (exactly this needs none), and for a
 * PIX key no payout of the user has gone to yet.
 */
export const TWO_FACTOR_THRESHOLD_CENTS = 10_000n
export const TWO_FACTOR_WINDOW_MS = 24 * 60 * 60_000

/** The problem with an amount, if any (field `amountCents`). */
export const amountProblem = amountBoundsProblem("withdrawal", MIN_WITHDRAWAL_CENTS, MAX_WITHDRAWAL_CENTS)

const digitsOf = (text: string) => Array.from(text, Number)

/** Mod-11 check digit over `digits` with `weights` (CPF and CNPJ): remainder below 2 gives 0. */
const checkDigit = (digits: ReadonlyArray<number>, weights: ReadonlyArray<number>) => {
  const remainder = weights.reduce((sum, weight, i) => sum + weight * digits[i]!, 0) % 11
  return remainder < 2 ? 0 : 11 - remainder
}

/** 11 digits, bare or as 000.000.000-00, with both check digits right; all-equal digits are invalid. */
export const isValidCpf = (key: string): boolean => {
  if (!/^(\d{11}|\d{3}\.\d{3}\.\d{3}-\d{2})$/.test(key)) return false
  const d = digitsOf(key.replace(/\D/g, ""))
  if (d.every((x) => x === d[0])) return false
  return checkDigit(d, [10, 9, 8, 7, 6, 5, 4, 3, 2]) === d[9] &&
    checkDigit(d, [11, 10, 9, 8, 7, 6, 5, 4, 3, 2]) === d[10]
}

/** 14 digits, bare or as 00.000.000/0000-00, with both check digits right; all-equal digits are invalid. */
const isValidCnpj = (key: string): boolean => {
  if (!/^(\d{14}|\d{2}\.\d{3}\.\d{3}\/\d{4}-\d{2})$/.test(key)) return false
  const d = digitsOf(key.replace(/\D/g, ""))
  if (d.every((x) => x === d[0])) return false
  return checkDigit(d, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]) === d[12] &&
    checkDigit(d, [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]) === d[13]
}

/** E.164 Brazilian mobile number, as PIX phone keys are: +55, a two-digit area code, 9 and 8 digits. */
const PHONE = /^\+55[1-9]{2}9\d{8}$/
/** At most 77 characters (the PIX directory's limit for e-mail keys), one @, a dot in the domain. */
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The problem with a PIX key of the given type, if any (field `paymentDetails.pixKey`). */
export const pixKeyProblem = (type: PixKeyType, key: string): string | undefined => {
  switch (type) {
    case "EMAIL":
      return key.length <= 77 && EMAIL.test(key) ? undefined : "must be a valid e-mail address"
    case "CPF":
      return isValidCpf(key) ? undefined : "must be a valid CPF (11 digits with valid check digits)"
    case "CNPJ":
      return isValidCnpj(key) ? undefined : "must be a valid CNPJ (14 digits with valid check digits)"
    case "PHONE":
      return PHONE.test(key) ? undefined : "must be a Brazilian mobile number in E.164 format, e.g. +5511912345678"
    case "RANDOM":
      return UUID.test(key) ? undefined : "must be a UUID, e.g. 123e4567-e89b-12d3-a456-426614174000"
  }
}

/** The form a valid key is stored and paid out in: digits only for CPF/CNPJ, lower case for e-mail and UUID. */
export const normalizePixKey = (type: PixKeyType, key: string): string =>
  type === "CPF" || type === "CNPJ" ? key.replace(/\D/g, "") : type === "PHONE" ? key : key.toLowerCase()

/**
 * A PIX key as shown to its owner in notifications (docs/rules.md#withdrawal-notification): enough to recognise
 * it, not enough to use it. E-mail `m***@example.com`, CPF `***.982.247-**`, CNPJ `**.222.333/****-**`, phone
 * `+55 11 *****-5678`, random key `123e…4000`. Takes the normalized key.
 */
export const maskPixKey = (type: PixKeyType, key: string): string => {
  switch (type) {
    case "EMAIL": {
      const at = key.lastIndexOf("@")
      return `${key.slice(0, 1)}***${key.slice(at)}`
    }
    case "CPF":
      return `***.${key.slice(3, 6)}.${key.slice(6, 9)}-**`
    case "CNPJ":
      return `**.${key.slice(2, 5)}.${key.slice(5, 8)}/****-**`
    case "PHONE":
      return `${key.slice(0, 3)} ${key.slice(3, 5)} *****-${key.slice(-4)}`
    case "RANDOM":
      return `${key.slice(0, 4)}…${key.slice(-4)}`
  }
}

const Text = (max: number) =>
  PlainString.pipe(Schema.maxLength(max, { message: () => `must be at most ${max} characters` }))
const Required = (max: number) => Text(max).pipe(Schema.nonEmptyString({ message: () => "is required" }))

/**
 * The gateway's payout events on the signed callback (docs/rules.md#payout-events): `data.reference` names the
 * withdrawal (`withdrawal-<id>`), `data.id` is the gateway's payout id.
 */
export const PayoutEvent = Schema.Struct({
  event: Schema.Literal("payout.paid", "payout.failed"),
  data: Schema.Struct({
    id: Required(200),
    reference: Required(200),
    failReason: Schema.optional(Text(500))
  })
}).annotations({ parseOptions: { errors: "all" } })
export type PayoutEvent = typeof PayoutEvent.Type

const WithdrawalAmount = Schema.BigIntFromNumber.annotations({
  message: () => ({ message: "must be an integer number of cents", override: true })
}).pipe(Schema.filter((amount) => amountProblem(amount) ?? true))

const PixDetails = Schema.Struct({
  pixKeyType: PixKeyType,
  pixKey: Schema.String.annotations({ message: () => "must be a string" })
}).pipe(
  Schema.filter((details) => {
    const problem = pixKeyProblem(details.pixKeyType, details.pixKey)
    return problem === undefined ? true : { path: ["pixKey"], message: problem }
  })
)

/** POST /withdrawals/request */
export const WithdrawalRequest = Schema.Struct({
  amountCents: WithdrawalAmount,
  paymentMethod: WithdrawalMethod,
  paymentDetails: PixDetails,
  twoFactorCode: Schema.optional(
    PlainString.pipe(Schema.maxLength(64, { message: () => "must be at most 64 characters" }))
  )
}).annotations({ identifier: "WithdrawalRequest", parseOptions: { errors: "all" } })
export type WithdrawalRequest = typeof WithdrawalRequest.Type

/** One withdrawal as its owner sees it (`GET /withdrawals`, docs/rules.md#withdrawal-statuses). */
export const WithdrawalView = Schema.Struct({
  id: WithdrawalId,
  amountCents: Schema.BigIntFromNumber,
  status: WithdrawalStatus,
  paymentMethod: WithdrawalMethod,
  requestedAt: Schema.Date,
  processedAt: Schema.NullOr(Schema.Date),
  rejectionReason: Schema.NullOr(Schema.String)
})
export type WithdrawalView = typeof WithdrawalView.Type

/** `POST /withdrawals/request` (docs/rules.md#withdrawal-request). */
export const WithdrawalRequested = Schema.Struct({
  id: WithdrawalId,
  amountCents: Schema.BigIntFromNumber,
  status: WithdrawalStatus,
  requestedAt: Schema.Date
})
export type WithdrawalRequested = typeof WithdrawalRequested.Type

/** What an administrator sees: also who, where the money goes, and how the payout went. */
export const AdminWithdrawalView = Schema.extend(
  WithdrawalView,
  Schema.Struct({
    user: Schema.Struct({ id: UserId, username: Schema.String }),
    pixKeyType: PixKeyType,
    pixKey: Schema.String,
    payoutId: Schema.NullOr(Schema.String),
    /** Gateway calls started; after the first the owner can no longer cancel. */
    payoutAttempts: Schema.Int,
    /** What went wrong with the last payout (refused, no answer, failed). */
    payoutError: Schema.NullOr(Schema.String),
    /** PROCESSING: the gateway has the payout and has not told its outcome yet. */
    payoutInProgress: Schema.Boolean,
    /**
     * Under JURISDICTION=BR, the masked CPF of the PIX key's owner as the gateway's key directory named it at
     * request (docs/rules.md#pix-key-owner); absent when no owner was checked.
     */
    pixKeyOwnerCpf: Schema.optional(Schema.String.annotations({ description: "Masked: ***.456.789-**", examples: ["***.456.789-**"] }))
  })
)
export type AdminWithdrawalView = typeof AdminWithdrawalView.Type

/** Approving, rejecting or cancelling a withdrawal that has ended (docs/rules.md#withdrawal-payout) (400). */
export class WithdrawalNotPending extends Schema.TaggedError<WithdrawalNotPending>()(
  "WithdrawalNotPending",
  message("Withdrawal is not pending")
) {}

/** An administrator's approval or rejection of a withdrawal whose payout is under way (PROCESSING) (docs/rules.md#withdrawal-payout) (409). */
export class WithdrawalPayoutInProgress extends Schema.TaggedError<WithdrawalPayoutInProgress>()(
  "WithdrawalPayoutInProgress",
  message("Withdrawal payout is in progress")
) {}

/** The owner's cancellation of a withdrawal whose payout was attempted or is under way (docs/rules.md#withdrawal-cancel) (409). */
export class WithdrawalBeingProcessed extends Schema.TaggedError<WithdrawalBeingProcessed>()(
  "WithdrawalBeingProcessed",
  message("Withdrawal is already being processed")
) {}

/**
 * Under JURISDICTION=BR, a withdrawal to a PIX key that the gateway's key directory does not name the account
 * holder as owner of (docs/rules.md#pix-key-owner) (422 `{error: "KEY_NOT_OWNED"}`).
 */
export class KeyNotOwned extends Schema.TaggedError<KeyNotOwned>()(
  "KeyNotOwned",
  message("The PIX key does not belong to the account holder")
) {}

/** Reconciling a withdrawal that is not PROCESSING (docs/rules.md#withdrawal-reconcile) (400). */
export class WithdrawalNotProcessing extends Schema.TaggedError<WithdrawalNotProcessing>()(
  "WithdrawalNotProcessing",
  message("Withdrawal is not processing")
) {}

/** The payment gateway refused or failed a payout; what it concerns (a withdrawal) is left unchanged (502). */
export class PayoutFailed extends Schema.TaggedError<PayoutFailed>()("PayoutFailed", message("Payout failed")) {}
