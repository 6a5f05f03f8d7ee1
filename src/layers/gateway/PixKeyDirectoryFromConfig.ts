/**
 * The PIX key directory of the gateway in use (docs/rules.md#pix-key-owner): the sandbox's while the sandbox
 * gateway is in use, else the real gateway's at PAYMENT_GATEWAY_URL with PAYMENT_GATEWAY_KEY. Without a gateway
 * (which only a test world has: the service itself does not start so, docs/rules.md#sandbox-mode) a directory
 * that is always unavailable stands in; it is asked only under JURISDICTION=BR.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { AppConfig, usesSandboxGateway } from "../AppConfig"
import { PixKeyDirectory, PixKeyDirectoryUnavailable } from "../PixKeyDirectory"
import { HttpPixKeyDirectory } from "./HttpPixKeyDirectory"
import { SandboxPixKeyDirectory } from "./SandboxPixKeyDirectory"

const NoDirectory = Layer.succeed(PixKeyDirectory, {
  lookup: () => Effect.fail(new PixKeyDirectoryUnavailable({ message: "No payment gateway is configured" }))
})

export const PixKeyDirectoryFromConfig = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    usesSandboxGateway(config)
      ? SandboxPixKeyDirectory
      : Option.match(config.gateway.url, {
        onNone: () => NoDirectory,
        onSome: (url) => HttpPixKeyDirectory(url, Option.getOrElse(config.gateway.key, () => Redacted.make("")))
      }))
)
