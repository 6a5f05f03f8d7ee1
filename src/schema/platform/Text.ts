/**
 * Free text from clients. PostgreSQL text cannot hold NUL, and control characters are never meant in
 * a name, reason, URL or code: such input is refused as a field error (400), not left to fail in a
 * query. Tab, line feed and carriage return are allowed.
 */
import { Schema } from "effect"

const CONTROL_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/

/** A string without control characters. */
export const PlainString = Schema.String.pipe(
  Schema.filter((text) => !CONTROL_CHARACTERS.test(text), { message: () => "must not contain control characters" })
)

/** Why an administrator did something: required, trimmed, at most 500 characters. */
export const Reason = PlainString.pipe(
  Schema.trimmed({ message: () => "must not start or end with spaces" }),
  Schema.nonEmptyString({ message: () => "is required" }),
  Schema.maxLength(500, { message: () => "must be at most 500 characters" })
)
