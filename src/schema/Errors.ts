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

/** A dependency (database, Redis) is unreachable; only /api/ready reports it. */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()(
  "ServiceUnavailable",
  message("Service unavailable")
) {}
