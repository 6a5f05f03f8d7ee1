/**
 * The identity (KYC) provider (docs/rules.md#kyc-provider), an outside system behind a Layer: is this CPF
 * regular at the Receita Federal, and is its holder the person named? Implementations: the embedded
 * sandbox (SANDBOX on, no KYC_PROVIDER_URL) and the HTTP adapter of docs/providers.md; both read the
 * provider's answer with `interpretKyc`, so they refuse alike.
 */
import { Context, Data, type Effect } from "effect"

export interface KycRequest {
  /** The CPF's 11 digits. */
  readonly cpf: string
  readonly fullName: string
  /** YYYY-MM-DD */
  readonly birthDate: string
}

export type KycResult =
  | { readonly _tag: "Regular" }
  /** Why, for the log (never the CPF): `irregular CPF`, `CPF not found`, `name mismatch`. */
  | { readonly _tag: "Refused"; readonly reason: string }

/** The provider could not be reached, timed out or failed on its side (D20: 503). */
export class KycUnavailable extends Data.TaggedError("KycUnavailable")<{ readonly message: string }> {}

interface KycShape {
  readonly check: (request: KycRequest) => Effect.Effect<KycResult, KycUnavailable>
}

export class Kyc extends Context.Tag("app/Kyc")<Kyc, KycShape>() {}

/** A name compared as registries do: accents, letter case and repeated spaces ignored. */
export const comparableName = (name: string): string =>
  name.normalize("NFD").replace(/\p{M}/gu, "").toUpperCase().replace(/\s+/g, " ").trim()

/**
 * The provider's answer to `POST /cpf/check` (docs/providers.md), read: 200 `{situation: "REGULAR", holderName}`
 * with the holder named as sent is Regular; another situation, 404 (no such CPF) or another holder is
 * Refused; anything else (other statuses, a body that is not the contract's) is `undefined`: unavailable.
 */
export const interpretKyc = (request: KycRequest, status: number, body: unknown): KycResult | undefined => {
  if (status === 404) return { _tag: "Refused", reason: "CPF not found" }
  if (status !== 200 || typeof body !== "object" || body === null) return undefined
  const { holderName, situation } = body as { situation?: unknown; holderName?: unknown }
  if (typeof situation !== "string") return undefined
  if (situation !== "REGULAR") return { _tag: "Refused", reason: `${situation.slice(0, 40).toLowerCase()} CPF` }
  if (typeof holderName !== "string") return undefined
  return comparableName(holderName) === comparableName(request.fullName)
    ? { _tag: "Regular" }
    : { _tag: "Refused", reason: "name mismatch" }
}
