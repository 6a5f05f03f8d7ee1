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

/**
 * An operation that kept meeting changed state (docs/rules.md#please-retry): the state it read changed under it on
 * every attempt, or its transaction kept meeting serialization failures. Nothing was written; the
 * client may simply send it again (409 with Retry-After).
 */
export class PleaseRetry extends Schema.TaggedError<PleaseRetry>()("PleaseRetry", message("Please retry")) {}

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

