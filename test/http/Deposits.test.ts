/**
 * Deposits through the public API (docs/rules.md#deposits, docs/rules.md#ledger-checks): initiation, every
 * transition, the gateway callback's checks, the sandbox controls, the expiry job under the test clock,
 * administration, and the ledger checked after every scenario.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, Layer, Option, Redacted, Ref, TestClock } from "effect"
import { SandboxGateway } from "../../src/layers/gateway/SandboxGateway"
import { type ChargeRequest, PaymentGateway } from "../../src/layers/PaymentGateway"
import { Deposits } from "../../src/services/money/Deposits"
import { balanceOf, fundedPlayer } from "../support/GameFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestAppOptions, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { makeTestGateway } from "../support/TestGateway"
import { gatewayCall, healthyLedger, initiateDeposit, ledgerProblems, notificationsOf, paidEvent, signGateway } from "../support/PaymentFixtures"

/** The deposit service on the test database, for running the expiry job by hand. */

const appOptions = (extra: TestAppOptions = {}): TestAppOptions => ({
  ...extra,
  config: { adminIdpIds: ["root"], ...extra.config }
})

const depositOf = (client: TestClient, auth: Record<string, string>, id: string) =>
  Effect.map(client.get("/api/payment/deposits?limit=100", auth), (r) =>
    (r.body.deposits as ReadonlyArray<{ id: string; status: string; confirmedAt: string | null; failureReason: string | null }>)
      .find((d) => d.id === id)!)

const auditOf = (action: string, entityId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ userId: string; entityType: string; metadata: unknown }>`
      SELECT user_id::text AS user_id, entity_type, metadata FROM audit_logs
      WHERE action = ${action} AND entity_id = ${entityId} ORDER BY id`)

