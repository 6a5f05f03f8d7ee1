/**
 * The real gateway when PAYMENT_GATEWAY_URL is set, else the embedded sandbox when SANDBOX allows it
 * (docs/rules.md#sandbox-mode).
 */
import { Effect, Layer, Option } from "effect"
import { AppConfig, StartupError, usesSandboxGateway } from "../AppConfig"
import { HttpGateway } from "./HttpGateway"
import { SandboxGateway } from "./SandboxGateway"

export const GatewayFromConfig = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (usesSandboxGateway(config)) {
      return yield* Effect.as(Effect.logInfo("Payment gateway: embedded sandbox (see /api/sandbox/charges)"), SandboxGateway)
    }
    return yield* Option.match(Option.all([config.gateway.url, config.gateway.key]), {
      onNone: () =>
        Effect.fail(new StartupError({ message: "PAYMENT_GATEWAY_URL and PAYMENT_GATEWAY_KEY are required without SANDBOX=true" })),
      onSome: ([url, key]) => Effect.as(Effect.logInfo(`Payment gateway: ${url}`), HttpGateway(url, key))
    })
  })
)
