/**
 * The real KYC provider when KYC_PROVIDER_URL is set, else the embedded sandbox when SANDBOX allows it
 * (docs/rules.md#kyc-provider). Under JURISDICTION=NONE without either, no identity is ever checked (the
 * identity endpoint answers 404): a provider that is always unavailable stands in.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { AppConfig, StartupError, usesSandboxKyc } from "../AppConfig"
import { Kyc, KycUnavailable } from "../Kyc"
import { HttpKyc } from "./HttpKyc"
import { SandboxKyc } from "./SandboxKyc"

const NoKyc = Layer.succeed(Kyc, {
  check: () => Effect.fail(new KycUnavailable({ message: "No identity provider is configured" }))
})

export const KycFromConfig = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isSome(config.kyc.url)) {
      const url = config.kyc.url.value
      return yield* Effect.as(
        Effect.logInfo(`Identity provider: ${url}`),
        HttpKyc(url, Option.getOrElse(config.kyc.key, () => Redacted.make("")))
      )
    }
    if (usesSandboxKyc(config)) return SandboxKyc
    if (config.jurisdiction === "BR") {
      return yield* Effect.fail(new StartupError({ message: "KYC_PROVIDER_URL is required under JURISDICTION=BR without SANDBOX=true" }))
    }
    return NoKyc
  })
)