layer(TestDatabase)("deposits", (it) => {
  it.scoped("initiation: the amount limits and their messages, the charge asked of the gateway, the stored payment code", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      const player = yield* signIn(client, "depositor")

      const low = yield* client.post("/api/payment/deposit/initiate", { amountCents: 499, method: "PIX" }, player.auth)
      expect(low.status).toBe(400)
      expect(low.body).toEqual({
        statusCode: 400,
        message: "Minimum deposit is R$ 5.00",
        errors: [{ field: "amountCents", message: "Minimum deposit is R$ 5.00" }]
      })
      const high = yield* client.post("/api/deposits/initiate", { amountCents: 10_000_001, method: "PIX" }, player.auth)
      expect(high.status).toBe(400)
      expect(high.body.message).toBe("Maximum deposit is R$ 100,000.00")
      const badMethod = yield* client.post("/api/payment/deposit/initiate", { amountCents: 1000, method: "BOLETO" }, player.auth)
      expect(badMethod.status).toBe(400)
      expect(badMethod.body.errors).toEqual([{ field: "method", message: "must be one of PIX, CREDIT_CARD, CRYPTO" }])
      const fractional = yield* client.post("/api/payment/deposit/initiate", { amountCents: 1000.5, method: "PIX" }, player.auth)
      expect(fractional.status).toBe(400)
      expect(fractional.body.errors[0].field).toBe("amountCents")
      expect(yield* gateway.charges).toEqual([])

      const smallest = yield* client.post("/api/payment/deposit/initiate", { amountCents: 500, method: "PIX" }, player.auth)
      expect(smallest.status).toBe(201)
      expect(smallest.body).toEqual({
        depositId: expect.stringMatching(/^[1-9][0-9]*$/),
        qrCode: "data:image/png;base64,iVBORw0KGgo=",
        qrCodeText: expect.stringMatching(/^00020126-test-ch_test_\d+$/),
        expiresAt: new Date(30 * 60_000).toISOString(),
        amountCents: "500",
        feeCents: 0,
        totalCents: 500,
        externalId: expect.stringMatching(/^ch_test_\d+$/)
      })
      expect(smallest.body.qrCodeText).toBe(`00020126-test-${smallest.body.externalId}`)
      const largest = yield* client.post("/api/deposits/initiate", { amountCents: 10_000_000, method: "CRYPTO" }, player.auth)
      expect(largest.status).toBe(201)
      // The crypto fee (1 %) is on top: the largest deposit is charged R$ 101,000.00.
      expect(largest.body).toMatchObject({ amountCents: "10000000", feeCents: 100_000, totalCents: 10_100_000 })
      const charges = yield* gateway.charges
      expect(charges.map(({ amountCents, method }) => ({ amountCents, method }))).toEqual([
        { amountCents: 500n, method: "PIX" },
        { amountCents: 10_100_000n, method: "CRYPTO" }
      ])
      expect(new Set(charges.map((c) => c.reference)).size).toBe(2)

      const list = yield* client.get("/api/payment/deposits", player.auth)
      expect(list.status).toBe(200)
      expect(list.body).toEqual({
        deposits: [
          {
            id: largest.body.depositId,
            amountCents: "10000000",
            feeCents: 100_000,
            totalCents: 10_100_000,
            amountFormatted: "R$ 100,000.00",
            method: "CRYPTO",
            status: "PENDING",
            externalId: largest.body.externalId,
            expiresAt: new Date(30 * 60_000).toISOString(),
            createdAt: new Date(0).toISOString(),
            confirmedAt: null,
            failureReason: null
          },
          expect.objectContaining({
            id: smallest.body.depositId,
            amountCents: "500",
            feeCents: 0,
            totalCents: 500,
            amountFormatted: "R$ 5.00",
            status: "PENDING"
          })
        ],
        total: 2,
        page: 1
      })
      expect((yield* client.get("/api/deposits", player.auth)).body).toEqual(list.body)
      const stranger = yield* signIn(client, "someone-else")
      expect((yield* client.get("/api/deposits", stranger.auth)).body).toEqual({ deposits: [], total: 0, page: 1 })
      expect((yield* client.post("/api/payment/deposit/initiate", { amountCents: 500, method: "PIX" })).status).toBe(401)

      yield* gateway.failCharges("connection refused")
      const down = yield* client.post("/api/payment/deposit/initiate", { amountCents: 700, method: "PIX" }, player.auth)
      expect(down.body).toEqual({ statusCode: 502, message: "Payment gateway unavailable" })
      expect(down.status).toBe(502)
      expect((yield* client.get("/api/deposits", player.auth)).body.total).toBe(2)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("payment methods are listed with fee and timing", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const player = yield* signIn(client, "shopper")
      const methods = yield* client.get("/api/payment/methods", player.auth)
      expect(methods.body).toEqual({
        methods: [
          { id: "PIX", name: "PIX", feePercent: 0, processingTime: "instant" },
          { id: "CREDIT_CARD", name: "Credit card", feePercent: 3.5, processingTime: "instant" },
          { id: "CRYPTO", name: "Crypto (BTC/ETH)", feePercent: 1, processingTime: "10 to 60 minutes" }
        ]
      })
      expect((yield* client.get("/api/payment/methods")).status).toBe(401)
    }))

  it.scoped("charge.paid confirms: credit, DEPOSIT row, notification, audit, webhook row, balance push; again changes nothing", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const player = yield* fundedPlayer(client, "payer", 0)
      const registered = yield* client.post(
        "/api/webhooks",
        { url: "https://receiver.example.com/deposits", events: ["deposit.confirmed"], secret: "receiver-secret-0123" },
        { authorization: "Bearer test-admin-token" }
      )
      expect(registered.status).toBe(201)
      const stream = (yield* client.open("/api/realtime", { headers: player.auth })).body!.getReader()
      yield* Effect.promise(() => stream.read())

      const deposit = yield* initiateDeposit(client, player.auth, 2_500)
      yield* TestClock.adjust(60_000)
      const first = yield* gatewayCall(client, paidEvent(deposit.externalId))
      expect(first).toMatchObject({ status: 200, body: { received: true } })
      expect(yield* balanceOf(client, player.auth)).toBe(2_500)
      const confirmed = yield* depositOf(client, player.auth, deposit.depositId)
      expect(confirmed).toMatchObject({ status: "CONFIRMED", confirmedAt: new Date(60_000).toISOString() })

      const sql = yield* SqlClient.SqlClient
      const movements = yield* sql<{ type: string; amountCents: string; counterparty: string; balanceAfterCents: string }>`
        SELECT type, amount_cents, counterparty, balance_after_cents FROM transactions
        WHERE reference_type = 'DEPOSIT' AND reference_id = ${deposit.depositId}`
      expect(movements).toEqual([{ type: "DEPOSIT", amountCents: "2500", counterparty: "EXTERNAL", balanceAfterCents: "2500" }])
      expect(yield* notificationsOf(client, player.auth)).toEqual([
        { type: "DEPOSIT_CONFIRMED", title: "Deposit confirmed", message: "R$ 25.00 has been added to your balance." }
      ])
      expect(yield* auditOf("DEPOSIT_CONFIRMED", deposit.depositId)).toEqual([{
        userId: player.id,
        entityType: "Deposit",
        metadata: { amount: 2500, method: "PIX", externalId: deposit.externalId }
      }])
      const outbox = yield* sql<{ event: string; payload: string }>`
        SELECT event, payload FROM webhook_deliveries WHERE webhook_id = ${registered.body.id}`
      expect(outbox.map((row) => ({ event: row.event, data: JSON.parse(row.payload).data }))).toEqual([
        { event: "deposit.confirmed", data: { depositId: deposit.depositId, userId: player.id, amountCents: 2500 } }
      ])

      // The same event again, and a stampede of it: acknowledged, nothing changes.
      const again = yield* gatewayCall(client, paidEvent(deposit.externalId))
      expect(again).toMatchObject({ status: 200, body: { received: true } })
      // Delivered anew (other bytes, so not a replay of the first delivery): the deposit is already CONFIRMED,
      // answered as the first was (docs/rules.md#deposit-states).
      const anew = yield* gatewayCall(client, `{"data":{"id":${JSON.stringify(deposit.externalId)}},"event":"charge.paid"}`)
      expect({ status: anew.status, body: anew.body }).toEqual({ status: first.status, body: first.body })
      expect(yield* balanceOf(client, player.auth)).toBe(2_500)
      expect((yield* depositOf(client, player.auth, deposit.depositId)).confirmedAt).toBe(new Date(60_000).toISOString())
      expect((yield* notificationsOf(client, player.auth)).length).toBe(1)
      expect((yield* auditOf("DEPOSIT_CONFIRMED", deposit.depositId)).length).toBe(1)
      expect((yield* sql`SELECT id FROM webhook_deliveries WHERE webhook_id = ${registered.body.id}`).length).toBe(1)

      const decoder = new TextDecoder()
      let text = ""
      while (!text.includes("event: notification")) text += decoder.decode((yield* Effect.promise(() => stream.read())).value)
      expect(text).toContain(`event: balance.updated\ndata: {"balanceCents":2500}`)
      expect(text.indexOf("balance.updated")).toBeLessThan(text.indexOf("event: notification"))
      yield* Effect.promise(() => stream.cancel())
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("charge.failed and charge.expired close a pending deposit without money; unknown charges are 404", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const player = yield* signIn(client, "unlucky")
      const failing = yield* initiateDeposit(client, player.auth, 1_000)
      const expiring = yield* initiateDeposit(client, player.auth, 2_000)

      const failed = yield* gatewayCall(client, { event: "charge.failed", data: { id: failing.externalId, failReason: "Insufficient funds" } })
      expect(failed).toMatchObject({ status: 200, body: { received: true } })
      expect(yield* depositOf(client, player.auth, failing.depositId)).toMatchObject({ status: "FAILED", failureReason: "Insufficient funds", confirmedAt: null })
      const expired = yield* gatewayCall(client, { event: "charge.expired", data: { id: expiring.externalId } })
      expect(expired.status).toBe(200)
      expect(yield* depositOf(client, player.auth, expiring.depositId)).toMatchObject({ status: "EXPIRED", confirmedAt: null })
      expect(yield* notificationsOf(client, player.auth)).toEqual([
        { type: "DEPOSIT_EXPIRED", title: "Deposit expired", message: "Your deposit of R$ 20.00 expired before it was paid." }
      ])
      // A failure after the fact does not reopen or change a closed deposit.
      yield* gatewayCall(client, { event: "charge.failed", data: { id: expiring.externalId, failReason: "late" } })
      expect((yield* depositOf(client, player.auth, expiring.depositId)).status).toBe("EXPIRED")

      for (const event of ["charge.paid", "charge.failed", "charge.expired"]) {
        const unknown = yield* gatewayCall(client, { event, data: { id: "ch_nobody" } })
        expect(unknown.status).toBe(404)
        expect(unknown.body).toEqual({ statusCode: 404, message: "Deposit not found" })
      }
      const other = yield* gatewayCall(client, { event: "charge.refunded", data: { id: "ch_nobody" } })
      expect(other).toMatchObject({ status: 200, body: { received: true } })
      const malformed = yield* gatewayCall(client, { event: "charge.paid", data: {} })
      expect(malformed.status).toBe(400)
      expect(malformed.body.errors).toEqual([{ field: "data.id", message: expect.any(String) }])
      const notJson = yield* gatewayCall(client, "{not json")
      expect(notJson.body).toEqual({ statusCode: 400, message: "Malformed JSON body" })
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("a payment that arrives after the deposit expired is still credited, once, and flagged", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const player = yield* signIn(client, "late-payer")
      const deposit = yield* initiateDeposit(client, player.auth, 3_000)
      yield* gatewayCall(client, { event: "charge.expired", data: { id: deposit.externalId } })
      yield* gatewayCall(client, paidEvent(deposit.externalId))
      yield* gatewayCall(client, paidEvent(deposit.externalId))
      expect((yield* depositOf(client, player.auth, deposit.depositId)).status).toBe("CONFIRMED")
      expect(yield* balanceOf(client, player.auth)).toBe(3_000)
      expect(yield* auditOf("DEPOSIT_PAID_LATE", deposit.depositId)).toEqual([
        expect.objectContaining({ metadata: { previousStatus: "EXPIRED", externalId: deposit.externalId } })
      ])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("the owner cancels a pending deposit: the gateway cancels the charge first; otherwise nothing changes", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      const player = yield* signIn(client, "changed-mind")
      const stranger = yield* signIn(client, "other-player")
      const deposit = yield* initiateDeposit(client, player.auth, 2_500)

      expect(yield* client.post(`/api/payment/deposits/${deposit.depositId}/cancel`, undefined, stranger.auth))
        .toMatchObject({ status: 404, body: { statusCode: 404, message: "Deposit not found" } })
      expect((yield* client.post("/api/deposits/abc/cancel", undefined, player.auth)).status).toBe(400)
      expect((yield* client.post("/api/deposits/999999/cancel", undefined, player.auth)).status).toBe(404)

      // The gateway is down: 502, and the deposit stays payable.
      yield* gateway.answerCancels("unavailable")
      expect(yield* client.post(`/api/payment/deposits/${deposit.depositId}/cancel`, undefined, player.auth))
        .toMatchObject({ status: 502, body: { statusCode: 502, message: "Payment gateway unavailable" } })
      expect((yield* depositOf(client, player.auth, deposit.depositId)).status).toBe("PENDING")

      // The gateway says the charge is paid: not cancelled; charge.paid will confirm it.
      yield* gateway.answerCancels("already paid")
      expect(yield* client.post(`/api/payment/deposits/${deposit.depositId}/cancel`, undefined, player.auth))
        .toMatchObject({ status: 400, body: { statusCode: 400, message: "Deposit is not pending" } })
      expect((yield* depositOf(client, player.auth, deposit.depositId)).status).toBe("PENDING")
      expect(yield* auditOf("DEPOSIT_CANCELLED", deposit.depositId)).toEqual([])

      yield* gateway.answerCancels("cancelled")
      const cancelled = yield* client.post(`/api/deposits/${deposit.depositId}/cancel`, undefined, player.auth)
      expect(cancelled.status).toBe(200)
      expect(cancelled.body).toMatchObject({ id: deposit.depositId, status: "CANCELLED", amountCents: "2500", confirmedAt: null })
      expect(yield* gateway.cancels).toEqual([deposit.externalId, deposit.externalId, deposit.externalId])
      expect(yield* auditOf("DEPOSIT_CANCELLED", deposit.depositId)).toEqual([
        { userId: (yield* client.get("/api/auth/me", player.auth)).body.id, entityType: "Deposit", metadata: { externalId: deposit.externalId, amount: 2_500 } }
      ])
      expect(yield* client.post(`/api/payment/deposits/${deposit.depositId}/cancel`, undefined, player.auth))
        .toMatchObject({ status: 400, body: { message: "Deposit is not pending" } })
      expect((yield* gateway.cancels).length).toBe(3)

      // A confirmed deposit cannot be cancelled, and the gateway is not asked.
      const paid = yield* initiateDeposit(client, player.auth, 1_000)
      yield* gatewayCall(client, paidEvent(paid.externalId))
      expect(yield* client.post(`/api/payment/deposits/${paid.depositId}/cancel`, undefined, player.auth))
        .toMatchObject({ status: 400, body: { message: "Deposit is not pending" } })
      expect((yield* gateway.cancels).length).toBe(3)
      expect(yield* balanceOf(client, player.auth)).toBe(1_000)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("a charge.paid for a cancelled deposit is still credited, once, and flagged; the sandbox refuses to pay it", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const player = yield* signIn(client, "paid-anyway")
      const deposit = yield* initiateDeposit(client, player.auth, 4_000)
      expect((yield* client.post(`/api/deposits/${deposit.depositId}/cancel`, undefined, player.auth)).status).toBe(200)
      expect(yield* client.post(`/api/sandbox/charges/${deposit.externalId}/pay`, undefined, player.auth))
        .toMatchObject({ status: 400, body: { statusCode: 400, message: "The charge was cancelled" } })
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      // A gateway that took the money anyway has the last word.
      yield* gatewayCall(client, paidEvent(deposit.externalId))
      yield* gatewayCall(client, paidEvent(deposit.externalId))
      expect((yield* depositOf(client, player.auth, deposit.depositId)).status).toBe("CONFIRMED")
      expect(yield* balanceOf(client, player.auth)).toBe(4_000)
      expect(yield* auditOf("DEPOSIT_PAID_LATE", deposit.depositId)).toEqual([
        expect.objectContaining({ metadata: { previousStatus: "CANCELLED", externalId: deposit.externalId } })
      ])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("the callback's signature: raw body, compact re-serialization, wrong secret, missing header, allowed addresses", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions({ config: { trustProxy: 1 } }))
      const player = yield* signIn(client, "signer")
      const a = yield* initiateDeposit(client, player.auth, 1_000)
      const b = yield* initiateDeposit(client, player.auth, 1_000)

      // Pretty-printed bytes, signed as sent: accepted.
      const pretty = JSON.stringify(paidEvent(a.externalId), null, 2)
      expect((yield* gatewayCall(client, pretty)).status).toBe(200)
      // Pretty-printed bytes signed in their compact form: accepted too (docs/rules.md#gateway-callback).
      const prettyB = JSON.stringify(paidEvent(b.externalId), null, 2)
      expect((yield* gatewayCall(client, prettyB, { signature: signGateway(JSON.stringify(paidEvent(b.externalId))) })).status).toBe(200)
      expect(yield* balanceOf(client, player.auth)).toBe(2_000)

      const c = yield* initiateDeposit(client, player.auth, 1_000)
      const body = JSON.stringify(paidEvent(c.externalId))
      const refused = { statusCode: 401, message: "Invalid webhook signature" }
      expect(yield* gatewayCall(client, body, { signature: signGateway(body, "not-the-secret") })).toMatchObject({ status: 401, body: refused })
      expect(yield* gatewayCall(client, body, { signature: null })).toMatchObject({ status: 401, body: refused })
      expect(yield* gatewayCall(client, body, { signature: "" })).toMatchObject({ status: 401, body: refused })
      expect(yield* gatewayCall(client, body, { signature: signGateway(body).slice(0, 32) })).toMatchObject({ status: 401, body: refused })
      expect(yield* gatewayCall(client, body.replace("charge.paid", "charge.expired"), { signature: signGateway(body) })).toMatchObject({ status: 401 })
      expect(yield* gatewayCall(client, body, { signature: signGateway(body).toUpperCase() })).toMatchObject({ status: 200 })
      expect(yield* balanceOf(client, player.auth)).toBe(3_000)

      // With an allow list, other addresses are refused before the signature is looked at.
      const guarded = yield* makeTestClient(appOptions({
        config: { trustProxy: 1, gateway: { ...testConfig.gateway, allowedIps: ["203.0.113.7", "::ffff:198.51.100.1"] } }
      }))
      const guardedPlayer = yield* signIn(guarded, "signer")
      const d = yield* initiateDeposit(guarded, guardedPlayer.auth, 1_000)
      const dBody = JSON.stringify(paidEvent(d.externalId))
      const outsider = yield* gatewayCall(guarded, dBody, { headers: { "x-forwarded-for": "198.51.100.9" } })
      expect(outsider).toMatchObject({ status: 403, body: { statusCode: 403, message: "Address not allowed" } })
      const badSignature = yield* gatewayCall(guarded, dBody, { signature: "00", headers: { "x-forwarded-for": "203.0.113.7" } })
      expect(badSignature.status).toBe(401)
      const mapped = yield* gatewayCall(guarded, dBody, { headers: { "x-forwarded-for": "::ffff:203.0.113.7" } })
      expect(mapped.status).toBe(200)
      expect(yield* balanceOf(client, player.auth)).toBe(4_000)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("administrators list deposits and confirm pending ones; others are 400/404; players are 403", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const player = yield* fundedPlayer(client, "support-case", 0)
      const admin = yield* signIn(client, "root")
      const pending = yield* initiateDeposit(client, player.auth, 4_200)
      const failed = yield* initiateDeposit(client, player.auth, 1_000)
      yield* gatewayCall(client, { event: "charge.failed", data: { id: failed.externalId } })

      const all = yield* client.get("/api/admin/deposits", admin.auth)
      expect(all.status).toBe(200)
      expect(all.body.total).toBeGreaterThanOrEqual(2)
      const onlyFailed = yield* client.get("/api/admin/deposits?status=FAILED&limit=100", admin.auth)
      expect(onlyFailed.body.deposits.every((d: { status: string }) => d.status === "FAILED")).toBe(true)
      expect(onlyFailed.body.deposits.find((d: { id: string }) => d.id === failed.depositId)).toMatchObject({
        user: { id: player.id, username: "support-case" },
        failureReason: "Payment failed"
      })
      expect((yield* client.get("/api/admin/deposits?status=LOST", admin.auth)).body.errors).toEqual([
        { field: "status", message: "must be one of PENDING, CONFIRMED, FAILED, EXPIRED, CANCELLED, REFUND_PENDING, REFUNDED" }
      ])
      expect((yield* client.get("/api/admin/deposits", player.auth)).status).toBe(403)
      expect((yield* client.post(`/api/admin/deposits/${pending.depositId}/confirm`, undefined, player.auth)).status).toBe(403)

      yield* TestClock.adjust(5_000)
      const now = yield* Clock.currentTimeMillis
      const confirmed = yield* client.post(`/api/admin/deposits/${pending.depositId}/confirm`, undefined, admin.auth)
      expect(confirmed.status).toBe(200)
      expect(confirmed.body).toEqual({ id: pending.depositId, status: "CONFIRMED", confirmedAt: new Date(now).toISOString() })
      expect(yield* balanceOf(client, player.auth)).toBe(4_200)
      expect(yield* auditOf("ADMIN_CONFIRM_DEPOSIT", pending.depositId)).toEqual([
        { userId: expect.any(String), entityType: "Deposit", metadata: { depositUserId: player.id } }
      ])
      expect((yield* auditOf("DEPOSIT_CONFIRMED", pending.depositId)).length).toBe(1)

      const twice = yield* client.post(`/api/admin/deposits/${pending.depositId}/confirm`, undefined, admin.auth)
      expect(twice).toMatchObject({ status: 400, body: { statusCode: 400, message: "Deposit is not pending" } })
      const notPending = yield* client.post(`/api/admin/deposits/${failed.depositId}/confirm`, undefined, admin.auth)
      expect(notPending).toMatchObject({ status: 400, body: { message: "Deposit is not pending" } })
      const missing = yield* client.post("/api/admin/deposits/999999/confirm", undefined, admin.auth)
      expect(missing).toMatchObject({ status: 404, body: { statusCode: 404, message: "Deposit not found" } })
      expect((yield* client.post("/api/admin/deposits/abc/confirm", undefined, admin.auth)).status).toBe(400)
      expect(yield* balanceOf(client, player.auth)).toBe(4_200)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("the sandbox pays, fails and expires through the signed callback, for the owner or an admin only", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const player = yield* signIn(client, "sandboxer")
      const stranger = yield* signIn(client, "nosy")
      const admin = yield* signIn(client, "root")
      const a = yield* initiateDeposit(client, player.auth, 1_500)
      const b = yield* initiateDeposit(client, player.auth, 1_500)
      const c = yield* initiateDeposit(client, player.auth, 1_500)

      expect(yield* client.post(`/api/sandbox/charges/${a.externalId}/pay`, undefined, stranger.auth))
        .toMatchObject({ status: 404, body: { message: "Deposit not found" } })
      expect((yield* client.post(`/api/sandbox/charges/${a.externalId}/refund`, undefined, player.auth)).status).toBe(400)
      const pay = yield* client.post(`/api/sandbox/charges/${a.externalId}/pay`, undefined, player.auth)
      expect(pay.status).toBe(200)
      expect(pay.body).toMatchObject({ event: "charge.paid", callbackStatus: 200, deposit: { id: a.depositId, status: "CONFIRMED" } })
      const fail = yield* client.post(`/api/sandbox/charges/${b.externalId}/fail`, undefined, admin.auth)
      expect(fail.body).toMatchObject({ event: "charge.failed", callbackStatus: 200, deposit: { status: "FAILED", failureReason: "Declined in the sandbox" } })
      const expire = yield* client.post(`/api/sandbox/charges/${c.externalId}/expire`, undefined, player.auth)
      expect(expire.body).toMatchObject({ event: "charge.expired", deposit: { status: "EXPIRED" } })
      const payAgain = yield* client.post(`/api/sandbox/charges/${a.externalId}/pay`, undefined, player.auth)
      expect(payAgain.body).toMatchObject({ callbackStatus: 200, deposit: { status: "CONFIRMED" } })
      expect(yield* balanceOf(client, player.auth)).toBe(1_500)

      // With a real gateway configured, the sandbox is not there.
      const real = yield* makeTestClient(appOptions({
        config: { gateway: { ...testConfig.gateway, url: Option.some("https://gateway.example.com"), key: Option.some(Redacted.make("k")) } }
      }))
      const realPlayer = yield* signIn(real, "sandboxer")
      const d = yield* initiateDeposit(real, realPlayer.auth, 1_500)
      expect(yield* real.post(`/api/sandbox/charges/${d.externalId}/pay`, undefined, realPlayer.auth))
        .toMatchObject({ status: 404, body: { message: "The sandbox gateway is not in use" } })
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("20 concurrent deliveries of one charge.paid credit exactly once", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      yield* TestClock.setTime(1_800_000_000_000)
      const player = yield* signIn(client, "stampede")
      const deposit = yield* initiateDeposit(client, player.auth, 7_777)
      // Each delivery signed at another second: 20 distinct events (docs/rules.md#gateway-event-ids), so every
      // one reaches the deposit itself and the deposit's own guard must hold.
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const responses = yield* Effect.all(
        Array.from({ length: 20 }, (_, i) => gatewayCall(client, paidEvent(deposit.externalId), { timestamp: now - i })),
        { concurrency: "unbounded" }
      )
      expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200))
      expect(yield* balanceOf(client, player.auth)).toBe(7_777)
      expect((yield* notificationsOf(client, player.auth)).length).toBe(1)
      expect((yield* auditOf("DEPOSIT_CONFIRMED", deposit.depositId)).length).toBe(1)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))
})

// Its own database and clock: the job acts on every deposit there is.
layer(TestDatabase)("deposit expiry job", (it) => {
  it.scoped("the expiry job expires what is past its expiry under the test clock, once, with a notification", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const player = yield* signIn(client, "forgetful")
      const deposits = yield* client.service(Deposits)
      const early = yield* initiateDeposit(client, player.auth, 1_000) // expires at 30 min
      yield* TestClock.adjust(10 * 60_000)
      const later = yield* initiateDeposit(client, player.auth, 1_100) // expires at 40 min
      const paidOne = yield* initiateDeposit(client, player.auth, 1_200)
      yield* gatewayCall(client, paidEvent(paidOne.externalId))

      yield* TestClock.adjust(20 * 60_000 - 1) // 1 ms before the first expiry
      expect(yield* deposits.expireDue()).toBe(0)
      yield* TestClock.adjust(1)
      expect(yield* deposits.expireDue()).toBe(1)
      expect(yield* deposits.expireDue()).toBe(0)
      expect((yield* depositOf(client, player.auth, early.depositId)).status).toBe("EXPIRED")
      expect((yield* depositOf(client, player.auth, later.depositId)).status).toBe("PENDING")
      yield* TestClock.adjust(10 * 60_000)
      expect(yield* deposits.expireDue()).toBe(1)
      expect((yield* depositOf(client, player.auth, later.depositId)).status).toBe("EXPIRED")
      expect((yield* depositOf(client, player.auth, paidOne.depositId)).status).toBe("CONFIRMED")
      expect(yield* notificationsOf(client, player.auth)).toEqual([
        { type: "DEPOSIT_EXPIRED", title: "Deposit expired", message: "Your deposit of R$ 11.00 expired before it was paid." },
        { type: "DEPOSIT_EXPIRED", title: "Deposit expired", message: "Your deposit of R$ 10.00 expired before it was paid." },
        { type: "DEPOSIT_CONFIRMED", title: "Deposit confirmed", message: "R$ 12.00 has been added to your balance." }
      ])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))
})

/** The embedded sandbox gateway, every charge it is asked for recorded. */
const recordedSandbox = Effect.gen(function*() {
  const charges = yield* Ref.make<ReadonlyArray<ChargeRequest>>([])
  const layer = Layer.effect(
    PaymentGateway,
    Effect.map(PaymentGateway, (sandbox) => ({
      ...sandbox,
      createCharge: (request: ChargeRequest) =>
        Effect.zipRight(Ref.update(charges, (all) => [...all, request]), sandbox.createCharge(request))
    }))
  ).pipe(Layer.provide(SandboxGateway))
  return { layer, charges: Ref.get(charges) }
})

/** Lets what the sandbox sends reach the callback (real time: the test clock stands still meanwhile). */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))

