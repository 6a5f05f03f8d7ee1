/**
 * How the embedded sandbox gateway (docs/rules.md#sandbox-gateway) reaches our own callback: it signs the
 * gateway event with the shared webhook secret, over `timestamp.body` with the time of the Clock in
 * `x-webhook-timestamp` (docs/rules.md#gateway-callback-timestamp), and POSTs it over HTTP to this instance's
 * `/api/webhooks/payment`, so a sandbox payment takes the same path (allowed IPs, signature, timestamp,
 * parsing) as a real gateway's.
 */
import { Clock, Context, Effect, Layer, Redacted } from "effect"
import { AppConfig } from "../AppConfig"
import { GatewayError } from "../PaymentGateway"
import { signGatewayEvent } from "./GatewaySignature"

export interface SandboxEvent {
  readonly event: "charge.paid" | "charge.failed" | "charge.expired"
  /** `payerDocument`: who paid a charge.paid, CPF digits (docs/rules.md#deposit-third-party). */
  readonly data: { readonly id: string; readonly failReason?: string; readonly payerDocument?: string }
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
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.tryPromise({
              try: async (signal) => {
                const body = JSON.stringify(event)
                const timestamp = String(Math.floor(now / 1000))
                const response = await post(url, {
                  method: "POST",
                  headers: {
                    "content-type": "application/json",
                    "x-webhook-timestamp": timestamp,
                    "x-webhook-signature": signGatewayEvent(secret, body, timestamp)
                  },
                  body,
                  signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)])
                })
                return { status: response.status, body: await response.text() }
              },
              catch: (cause) => new GatewayError({ message: `Sandbox callback failed: ${String(cause)}` })
            }))
      }
    })
  )

export const SandboxCallbackLive = makeSandboxCallback((url, init) => fetch(url, init))
