/**
 * The embedded sandbox KYC provider (docs/rules.md#kyc-sandbox): a CPF whose first three digits are `000`
 * is IRREGULAR, any other (valid) CPF is REGULAR and its holder is whoever was named. `sandboxKycAnswer` is
 * the provider's side of docs/providers.md, so the contract test serves it over HTTP to the real client.
 */
import { Effect, Layer } from "effect"
import { interpretKyc, Kyc, KycUnavailable } from "../Kyc"

/** The sandbox's answer to `POST /cpf/check` with `body`: status and JSON body, as the wire carries them. */
export const sandboxKycAnswer = (body: unknown): { readonly status: number; readonly body: unknown } => {
  const { cpf, fullName } = (typeof body === "object" && body !== null ? body : {}) as { cpf?: unknown; fullName?: unknown }
  if (typeof cpf !== "string" || !/^\d{11}$/.test(cpf) || typeof fullName !== "string") {
    return { status: 400, body: { message: "cpf (11 digits) and fullName are required" } }
  }
  return cpf.startsWith("000")
    ? { status: 200, body: { situation: "IRREGULAR" } }
    : { status: 200, body: { situation: "REGULAR", holderName: fullName } }
}

export const SandboxKyc = Layer.succeed(Kyc, {
  check: (request) => {
    const answer = sandboxKycAnswer(request)
    const result = interpretKyc(request, answer.status, answer.body)
    return result === undefined ? Effect.fail(new KycUnavailable({ message: "The identity provider is unavailable" })) : Effect.succeed(result)
  }
})
