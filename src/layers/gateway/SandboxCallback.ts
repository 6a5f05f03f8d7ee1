/**
 * How the embedded sandbox gateway (docs/rules.md#sandbox-gateway) reaches our own callback: it signs the
 * gateway event with the shared webhook secret and POSTs it over HTTP to this instance's `/api/webhooks/payment`, so a
 * sandbox payment takes the same path (allowed IPs, signature, parsing) as a real gateway's.
 */
import { Context, Effect, Layer, Redacted } from "effect"
import { AppConfig } from "../AppConfig"
import { GatewayError } from "../PaymentGateway"
import { signGatewayBody } from "./GatewaySignature"

export interface SandboxEvent {
  readonly event: "charge.paid" | "charge.failed" | "charge.expired"
  readonly data: { readonly id: string; readonly failReason?: string }
}

interface SandboxCallbackShape {
  /** The callback's HTTP status and body. */
  readonly send: (event: SandboxEvent) => Effect.Effect<{ readonly status: number; readonly body: string }, GatewayError>
}

export class SandboxCallback extends Context.Tag("app/SandboxCallback")<SandboxCallback, SandboxCallbackShape>() {}

const CALLBACK_PATH = "/api/webhooks/payment"

/** Sends through `post` (`fetch` in the service; tests route it into the in-process app). */
export const makeSandboxCallback = (post: (url: string, init: RequestInit) => Promise<Response>) =>
  Layer.effect(
    SandboxCallback,
    Effect.map(AppConfig, (config) => {
      const url = `http://127.0.0.1:${config.port}${CALLBACK_PATH}`
      const secret = Redacted.value(config.secrets.webhookSecret)
      return {
        send: (event) =>
          Effect.tryPromise({
            try: async (signal) => {
              const body = JSON.stringify(event)
              const response = await post(url, {
                method: "POST",
                headers: { "content-type": "application/json", "x-webhook-signature": signGatewayBody(secret, body) },
                body,
                signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)])
              })
              return { status: response.status, body: await response.text() }
            },
            catch: (cause) => new GatewayError({ message: `Sandbox callback failed: ${String(cause)}` })
          })
      }
    })
  )

export const SandboxCallbackLive = makeSandboxCallback((url, init) => fetch(url, init))
