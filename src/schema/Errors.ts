/**
 * Typed errors shared by every domain (DECISIONS D3). Each carries the message the client sees;
 * the HTTP status is attached in `src/http/HttpErrors.ts`, so domain code never thinks in HTTP.
 */
import { Schema } from "effect"

const message = (text: string) => ({ message: Schema.optionalWith(Schema.String, { default: () => text }) })

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

/** A request that is well-formed but not acceptable in the current state (400). */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", message("Bad request")) {}

/** A conflict with existing data, e.g. a duplicate slug (409). */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", message("Conflict")) {}

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
export class UnprocessableEntity extends Schema.TaggedError<UnprocessableEntity>()("UnprocessableEntity", {
  ...message("Unprocessable entity"),
  errors: Schema.Array(FieldError)
}) {}

export class InsufficientBalance extends Schema.TaggedError<InsufficientBalance>()(
  "InsufficientBalance",
  message("Insufficient balance")
) {}

/** The per-user lock stayed busy for the whole wait (D7). */
export class OperationInProgress extends Schema.TaggedError<OperationInProgress>()(
  "OperationInProgress",
  message("Another operation is in progress")
) {}

export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  ...message("Too many requests"),
  retryAfterSeconds: Schema.optionalWith(Schema.Number, { default: () => 60 })
}) {}

/** A request body over the size limit (D19: 64 KiB on the gateway's callback, 1 MiB elsewhere) (413). */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()(
  "PayloadTooLarge",
  message("Payload too large")
) {}

/** A request body that is not JSON (D19): forms and text are refused, against cross-site form posts (415). */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()(
  "UnsupportedMediaType",
  message("Content-Type must be application/json")
) {}

/** A dependency (database, Redis) is unreachable: /api/ready, and any request that needed it (503). */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", {
  ...message("Service unavailable"),
  /** A serialization failure or deadlock rather than an outage: its transaction may simply run again. */
  conflict: Schema.optionalWith(Schema.Boolean, { default: () => false })
}) {}

/** An `Idempotency-Key` sent again by the same user with a different request (D20, 422). */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()(
  "IdempotencyKeyReused",
  message("Idempotency-Key was already used for a different request")
) {}

/** A defect: answered as 500 with no internals; the cause goes to the log only. */
export class InternalError extends Schema.TaggedError<InternalError>()(
  "InternalError",
  message("Internal server error")
) {}

/** A roll outside every range of a case; D6 validation makes this impossible for a saved case. */
export class InvalidRoll extends Schema.TaggedError<InvalidRoll>()("InvalidRoll", {
  ...message("Invalid roll"),
  roll: Schema.Number
}) {}

/** An absent or inactive case (SPEC open rule 2). */
export class CaseNotFound extends Schema.TaggedError<CaseNotFound>()("CaseNotFound", message("Case not found")) {}

/**
 * A withdrawal above 10000 cents by a user with 2FA on, sent without a code. Its HTTP body is SPEC's
 * own `{statusCode: 400, error: "2FA_REQUIRED", message}` (D3).
 */
export class TwoFactorRequired extends Schema.TaggedError<TwoFactorRequired>()(
  "TwoFactorRequired",
  message("2FA code required")
) {}

/** The payment gateway refused or failed a payout; what it concerns (a withdrawal) is left unchanged (502). */
export class PayoutFailed extends Schema.TaggedError<PayoutFailed>()("PayoutFailed", message("Payout failed")) {}

/**
 * The user has no AVAILABLE inventory entry that fits (SPEC upgrade rule 3). Selling an entry that is
 * absent, someone else's, or no longer AVAILABLE uses it too, with D8's message `Item not available`.
 */
export class ItemNotAvailable extends Schema.TaggedError<ItemNotAvailable>()(
  "ItemNotAvailable",
  message("Item not available for upgrade")
) {}

/** The upgrade target is absent or not upgradable (SPEC upgrade rule 4). */
export class ItemNotUpgradable extends Schema.TaggedError<ItemNotUpgradable>()(
  "ItemNotUpgradable",
  message("Item not upgradable")
) {}

/** The upgrade target is not worth strictly more than the source (SPEC upgrade rule 5). */
export class InvalidUpgrade extends Schema.TaggedError<InvalidUpgrade>()(
  "InvalidUpgrade",
  message("Target item must have higher value")
) {}

/** The target is worth more than 10 times the source (D8). */
export class MultiplierTooHigh extends Schema.TaggedError<MultiplierTooHigh>()(
  "MultiplierTooHigh",
  message("Maximum multiplier is 10x")
) {}

/** The unclamped upgrade probability is below the 0.01 floor (see `upgradeOdds` in services/Upgrades.ts). */
export class ProbabilityTooLow extends Schema.TaggedError<ProbabilityTooLow>()(
  "ProbabilityTooLow",
  message("Probability too low")
) {}

/** The payment gateway could not create a charge; nothing was recorded (502). */
export class GatewayUnavailable extends Schema.TaggedError<GatewayUnavailable>()(
  "GatewayUnavailable",
  message("Payment gateway unavailable")
) {}

/** A gateway callback whose `x-webhook-signature` does not match its body (SPEC deposit rule 3). */
export class InvalidWebhookSignature extends Schema.TaggedError<InvalidWebhookSignature>()(
  "InvalidWebhookSignature",
  message("Invalid webhook signature")
) {}
