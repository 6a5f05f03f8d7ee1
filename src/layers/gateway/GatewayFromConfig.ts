/** The real gateway when PAYMENT_GATEWAY_URL is set, else the embedded sandbox (D1, D9). */
import { Effect, Layer, Option } from "effect"
import { AppConfig, StartupError } from "../AppConfig"
import { HttpGateway } from "./HttpGateway"
import { SandboxGateway } from "./SandboxGateway"

export const GatewayFromConfig = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    return yield* Option.match(config.gateway.url, {
      onNone: () => Effect.as(Effect.logInfo("Payment gateway: embedded sandbox (see /api/sandbox/charges)"), SandboxGateway),
      onSome: (url) =>
        Option.match(config.gateway.key, {
          onNone: () => Effect.fail(new StartupError({ message: "PAYMENT_GATEWAY_KEY is required with PAYMENT_GATEWAY_URL" })),
          onSome: (key) => Effect.as(Effect.logInfo(`Payment gateway: ${url}`), HttpGateway(url, key))
        })
    })
  })
)
