/** Deposits for tests: initiate through the API, and the gateway's signed callback (docs/rules.md#gateway-callback). */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { createHmac } from "node:crypto"
import type { TestClient } from "./TestApp"

/** The webhook secret of `testConfig`, shared with the gateway. */
export const GATEWAY_SECRET = "test-webhook-secret"

export const signGateway = (body: string, secret = GATEWAY_SECRET) => createHmac("sha256", secret).update(body).digest("hex")

/** The timestamped signature (docs/rules.md#gateway-callback-timestamp): over `timestamp + "." + body`. */
export const signGatewayAt = (timestamp: number | string, body: string, secret = GATEWAY_SECRET) =>
  signGateway(`${timestamp}.${body}`, secret)

/**
 * POSTs a gateway event to the callback, signed over exactly the bytes sent unless told otherwise; with
 * `timestamp` (seconds), sent in `x-webhook-timestamp` and covered by the signature.
 */
export const gatewayCall = (
  client: TestClient,
  body: unknown,
  options: {
    readonly signature?: string | null
    readonly timestamp?: number | string
    readonly headers?: Record<string, string>
  } = {}
) => {
  const raw = typeof body === "string" ? body : JSON.stringify(body)
  const signature = options.signature !== undefined
    ? options.signature
    : options.timestamp === undefined
    ? signGateway(raw)
    : signGatewayAt(options.timestamp, raw)
  return client.request("/api/webhooks/payment", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(signature === null ? {} : { "x-webhook-signature": signature }),
      ...(options.timestamp === undefined ? {} : { "x-webhook-timestamp": String(options.timestamp) }),
      ...options.headers
    },
    body: raw
  })
}

export const paidEvent = (externalId: string) => ({ event: "charge.paid", data: { id: externalId } })

export interface InitiatedDeposit {
  readonly depositId: string
  readonly externalId: string
  readonly amountCents: string
  readonly expiresAt: string
}

/** `POST /api/payment/deposit/initiate`, expected to succeed. */
export const initiateDeposit = (client: TestClient, auth: Record<string, string>, amountCents: number, method = "PIX") =>
  Effect.gen(function*() {
    const response = yield* client.post("/api/payment/deposit/initiate", { amountCents, method }, auth)
    expect(response.status).toBe(201)
    return response.body as InitiatedDeposit
  })

/** A confirmed deposit: initiated, then paid through the signed callback. */
export const confirmedDeposit = (client: TestClient, auth: Record<string, string>, amountCents: number) =>
  Effect.gen(function*() {
    const deposit = yield* initiateDeposit(client, auth, amountCents)
    expect((yield* gatewayCall(client, paidEvent(deposit.externalId))).status).toBe(200)
    return deposit
  })
