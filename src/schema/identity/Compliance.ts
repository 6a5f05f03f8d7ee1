/**
 * The player's identity and compliance status (docs/rules.md#jurisdiction-br, D22): the identity request,
 * what is shown of an identity (the CPF always masked), and the errors of identity verification and of
 * the actions that need it.
 */
import { Schema } from "effect"
import { isValidCpf } from "../money/Withdrawal"
import { message } from "../platform/Errors"
import { PlainString } from "../platform/Text"
import { ExclusionStatus, LimitsView } from "./ResponsibleGaming"

/** A CPF's 11 digits. */
export const cpfDigits = (cpf: string): string => cpf.replace(/\D/g, "")

/** A CPF as it may be shown (docs/rules.md#identity-masking): `***.456.789-**`; takes the 11 digits. */
export const maskCpf = (digits: string): string => `***.${digits.slice(3, 6)}.${digits.slice(6, 9)}-**`

/** `12345678909` or `123.456.789-09`, with both check digits right; all-equal digits (`111.111.111-11`) are invalid. */
export const Cpf = Schema.String.pipe(
  Schema.filter((cpf) => isValidCpf(cpf), {
    message: () => "must be a valid CPF (11 digits, with or without punctuation, with valid check digits)"
  })
)

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/

/** A real calendar date `YYYY-MM-DD` from 1900-01-01 on. */
const BirthDate = Schema.String.pipe(
  Schema.filter((text) => {
    const match = ISO_DATE.exec(text)
    if (match === null) return "must be a date YYYY-MM-DD"
    const date = new Date(`${text}T00:00:00Z`)
    return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text && Number(match[1]) >= 1900
      ? true
      : "must be a real date YYYY-MM-DD from 1900 on"
  })
)

/** The holder's name as registered with the CPF: trimmed, 3 to 200 characters. */
const FullName = PlainString.pipe(
  Schema.trimmed({ message: () => "must not start or end with spaces" }),
  Schema.minLength(3, { message: () => "must be at least 3 characters" }),
  Schema.maxLength(200, { message: () => "must be at most 200 characters" })
)

/** POST /users/me/identity (docs/rules.md#identity-verification). */
export const IdentityRequest = Schema.Struct({
  cpf: Cpf,
  fullName: FullName,
  birthDate: BirthDate
}).annotations({ parseOptions: { errors: "all" } })
export type IdentityRequest = typeof IdentityRequest.Type

/** A verified identity as shown to its owner (and anyone else): the CPF masked. */
export const VerifiedIdentity = Schema.Struct({
  status: Schema.Literal("VERIFIED"),
  cpf: Schema.String.annotations({ description: "Masked: ***.456.789-**", examples: ["***.456.789-**"] }),
  fullName: Schema.String,
  birthDate: Schema.String.annotations({ description: "YYYY-MM-DD" })
})
export type VerifiedIdentity = typeof VerifiedIdentity.Type

/** The identity block of GET /users/me/compliance: UNVERIFIED alone, or VERIFIED with the masked identity. */
export const IdentityStatus = Schema.Struct({
  status: Schema.Literal("UNVERIFIED", "VERIFIED"),
  cpf: Schema.optional(Schema.String),
  fullName: Schema.optional(Schema.String),
  birthDate: Schema.optional(Schema.String)
})

/** GET /users/me/compliance (docs/rules.md#compliance-status): the identity, and responsible gaming's state (D23). */
export const ComplianceStatus = Schema.Struct({
  jurisdiction: Schema.Literal("NONE", "BR"),
  identity: IdentityStatus,
  exclusion: ExclusionStatus,
  limits: LimitsView
})

/** Under 18 on the service's date in America/Sao_Paulo (403 `{error: "UNDERAGE"}`). */
export class Underage extends Schema.TaggedError<Underage>()(
  "Underage",
  message("Players must be 18 or older")
) {}

/** The CPF is already verified on another account (409). */
export class CpfAlreadyRegistered extends Schema.TaggedError<CpfAlreadyRegistered>()(
  "CpfAlreadyRegistered",
  message("CPF already registered")
) {}

/** This account's identity is verified and cannot be changed by its user (409). */
export class IdentityAlreadyVerified extends Schema.TaggedError<IdentityAlreadyVerified>()(
  "IdentityAlreadyVerified",
  message("Identity already verified")
) {}

/** The identity provider refused: irregular CPF, or a holder other than the name given (422 `{error: "IDENTITY_REFUSED"}`). */
export class IdentityRefused extends Schema.TaggedError<IdentityRefused>()(
  "IdentityRefused",
  message("The identity could not be verified")
) {}

/** A game or money action before the identity is verified, under BR (403 `{error: "IDENTITY_REQUIRED"}`). */
export class IdentityRequired extends Schema.TaggedError<IdentityRequired>()(
  "IdentityRequired",
  message("Verify your identity (POST /api/users/me/identity) before playing or moving money")
) {}
