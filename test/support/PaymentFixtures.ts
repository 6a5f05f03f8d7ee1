/** Deposits for tests: initiate through the API, the gateway's signed callback (docs/rules.md#gateway-callback), what the player is told, and the deposits' ledger checks. */
import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { createHmac } from "node:crypto"
import { Ledger } from "../../src/services/money/Ledger"
import type { TestClient } from "./TestApp"

/** The user's notifications as `GET /api/notifications` answers them: type, title and message. */
export const notificationsOf = (client: TestClient, auth: Record<string, string>) =>
  Effect.map(client.get("/api/notifications", auth), (r) =>
    (r.body.notifications as ReadonlyArray<{ type: string; title: string; message: string }>)
      .map(({ message, title, type }) => ({ type, title, message })))

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

/**
 * The ledger checks after any scenario (docs/rules.md#ledger-checks): balances equal their movements, every
 * CONFIRMED deposit has exactly one DEPOSIT row of its amount, and no DEPOSIT row exists for a deposit that is
 * not CONFIRMED.
 */
export const ledgerProblems = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const discrepancies = yield* Effect.flatMap(Ledger, (ledger) => ledger.discrepancies).pipe(Effect.provide(Ledger.Default))
  const deposits = yield* sql<{ id: string; status: string; credits: number }>`
    SELECT d.id::text AS id, d.status, count(t.id)::int AS credits
    FROM deposits d
    LEFT JOIN transactions t ON t.reference_type = 'DEPOSIT' AND t.reference_id = d.id
      AND t.type = 'DEPOSIT' AND t.amount_cents = d.amount_cents AND t.user_id = d.user_id
    GROUP BY d.id
    HAVING count(t.id) <> CASE WHEN d.status = 'CONFIRMED' THEN 1 ELSE 0 END`
  const orphans = yield* sql<{ id: string }>`
    SELECT t.id::text AS id FROM transactions t
    LEFT JOIN deposits d ON t.reference_type = 'DEPOSIT' AND d.id = t.reference_id
    WHERE t.type = 'DEPOSIT' AND d.id IS NULL`
  return { discrepancies, deposits, orphans }
})
export const healthyLedger = { discrepancies: [], deposits: [], orphans: [] }