// Its own database and clock: the dashboard's figures of the day are this test's alone.
layer(TestDatabase)("deposit fees and the sandbox gateway per method", (it) => {
  it.scoped("PIX waits for its payer, a card is paid at once, crypto after the delay; the fee is on top, never credited", () =>
    Effect.gen(function*() {
      const sandbox = yield* recordedSandbox
      const client = yield* makeTestClient(appOptions({
        gateway: sandbox.layer,
        config: { gateway: { ...testConfig.gateway, sandboxCryptoDelaySeconds: 600 } }
      }))
      const player = yield* signIn(client, "fee-payer")
      const admin = yield* signIn(client, "root")
      const statusOf = (id: string) => Effect.map(depositOf(client, player.auth, id), (d) => d.status)
      /**
       * The sandbox retries a charge.paid our callback refused (404 before the deposit row exists) from
       * 0.5 s on: the clock moves on in half seconds while the callback gets real time to answer (up to ~10 s).
       */
      const confirmedSoon = (id: string) =>
        Effect.gen(function*() {
          for (let attempt = 0; attempt < 400 && (yield* statusOf(id)) !== "CONFIRMED"; attempt++) {
            yield* settle
            yield* TestClock.adjust("500 millis")
          }
          expect(yield* statusOf(id)).toBe("CONFIRMED")
        })

      // PIX: no fee; the charge waits until the payer pays it (here through the sandbox control).
      const pix = yield* initiateDeposit(client, player.auth, 2_500, "PIX")
      expect(pix).toMatchObject({ amountCents: "2500", feeCents: 0, totalCents: 2_500 })
      yield* TestClock.adjust("10 minutes")
      yield* settle
      expect(yield* statusOf(pix.depositId)).toBe("PENDING")
      expect((yield* client.post(`/api/sandbox/charges/${pix.externalId}/pay`, undefined, player.auth)).body)
        .toMatchObject({ event: "charge.paid", callbackStatus: 200, deposit: { status: "CONFIRMED" } })

      // A card: 3.5 % of 1500 is 52.5, rounded half up to 53; the card is charged 1553 and paid at once.
      const card = yield* initiateDeposit(client, player.auth, 1_500, "CREDIT_CARD")
      expect(card).toMatchObject({ amountCents: "1500", feeCents: 53, totalCents: 1_553, qrCode: "", qrCodeText: "" })
      yield* confirmedSoon(card.depositId)

      // Crypto: 1 % of 1050 is 10.5, rounded to 11; confirmed 600 s after the charge, not before.
      const crypto = yield* initiateDeposit(client, player.auth, 1_050, "CRYPTO")
      expect(crypto).toMatchObject({ amountCents: "1050", feeCents: 11, totalCents: 1_061 })
      yield* TestClock.adjust("599 seconds")
      yield* settle
      expect(yield* statusOf(crypto.depositId)).toBe("PENDING")
      expect(yield* balanceOf(client, player.auth)).toBe(2_500 + 1_500)
      yield* TestClock.adjust("1 second")
      yield* confirmedSoon(crypto.depositId)

      // Crypto cancelled while the network "confirms" it: never paid.
      const cancelled = yield* initiateDeposit(client, player.auth, 2_000, "CRYPTO")
      expect((yield* client.post(`/api/payment/deposits/${cancelled.depositId}/cancel`, undefined, player.auth)).status).toBe(200)
      yield* TestClock.adjust("601 seconds")
      yield* settle
      expect(yield* statusOf(cancelled.depositId)).toBe("CANCELLED")

      // The gateway was asked for amount + fee; the user was credited the amount, once each.
      expect((yield* sandbox.charges).map(({ amountCents, method }) => ({ amountCents, method }))).toEqual([
        { amountCents: 2_500n, method: "PIX" },
        { amountCents: 1_553n, method: "CREDIT_CARD" },
        { amountCents: 1_061n, method: "CRYPTO" },
        { amountCents: 2_020n, method: "CRYPTO" }
      ])
      expect(yield* balanceOf(client, player.auth)).toBe(2_500 + 1_500 + 1_050)
      const sql = yield* SqlClient.SqlClient
      expect((yield* sql<{ amountCents: string }>`
        SELECT amount_cents::text FROM transactions WHERE type = 'DEPOSIT' ORDER BY id`).map((t) => Number(t.amountCents)))
        .toEqual([2_500, 1_500, 1_050])
      const listed = (yield* client.get("/api/payment/deposits", player.auth)).body.deposits
      expect(listed.map((d: { method: string; status: string; amountCents: string; feeCents: number; totalCents: number }) => [
        d.method,
        d.status,
        d.amountCents,
        d.feeCents,
        d.totalCents
      ])).toEqual([
        ["CRYPTO", "CANCELLED", "2000", 20, 2_020],
        ["CRYPTO", "CONFIRMED", "1050", 11, 1_061],
        ["CREDIT_CARD", "CONFIRMED", "1500", 53, 1_553],
        ["PIX", "CONFIRMED", "2500", 0, 2_500]
      ])
      const adminView = (yield* client.get("/api/admin/deposits?limit=100", admin.auth)).body.deposits
      expect(adminView.find((d: { id: string }) => d.id === card.depositId)).toMatchObject({
        amountCents: "1500",
        feeCents: 53,
        totalCents: 1_553,
        user: { username: "fee-payer" }
      })
      // The dashboard: deposits credited today, and the fees paid on top of them (the cancelled one's is not).
      expect((yield* client.get("/api/admin/dashboard", admin.auth)).body.financial).toMatchObject({
        depositsToday: 5_050,
        feesToday: 64
      })
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))
})
