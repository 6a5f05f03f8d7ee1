/**
 * Typed errors shared by the groups (docs/rules.md#domain-errors); each group declares its own in its schema
 * files (`src/schema/<group>/`). Each carries the message the client sees; the HTTP status is attached in
 * `src/http/platform/HttpErrors.ts`, so domain code never thinks in HTTP.
 */
import { Schema } from "effect"

/** The `message` field of an error, with the message it has when none is given. */
export const message = (text: string) => ({ message: Schema.optionalWith(Schema.String, { default: () => text }) })

/** No session, an expired one, or an unknown one. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()(
  "Unauthenticated",
  message("Unauthorized")
) {}

/** Signed in, but not allowed. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", message("Forbidden")) {}

/** Any record that does not exist or belongs to someone else; the message names the thing. */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", message("Not found")) {
  static of(thing: string): NotFound {
    return new NotFound({ message: `${thing} not found` })
  }
}

export class FieldError extends Schema.Class<FieldError>("FieldError")({
  field: Schema.String,
  message: Schema.String
}) {}

/** Input that fails validation: 400 with one entry per bad field. */
export class ValidationError extends Schema.TaggedError<ValidationError>()("ValidationError", {
  ...message("Validation failed"),
  errors: Schema.Array(FieldError)
}) {}

/** Semantically invalid input that parsed fine, e.g. case ranges that do not cover 1..10000000 (422). */

export class InsufficientBalance extends Schema.TaggedError<InsufficientBalance>()(
  "InsufficientBalance",
  message("Insufficient balance")
) {}

/** The per-user lock stayed busy for the whole wait (docs/rules.md#user-lock). */
export class OperationInProgress extends Schema.TaggedError<OperationInProgress>()(
  "OperationInProgress",
  message("Another operation is in progress")
) {}

export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  ...message("Too many requests"),
  retryAfterSeconds: Schema.optionalWith(Schema.Number, { default: () => 60 })
}) {}

/**
 * A request body over the size limit (64 KiB on the gateway's callback, 1 MiB elsewhere: 413,
 * docs/rules.md#request-bodies).
 */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()(
  "PayloadTooLarge",
  message("Payload too large")
) {}

/**
 * A request body that is not JSON (docs/rules.md#request-bodies): forms and text are refused, against
 * cross-site form posts (415).
 */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()(
  "UnsupportedMediaType",
  message("Content-Type must be application/json")
) {}

/**
 * A request body that cannot be read as JSON (docs/rules.md#request-bodies): an invalid `Content-Length`,
 * malformed JSON, or JSON nested too deep; the message says which (400).
 */
export class MalformedBody extends Schema.TaggedError<MalformedBody>()("MalformedBody", message("Malformed JSON body")) {}

/** A dependency (database, Redis) is unreachable: /api/ready, and any request that needed it (503). */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", {
  ...message("Service unavailable"),
  /** A serialization failure or deadlock rather than an outage: its transaction may simply run again. */
  conflict: Schema.optionalWith(Schema.Boolean, { default: () => false })
}) {}

/** An `Idempotency-Key` sent again by the same user with a different request (422, docs/rules.md#idempotency-keys). */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()(
  "IdempotencyKeyReused",
  message("Idempotency-Key was already used for a different request")
) {}

/** A defect: answered as 500 with no internals; the cause goes to the log only. */
export class InternalError extends Schema.TaggedError<InternalError>()(
  "InternalError",
  message("Internal server error")
) {}

/**
 * A roll outside every range of a case; validation makes this impossible for a saved case
 * (docs/rules.md#case-validation).
 */
export class InvalidRoll extends Schema.TaggedError<InvalidRoll>()("InvalidRoll", {
  ...message("Invalid roll"),
  roll: Schema.Number
}) {}

/** An absent or inactive case (docs/rules.md#open-case). */
export class CaseNotFound extends Schema.TaggedError<CaseNotFound>()("CaseNotFound", message("Case not found")) {}

/**
 * A 2FA-protected action sent without a code: a withdrawal that needs one (docs/rules.md#withdrawal-2fa)
 * or an administrator's money action (docs/rules.md#admin-step-up). Its HTTP body is the one exception to
 * the error body: `{statusCode: 400, error: "2FA_REQUIRED", message}` (docs/rules.md#two-factor-required-error).
 */
export class TwoFactorRequired extends Schema.TaggedError<TwoFactorRequired>()(
  "TwoFactorRequired",
  message("2FA code required")
) {}

/** The payment gateway refused or failed a payout; what it concerns (a withdrawal) is left unchanged (502). */
export class PayoutFailed extends Schema.TaggedError<PayoutFailed>()("PayoutFailed", message("Payout failed")) {}

/**
 * The user has no AVAILABLE inventory entry that fits (docs/rules.md#upgrade-stake). Selling an entry that is
 * absent, someone else's, or no longer AVAILABLE uses it too, with the message `Item not available`
 * (docs/rules.md#selling).
 */
export class ItemNotAvailable extends Schema.TaggedError<ItemNotAvailable>()(
  "ItemNotAvailable",
  message("Item not available for upgrade")
) {}

/** The upgrade target is absent or not upgradable (docs/rules.md#upgrade-refusals). */
export class ItemNotUpgradable extends Schema.TaggedError<ItemNotUpgradable>()(
  "ItemNotUpgradable",
  message("Item not upgradable")
) {}

/** The upgrade target is not worth strictly more than the source (docs/rules.md#upgrade-refusals). */
export class InvalidUpgrade extends Schema.TaggedError<InvalidUpgrade>()(
  "InvalidUpgrade",
  message("Target item must have higher value")
) {}

/** The target is worth more than 10 times the source (docs/rules.md#upgrade-refusals). */
export class MultiplierTooHigh extends Schema.TaggedError<MultiplierTooHigh>()(
  "MultiplierTooHigh",
  message("Maximum multiplier is 10x")
) {}

/** The unclamped upgrade probability is below the 0.01 floor (see `upgradeOdds` in src/services/games/Upgrades.ts). */
export class ProbabilityTooLow extends Schema.TaggedError<ProbabilityTooLow>()(
  "ProbabilityTooLow",
  message("Probability too low")
) {}

/** The payment gateway could not create a charge; nothing was recorded (502). */
export class GatewayUnavailable extends Schema.TaggedError<GatewayUnavailable>()(
  "GatewayUnavailable",
  message("Payment gateway unavailable")
) {}

/** A gateway callback whose `x-webhook-signature` does not match its body (docs/rules.md#gateway-callback). */
export class InvalidWebhookSignature extends Schema.TaggedError<InvalidWebhookSignature>()(
  "InvalidWebhookSignature",
  message("Invalid webhook signature")
) {}

/** A gateway callback from an address outside `GATEWAY_ALLOWED_IPS` (docs/rules.md#gateway-callback) (403). */
export class AddressNotAllowed extends Schema.TaggedError<AddressNotAllowed>()(
  "AddressNotAllowed",
  message("Address not allowed")
) {}
