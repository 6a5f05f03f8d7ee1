/**
 * Withdrawals through the public API (docs/rules.md#withdrawals, with the withdrawal.completed webhook;
 * docs/decisions.md "Withdrawals"). Every scenario ends with the ledger
 * checked: balances equal the sum of their movements, and every withdrawal has exactly one debit and,
 * when cancelled or rejected, exactly one refund.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, TestClock } from "effect"
import { Ledger } from "../../src/services/money/Ledger"
import { signPayload } from "../../src/services/platform/WebhookOutbox"
import { balanceOf, fundedPlayer } from "../support/GameFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestAppOptions, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { makeTestGateway } from "../support/TestGateway"
import { codeNow, enableTwoFactor, healthyLedger, ledgerProblems, withdrawal } from "../support/WithdrawalFixtures"

/** Root is an administrator; the withdrawal rate limit (3 a minute) is lifted where tests make many. */
const appOptions = (extra: TestAppOptions = {}): TestAppOptions => ({
  ...extra,
  config: {
    adminIdpIds: ["root"],
    rateLimits: { ...testConfig.rateLimits, withdrawal: { count: 1000, windowMs: 60_000 } },
    ...extra.config
  }
})

const adminToken = { authorization: "Bearer test-admin-token" }
const receiverSecret = "receiver-secret-0123"

const movementsOf = (withdrawalId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ type: string; amountCents: string; counterparty: string }>`
      SELECT type, amount_cents, counterparty FROM transactions
      WHERE reference_type = 'WITHDRAWAL' AND reference_id = ${withdrawalId} ORDER BY id`)

/** The outbox rows about a withdrawal for one receiver (other tests of the file register theirs). */
const deliveriesOf = (withdrawalId: string, webhookId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ event: string; payload: string }>`
      SELECT event, payload FROM webhook_deliveries
      WHERE webhook_id = ${webhookId} AND payload::jsonb -> 'data' ->> 'withdrawalId' = ${withdrawalId} ORDER BY id`)

/** Registers a receiver of withdrawal.completed with the admin token; returns its id. */
const registerReceiver = (client: TestClient, path: string) =>
  Effect.gen(function*() {
    const registered = yield* client.post(
      "/api/webhooks",
      { url: `https://receiver.example.com/${path}`, events: ["withdrawal.completed"], secret: receiverSecret },
      adminToken
    )
    expect(registered.status).toBe(201)
    return registered.body.id as string
  })

layer(TestDatabase)("withdrawals", (it) => {
  it.scoped("a request debits at once in one transaction; the list is newest first", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const player = yield* fundedPlayer(client, "withdrawer", 50_000)

      const first = yield* client.post("/api/withdrawals/request", withdrawal(10_000, { pixKeyType: "CPF", pixKey: "529.982.247-25" }), player.auth)
      expect(first.status).toBe(201)
      expect(first.body).toEqual({
        id: expect.stringMatching(/^[1-9][0-9]*$/),
        amountCents: 10_000,
        status: "PENDING",
        requestedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      })
      expect(yield* balanceOf(client, player.auth)).toBe(40_000)
      expect(yield* movementsOf(first.body.id)).toEqual([{ type: "WITHDRAWAL", amountCents: "-10000", counterparty: "EXTERNAL" }])

      yield* TestClock.adjust(1_000)
      const second = yield* client.post("/api/withdrawals/request", withdrawal(2_500), player.auth)
      expect(second.status).toBe(201)
      expect(yield* balanceOf(client, player.auth)).toBe(37_500)

      const listed = yield* client.get("/api/withdrawals", player.auth)
      expect(listed.status).toBe(200)
      expect(listed.body).toEqual({
        withdrawals: [
          { id: second.body.id, amountCents: 2_500, status: "PENDING", paymentMethod: "PIX", requestedAt: second.body.requestedAt, processedAt: null, rejectionReason: null },
          { id: first.body.id, amountCents: 10_000, status: "PENDING", paymentMethod: "PIX", requestedAt: first.body.requestedAt, processedAt: null, rejectionReason: null }
        ],
        total: 2,
        page: 1
      })
      expect((yield* client.get("/api/withdrawals?limit=1&page=2", player.auth)).body.withdrawals.map((w: any) => w.id))
        .toEqual([first.body.id])
      // Another user sees none of them.
      const other = yield* fundedPlayer(client, "withdrawer-neighbour", 0)
      expect((yield* client.get("/api/withdrawals", other.auth)).body).toEqual({ withdrawals: [], total: 0, page: 1 })
      expect((yield* client.get("/api/withdrawals")).status).toBe(401)
      expect((yield* client.post("/api/withdrawals/request", withdrawal(2_500))).status).toBe(401)

      // The key is stored normalized (digits only for a CPF), as the payout will use it.
      const root = yield* signIn(client, "root")
      const queue = (yield* client.get("/api/admin/withdrawals?status=PENDING", root.auth)).body
      expect(queue.withdrawals.find((w: any) => w.id === first.body.id)).toMatchObject({
        user: { id: player.id, username: "withdrawer" },
        pixKeyType: "CPF",
        pixKey: "52998224725",
        payoutAttempts: 0,
        payoutInProgress: false
      })
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("2FA: a new key needs a code; a paid-to key none up to 10000 cents in 24 h; above, a missing code is 2FA_REQUIRED, a wrong one refused, a right one accepted", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      yield* TestClock.setTime(1_800_000_000_000)
      const player = yield* fundedPlayer(client, "careful", 100_000)
      const root = yield* signIn(client, "root")
      // Without 2FA, no code is ever asked for.
      const plain = yield* fundedPlayer(client, "carefree", 100_000)
      expect((yield* client.post("/api/withdrawals/request", withdrawal(50_000), plain.auth)).status).toBe(201)

      const secret = yield* enableTwoFactor(client, player.auth)
      // No payout has gone to this key yet: even a small amount needs a code.
      const newKey = yield* client.post("/api/withdrawals/request", withdrawal(1_000), player.auth)
      expect(newKey.body).toEqual({ statusCode: 400, error: "2FA_REQUIRED", message: "2FA code required" })
      const first = yield* client.post("/api/withdrawals/request", withdrawal(1_000, undefined, { twoFactorCode: yield* codeNow(secret) }), player.auth)
      expect(first.status).toBe(201)
      expect((yield* client.post(`/api/admin/withdrawals/${first.body.id}/approve`, undefined, root.auth)).body.status).toBe("COMPLETED")
      // A day later the key is known and the rolling 24 hours are empty.
      yield* TestClock.adjust(24 * 60 * 60_000)
      const atThreshold = yield* client.post("/api/withdrawals/request", withdrawal(10_000), player.auth)
      expect(atThreshold.status).toBe(201)
      expect(yield* balanceOf(client, player.auth)).toBe(89_000)

      for (const extra of [{}, { twoFactorCode: "" }, { twoFactorCode: "   " }]) {
        const missing = yield* client.post("/api/withdrawals/request", withdrawal(1_000, undefined, extra), player.auth)
        expect(missing.status).toBe(400)
        expect(missing.body).toEqual({ statusCode: 400, error: "2FA_REQUIRED", message: "2FA code required" })
      }
      const wrong = yield* client.post("/api/withdrawals/request", withdrawal(1_000, undefined, { twoFactorCode: "000000" }), player.auth)
      expect(wrong.status).toBe(400)
      expect(wrong.body).toEqual({ statusCode: 400, message: "Invalid 2FA code" })
      expect(yield* balanceOf(client, player.auth)).toBe(89_000)

      const code = yield* codeNow(secret)
      const right = yield* client.post("/api/withdrawals/request", withdrawal(1_000, undefined, { twoFactorCode: code }), player.auth)
      expect(right.status).toBe(201)
      expect(right.body.amountCents).toBe(1_000)
      expect(yield* balanceOf(client, player.auth)).toBe(88_000)
      // The same code is not accepted twice (docs/rules.md#totp-replay).
      const replay = yield* client.post("/api/withdrawals/request", withdrawal(1_000, undefined, { twoFactorCode: code }), player.auth)
      expect(replay.body).toEqual({ statusCode: 400, message: "Invalid 2FA code" })
      expect(yield* balanceOf(client, player.auth)).toBe(88_000)
      expect((yield* client.get("/api/withdrawals", player.auth)).body.total).toBe(3)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("PIX keys are validated per type; a bad one is a 400 naming the field and debits nothing", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const player = yield* fundedPlayer(client, "pix-user", 100_000)
      const valid: ReadonlyArray<[string, string]> = [
        ["EMAIL", "Maria.Silva@example.com.br"],
        ["CPF", "529.982.247-25"],
        ["CPF", "52998224725"],
        ["CNPJ", "11.222.333/0001-81"],
        ["CNPJ", "11222333000181"],
        ["PHONE", "+5511912345678"],
        ["RANDOM", "123e4567-e89b-12d3-a456-426614174000"],
        ["RANDOM", "9B2F4C1E-7A3D-4E85-B6C0-2F8A1D93E47C"]
      ]
      for (const [pixKeyType, pixKey] of valid) {
        const response = yield* client.post("/api/withdrawals/request", withdrawal(1_000, { pixKeyType, pixKey }), player.auth)
        expect(response.status, `${pixKeyType} ${pixKey}`).toBe(201)
      }
      const invalid: ReadonlyArray<[string, string, string]> = [
        ["EMAIL", "maria@", "must be a valid e-mail address"],
        ["EMAIL", "maria silva@example.com", "must be a valid e-mail address"],
        ["EMAIL", "@example.com", "must be a valid e-mail address"],
        ["EMAIL", "529.982.247-25", "must be a valid e-mail address"],
        ["CPF", "529.982.247-24", "must be a valid CPF (11 digits with valid check digits)"],
        ["CPF", "52998224735", "must be a valid CPF (11 digits with valid check digits)"],
        ["CPF", "111.111.111-11", "must be a valid CPF (11 digits with valid check digits)"],
        ["CPF", "00000000000", "must be a valid CPF (11 digits with valid check digits)"],
        ["CPF", "5299822472", "must be a valid CPF (11 digits with valid check digits)"],
        ["CPF", "529.982.24725", "must be a valid CPF (11 digits with valid check digits)"],
        ["CPF", "maria@example.com", "must be a valid CPF (11 digits with valid check digits)"],
        ["CNPJ", "11.222.333/0001-80", "must be a valid CNPJ (14 digits with valid check digits)"],
        ["CNPJ", "11222333000191", "must be a valid CNPJ (14 digits with valid check digits)"],
        ["CNPJ", "00000000000000", "must be a valid CNPJ (14 digits with valid check digits)"],
        ["CNPJ", "1122233300018", "must be a valid CNPJ (14 digits with valid check digits)"],
        ["CNPJ", "52998224725", "must be a valid CNPJ (14 digits with valid check digits)"],
        ["PHONE", "11912345678", "must be a Brazilian mobile number in E.164 format, e.g. +5511912345678"],
        ["PHONE", "+14155552671", "must be a Brazilian mobile number in E.164 format, e.g. +5511912345678"],
        ["PHONE", "+551191234567", "must be a Brazilian mobile number in E.164 format, e.g. +5511912345678"],
        ["PHONE", "+55 11 91234-5678", "must be a Brazilian mobile number in E.164 format, e.g. +5511912345678"],
        ["RANDOM", "not-a-uuid", "must be a UUID, e.g. 123e4567-e89b-12d3-a456-426614174000"],
        ["RANDOM", "123e4567e89b12d3a456426614174000", "must be a UUID, e.g. 123e4567-e89b-12d3-a456-426614174000"],
        ["RANDOM", "123e4567-e89b-12d3-a456-42661417400g", "must be a UUID, e.g. 123e4567-e89b-12d3-a456-426614174000"]
      ]
      for (const [pixKeyType, pixKey, message] of invalid) {
        const response = yield* client.post("/api/withdrawals/request", withdrawal(1_000, { pixKeyType, pixKey }), player.auth)
        expect(response.status, `${pixKeyType} ${pixKey}`).toBe(400)
        expect(response.body, `${pixKeyType} ${pixKey}`).toEqual({
          statusCode: 400,
          message: "Validation failed",
          errors: [{ field: "paymentDetails.pixKey", message }]
        })
      }
      const badType = yield* client.post("/api/withdrawals/request", withdrawal(1_000, { pixKeyType: "IBAN", pixKey: "x" }), player.auth)
      expect(badType.body.errors).toEqual([
        { field: "paymentDetails.pixKeyType", message: "must be one of EMAIL, CPF, CNPJ, PHONE, RANDOM" }
      ])
      const badMethod = yield* client.post("/api/withdrawals/request", { ...withdrawal(1_000), paymentMethod: "TED" }, player.auth)
      expect(badMethod.body.errors).toEqual([{ field: "paymentMethod", message: "must be PIX" }])
      const noDetails = yield* client.post("/api/withdrawals/request", { amountCents: 1_000, paymentMethod: "PIX" }, player.auth)
      expect(noDetails.body.errors).toEqual([{ field: "paymentDetails", message: expect.any(String) }])

      expect(yield* balanceOf(client, player.auth)).toBe(100_000 - valid.length * 1_000)
      expect((yield* client.get("/api/withdrawals?limit=100", player.auth)).body.total).toBe(valid.length)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("amounts: 1000 to 10000000 cents, whole cents, at most the balance", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const player = yield* fundedPlayer(client, "amounts", 10_001_000)
      const fieldError = (amountCents: unknown) =>
        Effect.map(client.post("/api/withdrawals/request", withdrawal(amountCents), player.auth), (r) => ({ status: r.status, errors: r.body.errors }))

      expect(yield* fieldError(999)).toEqual({ status: 400, errors: [{ field: "amountCents", message: "Minimum withdrawal is R$ 10.00" }] })
      expect(yield* fieldError(0)).toEqual({ status: 400, errors: [{ field: "amountCents", message: "Minimum withdrawal is R$ 10.00" }] })
      expect(yield* fieldError(-5_000)).toEqual({ status: 400, errors: [{ field: "amountCents", message: "Minimum withdrawal is R$ 10.00" }] })
      expect(yield* fieldError(10_000_001)).toEqual({
        status: 400,
        errors: [{ field: "amountCents", message: "Maximum withdrawal is R$ 100,000.00" }]
      })
      for (const amount of [1_000.5, "5000", null]) {
        expect(yield* fieldError(amount)).toEqual({ status: 400, errors: [{ field: "amountCents", message: "must be an integer number of cents" }] })
      }
      expect(yield* balanceOf(client, player.auth)).toBe(10_001_000)

      expect((yield* client.post("/api/withdrawals/request", withdrawal(10_000_000), player.auth)).status).toBe(201)
      expect((yield* client.post("/api/withdrawals/request", withdrawal(1_000), player.auth)).status).toBe(201)
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      const broke = yield* client.post("/api/withdrawals/request", withdrawal(1_000), player.auth)
      expect(broke.status).toBe(400)
      expect(broke.body).toEqual({ statusCode: 400, message: "Insufficient balance" })

      const poorer = yield* fundedPlayer(client, "amounts-poorer", 4_999)
      const over = yield* client.post("/api/withdrawals/request", withdrawal(5_000), poorer.auth)
      expect(over.body).toEqual({ statusCode: 400, message: "Insufficient balance" })
      expect((yield* client.post("/api/withdrawals/request", withdrawal(4_999), poorer.auth)).status).toBe(201)
      expect(yield* balanceOf(client, poorer.auth)).toBe(0)
      expect((yield* client.get("/api/withdrawals", poorer.auth)).body.total).toBe(1)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("cancel: the owner's PENDING withdrawal is refunded once; another user's is 404", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const player = yield* fundedPlayer(client, "canceller", 20_000)
      const stranger = yield* fundedPlayer(client, "canceller-stranger", 20_000)
      const root = yield* signIn(client, "root")
      const requested = (yield* client.post("/api/withdrawals/request", withdrawal(5_000), player.auth)).body
      expect(yield* balanceOf(client, player.auth)).toBe(15_000)

      const theirs = yield* client.post(`/api/withdrawals/${requested.id}/cancel`, undefined, stranger.auth)
      expect(theirs.status).toBe(404)
      expect(theirs.body).toEqual({ statusCode: 404, message: "Withdrawal not found" })
      expect((yield* client.post("/api/withdrawals/999999999/cancel", undefined, player.auth)).body).toEqual({
        statusCode: 404,
        message: "Withdrawal not found"
      })
      expect((yield* client.post("/api/withdrawals/abc/cancel", undefined, player.auth)).body.errors).toEqual([
        { field: "id", message: "must be a positive integer id" }
      ])
      expect(yield* balanceOf(client, player.auth)).toBe(15_000)
      expect(yield* balanceOf(client, stranger.auth)).toBe(20_000)

      yield* TestClock.adjust(60_000)
      const cancelled = yield* client.post(`/api/withdrawals/${requested.id}/cancel`, undefined, player.auth)
      expect(cancelled.status).toBe(200)
      expect(cancelled.body).toEqual({
        id: requested.id,
        amountCents: 5_000,
        status: "CANCELLED",
        paymentMethod: "PIX",
        requestedAt: requested.requestedAt,
        processedAt: new Date(new Date(requested.requestedAt).getTime() + 60_000).toISOString(),
        rejectionReason: null,
        balanceCents: 20_000
      })
      expect(yield* balanceOf(client, player.auth)).toBe(20_000)
      expect(yield* movementsOf(requested.id)).toEqual([
        { type: "WITHDRAWAL", amountCents: "-5000", counterparty: "EXTERNAL" },
        { type: "WITHDRAWAL_REFUND", amountCents: "5000", counterparty: "EXTERNAL" }
      ])

      const again = yield* client.post(`/api/withdrawals/${requested.id}/cancel`, undefined, player.auth)
      expect(again.status).toBe(400)
      expect(again.body).toEqual({ statusCode: 400, message: "Withdrawal is not pending" })
      // Nor can an administrator act on it any more.
      expect((yield* client.post(`/api/admin/withdrawals/${requested.id}/approve`, undefined, root.auth)).body).toEqual({
        statusCode: 400,
        message: "Withdrawal is not pending"
      })
      expect((yield* client.post(`/api/admin/withdrawals/${requested.id}/reject`, { reason: "late" }, root.auth)).body).toEqual({
        statusCode: 400,
        message: "Withdrawal is not pending"
      })
      expect(yield* balanceOf(client, player.auth)).toBe(20_000)
      expect((yield* client.get("/api/withdrawals", player.auth)).body.withdrawals[0]).toMatchObject({ status: "CANCELLED" })
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("reject: REJECTED with the reason and a refund, once; administrators only", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const player = yield* fundedPlayer(client, "rejected-one", 30_000)
      const root = yield* signIn(client, "root")
      const requested = (yield* client.post("/api/withdrawals/request", withdrawal(12_345), player.auth)).body
      const path = `/api/admin/withdrawals/${requested.id}/reject`

      expect((yield* client.post(path, { reason: "nope" }, player.auth)).status).toBe(403)
      expect((yield* client.post(path, { reason: "nope" })).status).toBe(401)
      expect((yield* client.post(path, {}, root.auth)).body.errors).toEqual([{ field: "reason", message: expect.any(String) }])
      expect((yield* client.post(path, { reason: "" }, root.auth)).body.errors).toEqual([{ field: "reason", message: "is required" }])
      expect(yield* balanceOf(client, player.auth)).toBe(17_655)

      const rejected = yield* client.post(path, { reason: "PIX key belongs to someone else" }, root.auth)
      expect(rejected.status).toBe(200)
      expect(rejected.body).toMatchObject({
        id: requested.id,
        amountCents: 12_345,
        status: "REJECTED",
        rejectionReason: "PIX key belongs to someone else",
        processedAt: expect.any(String),
        user: { id: player.id, username: "rejected-one" },
        payoutId: null
      })
      expect(yield* balanceOf(client, player.auth)).toBe(30_000)
      expect((yield* client.get("/api/withdrawals", player.auth)).body.withdrawals).toEqual([{
        id: requested.id,
        amountCents: 12_345,
        status: "REJECTED",
        paymentMethod: "PIX",
        requestedAt: requested.requestedAt,
        processedAt: rejected.body.processedAt,
        rejectionReason: "PIX key belongs to someone else"
      }])

      expect((yield* client.post(path, { reason: "twice" }, root.auth)).body).toEqual({ statusCode: 400, message: "Withdrawal is not pending" })
      expect((yield* client.post(`/api/withdrawals/${requested.id}/cancel`, undefined, player.auth)).body).toEqual({
        statusCode: 400,
        message: "Withdrawal is not pending"
      })
      expect((yield* client.post(`/api/admin/withdrawals/${requested.id}/approve`, undefined, root.auth)).body).toEqual({
        statusCode: 400,
        message: "Withdrawal is not pending"
      })
      expect((yield* client.post("/api/admin/withdrawals/999999999/reject", { reason: "x" }, root.auth)).body).toEqual({
        statusCode: 404,
        message: "Withdrawal not found"
      })
      expect(yield* balanceOf(client, player.auth)).toBe(30_000)

      const sql = yield* SqlClient.SqlClient
      const audits = yield* sql<{ action: string }>`
        SELECT action FROM audit_logs WHERE entity_type = 'Withdrawal' AND entity_id = ${requested.id} ORDER BY id`
      expect(audits.map((a) => a.action)).toEqual(["WITHDRAWAL_REQUESTED", "WITHDRAWAL_REJECTED"])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("approve: one payout through the gateway, COMPLETED, withdrawal.completed queued for receivers", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      const receiver = yield* registerReceiver(client, "hooks")
      const player = yield* fundedPlayer(client, "paid-one", 50_000)
      const root = yield* signIn(client, "root")
      const requested = (yield* client.post(
        "/api/withdrawals/request",
        withdrawal(20_000, { pixKeyType: "CNPJ", pixKey: "11.222.333/0001-81" }),
        player.auth
      )).body
      const path = `/api/admin/withdrawals/${requested.id}/approve`
      expect((yield* client.post(path, undefined, player.auth)).status).toBe(403)
      expect(yield* gateway.payouts).toEqual([])

      yield* TestClock.adjust(5_000)
      const approved = yield* client.post(path, undefined, root.auth)
      expect(approved.status).toBe(200)
      expect(approved.body).toEqual({
        id: requested.id,
        amountCents: 20_000,
        status: "COMPLETED",
        paymentMethod: "PIX",
        requestedAt: requested.requestedAt,
        processedAt: new Date(new Date(requested.requestedAt).getTime() + 5_000).toISOString(),
        rejectionReason: null,
        user: { id: player.id, username: "paid-one" },
        pixKeyType: "CNPJ",
        pixKey: "11222333000181",
        payoutId: expect.stringMatching(/^po_test_/),
        payoutAttempts: 1,
        payoutError: null,
        payoutInProgress: false
      })
      expect(yield* gateway.payouts).toEqual([
        { withdrawalId: BigInt(requested.id), amountCents: 20_000n, pixKeyType: "CNPJ", pixKey: "11222333000181" }
      ])
      // The money left at request time; approval moves nothing more.
      expect(yield* balanceOf(client, player.auth)).toBe(30_000)
      expect(yield* movementsOf(requested.id)).toEqual([{ type: "WITHDRAWAL", amountCents: "-20000", counterparty: "EXTERNAL" }])

      const deliveries = yield* deliveriesOf(requested.id, receiver)
      expect(deliveries).toHaveLength(1)
      expect(deliveries[0]!.event).toBe("withdrawal.completed")
      const payload = JSON.parse(deliveries[0]!.payload)
      expect(payload).toEqual({
        event: "withdrawal.completed",
        timestamp: approved.body.processedAt,
        data: { withdrawalId: requested.id, userId: player.id, amountCents: 20_000 },
        signature: expect.stringMatching(/^sha256=[0-9a-f]{64}$/)
      })
      expect(payload.signature).toBe(signPayload(receiverSecret, payload))

      // A second approval pays nothing and queues nothing.
      const again = yield* client.post(path, undefined, root.auth)
      expect(again.status).toBe(400)
      expect(again.body).toEqual({ statusCode: 400, message: "Withdrawal is not pending" })
      expect(yield* gateway.payouts).toHaveLength(1)
      expect(yield* deliveriesOf(requested.id, receiver)).toHaveLength(1)
      expect((yield* client.post(`/api/withdrawals/${requested.id}/cancel`, undefined, player.auth)).body).toEqual({
        statusCode: 400,
        message: "Withdrawal is not pending"
      })
      expect((yield* client.post("/api/admin/withdrawals/999999999/approve", undefined, root.auth)).status).toBe(404)
      expect(yield* balanceOf(client, player.auth)).toBe(30_000)

      const listed = (yield* client.get("/api/withdrawals", player.auth)).body.withdrawals
      expect(listed).toEqual([expect.objectContaining({ id: requested.id, status: "COMPLETED", processedAt: approved.body.processedAt })])
      const sql = yield* SqlClient.SqlClient
      const audits = yield* sql<{ action: string }>`
        SELECT action FROM audit_logs WHERE entity_type = 'Withdrawal' AND entity_id = ${requested.id} ORDER BY id`
      expect(audits.map((a) => a.action)).toEqual(["WITHDRAWAL_REQUESTED", "WITHDRAWAL_PAYOUT_STARTED", "WITHDRAWAL_APPROVED"])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("a failed payout: 502, still PENDING, no webhook; the owner can no longer cancel; retry or reject", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      const receiver = yield* registerReceiver(client, "failures")
      const player = yield* fundedPlayer(client, "unlucky", 40_000)
      const root = yield* signIn(client, "root")
      const first = (yield* client.post("/api/withdrawals/request", withdrawal(15_000), player.auth)).body
      const second = (yield* client.post("/api/withdrawals/request", withdrawal(5_000), player.auth)).body
      expect(yield* balanceOf(client, player.auth)).toBe(20_000)

      yield* gateway.failPayouts("PIX key not found at the receiving bank")
      const failed = yield* client.post(`/api/admin/withdrawals/${first.id}/approve`, undefined, root.auth)
      expect(failed.status).toBe(502)
      expect(failed.body).toEqual({
        statusCode: 502,
        message: "Payout failed: PIX key not found at the receiving bank. The withdrawal is still pending."
      })
      expect(yield* gateway.payouts).toHaveLength(1)
      expect(yield* deliveriesOf(first.id, receiver)).toEqual([])
      const queued = (yield* client.get("/api/admin/withdrawals?status=PENDING", root.auth)).body.withdrawals
      expect(queued.find((w: any) => w.id === first.id)).toMatchObject({
        status: "PENDING",
        processedAt: null,
        payoutId: null,
        payoutAttempts: 1,
        payoutError: "PIX key not found at the receiving bank",
        payoutInProgress: false
      })
      expect((yield* client.get("/api/withdrawals", player.auth)).body.withdrawals[1]).toMatchObject({ id: first.id, status: "PENDING" })

      // The money may have left (a gateway error can be ambiguous): the owner cannot take it back now.
      const cancel = yield* client.post(`/api/withdrawals/${first.id}/cancel`, undefined, player.auth)
      expect(cancel.status).toBe(409)
      expect(cancel.body).toEqual({ statusCode: 409, message: "Withdrawal is already being processed" })
      expect(yield* balanceOf(client, player.auth)).toBe(20_000)

      // The administrator retries once the gateway is back: paid, once more called, completed.
      yield* gateway.failPayouts(undefined)
      const retried = yield* client.post(`/api/admin/withdrawals/${first.id}/approve`, undefined, root.auth)
      expect(retried.status).toBe(200)
      expect(retried.body).toMatchObject({ status: "COMPLETED", payoutAttempts: 2, payoutError: null })
      expect(yield* gateway.payouts).toHaveLength(2)
      expect(yield* deliveriesOf(first.id, receiver)).toHaveLength(1)

      // Or rejects one whose payout failed: refunded.
      yield* gateway.failPayouts("gateway timeout")
      expect((yield* client.post(`/api/admin/withdrawals/${second.id}/approve`, undefined, root.auth)).status).toBe(502)
      const rejected = yield* client.post(`/api/admin/withdrawals/${second.id}/reject`, { reason: "Invalid PIX key" }, root.auth)
      expect(rejected.body).toMatchObject({ status: "REJECTED", rejectionReason: "Invalid PIX key", payoutAttempts: 1 })
      expect(yield* balanceOf(client, player.auth)).toBe(25_000)
      expect(yield* deliveriesOf(second.id, receiver)).toEqual([])

      const sql = yield* SqlClient.SqlClient
      const audits = yield* sql<{ action: string }>`
        SELECT action FROM audit_logs WHERE entity_type = 'Withdrawal' AND entity_id = ${first.id} ORDER BY id`
      expect(audits.map((a) => a.action)).toEqual([
        "WITHDRAWAL_REQUESTED",
        "WITHDRAWAL_PAYOUT_STARTED",
        "WITHDRAWAL_PAYOUT_FAILED",
        "WITHDRAWAL_PAYOUT_STARTED",
        "WITHDRAWAL_APPROVED"
      ])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("the administrators' list: every user, filtered by status, paged; administrators only", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const a = yield* fundedPlayer(client, "queue-a", 10_000)
      const b = yield* fundedPlayer(client, "queue-b", 10_000)
      const root = yield* signIn(client, "root")
      const wa = (yield* client.post("/api/withdrawals/request", withdrawal(1_000), a.auth)).body
      const wb = (yield* client.post("/api/withdrawals/request", withdrawal(2_000), b.auth)).body
      yield* client.post(`/api/withdrawals/${wa.id}/cancel`, undefined, a.auth)

      const all = (yield* client.get("/api/admin/withdrawals?limit=100", root.auth)).body
      const ids = all.withdrawals.map((w: any) => w.id)
      expect(ids.indexOf(wb.id)).toBeLessThan(ids.indexOf(wa.id))
      expect(all.withdrawals.find((w: any) => w.id === wa.id)).toMatchObject({ status: "CANCELLED", user: { id: a.id, username: "queue-a" } })
      const cancelled = (yield* client.get("/api/admin/withdrawals?status=CANCELLED&limit=100", root.auth)).body
      expect(cancelled.withdrawals.every((w: any) => w.status === "CANCELLED")).toBe(true)
      expect(cancelled.withdrawals.map((w: any) => w.id)).toContain(wa.id)
      expect(cancelled.withdrawals.map((w: any) => w.id)).not.toContain(wb.id)
      expect(cancelled.total).toBe(cancelled.withdrawals.length)
      const paged = (yield* client.get("/api/admin/withdrawals?limit=1&page=2", root.auth)).body
      expect(paged).toMatchObject({ page: 2, total: all.total })
      expect(paged.withdrawals).toHaveLength(1)
      expect(paged.withdrawals[0].id).toBe(all.withdrawals[1].id)

      expect((yield* client.get("/api/admin/withdrawals?status=LOST", root.auth)).body.errors).toEqual([
        { field: "status", message: "must be one of PENDING, PROCESSING, COMPLETED, REJECTED, CANCELLED, FAILED" }
      ])
      expect((yield* client.get("/api/admin/withdrawals?limit=0", root.auth)).body.errors[0].field).toBe("limit")
      expect((yield* client.get("/api/admin/withdrawals", a.auth)).status).toBe(403)
      expect((yield* client.get("/api/admin/withdrawals")).status).toBe(401)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("balance changes of a request, a cancel and a rejection are pushed to the owner", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const player = yield* fundedPlayer(client, "pushed", 9_000)
      const root = yield* signIn(client, "root")
      const stream = (yield* client.open("/api/realtime", { headers: player.auth })).body!.getReader()
      yield* Effect.promise(() => stream.read())
      const one = (yield* client.post("/api/withdrawals/request", withdrawal(3_000), player.auth)).body
      const two = (yield* client.post("/api/withdrawals/request", withdrawal(4_000), player.auth)).body
      yield* client.post(`/api/withdrawals/${one.id}/cancel`, undefined, player.auth)
      yield* client.post(`/api/admin/withdrawals/${two.id}/reject`, { reason: "no" }, root.auth)
      const events = yield* Effect.promise(async () => {
        const decoder = new TextDecoder()
        let text = ""
        // Each request also sends a WITHDRAWAL_REQUESTED notification (docs/rules.md#withdrawal-notification);
        // the balances are what this is about.
        const parsed = () =>
          text.split("\n\n").filter((block) => block.startsWith("event: balance.updated")).map((block) => JSON.parse(block.split("\n")[1]!.slice(6)))
        while (parsed().length < 4) text += decoder.decode((await stream.read()).value)
        return parsed()
      })
      expect(events).toEqual([{ balanceCents: 6_000 }, { balanceCents: 2_000 }, { balanceCents: 5_000 }, { balanceCents: 9_000 }])
      yield* Effect.promise(() => stream.cancel())
    }))
})

layer(Layer.merge(TestDatabase, Ledger.Default.pipe(Layer.provide(TestDatabase))), { excludeTestServices: true })(
  "withdrawals in parallel (real clock)",
  (it) => {
    it.scoped("parallel requests by one user, through two instances that do not share a lock, never overdraw", () =>
      Effect.gen(function*() {
        const one = yield* makeTestClient(appOptions())
        // A second instance with its own in-memory stores: its lock does not see the first one's.
        const two = yield* makeTestClient(appOptions())
        const player = yield* fundedPlayer(one, "racer", 25_000)
        const elsewhere = yield* signIn(two, "racer")
        const responses = yield* Effect.all(
          Array.from({ length: 12 }, (_, i) =>
            (i % 2 === 0 ? one : two).post("/api/withdrawals/request", withdrawal(5_000), i % 2 === 0 ? player.auth : elsewhere.auth)),
          { concurrency: "unbounded" }
        )
        const statuses = responses.map((r) => r.status)
        expect(statuses.filter((s) => s === 201)).toHaveLength(5)
        expect(statuses.filter((s) => s !== 201).every((s) => s === 400 || s === 409)).toBe(true)
        expect(responses.filter((r) => r.status === 400).every((r) => r.body.message === "Insufficient balance")).toBe(true)
        expect(yield* balanceOf(one, player.auth)).toBe(0)
        const sql = yield* SqlClient.SqlClient
        const [count] = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM withdrawals WHERE user_id = ${player.id} AND status = 'PENDING'`
        expect(count!.n).toBe(5)
        expect(yield* ledgerProblems).toEqual(healthyLedger)
      }))

    it.scoped("parallel approvals pay out once and queue one withdrawal.completed", () =>
      Effect.gen(function*() {
        const gateway = yield* makeTestGateway({ payoutDelay: "150 millis" })
        const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
        const receiver = yield* registerReceiver(client, "parallel")
        const player = yield* fundedPlayer(client, "approved-in-parallel", 30_000)
        const root = yield* signIn(client, "root")
        const requested = (yield* client.post("/api/withdrawals/request", withdrawal(30_000), player.auth)).body
        const responses = yield* Effect.all(
          Array.from({ length: 6 }, () => client.post(`/api/admin/withdrawals/${requested.id}/approve`, undefined, root.auth)),
          { concurrency: "unbounded" }
        )
        const statuses = responses.map((r) => r.status)
        expect(statuses.filter((s) => s === 200)).toHaveLength(1)
        expect(statuses.filter((s) => s !== 200).every((s) => s === 409 || s === 400)).toBe(true)
        expect(responses.find((r) => r.status === 409)?.body).toEqual({ statusCode: 409, message: "Withdrawal payout is in progress" })
        expect(yield* gateway.payouts).toHaveLength(1)
        expect(yield* deliveriesOf(requested.id, receiver)).toHaveLength(1)
        expect(yield* balanceOf(client, player.auth)).toBe(0)
        expect(yield* ledgerProblems).toEqual(healthyLedger)
      }))

    it.scoped("while a payout is in flight, the withdrawal can be neither cancelled nor rejected", () =>
      Effect.gen(function*() {
        const gateway = yield* makeTestGateway({ payoutDelay: "400 millis" })
        const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
        const player = yield* fundedPlayer(client, "in-flight", 10_000)
        const root = yield* signIn(client, "root")
        const requested = (yield* client.post("/api/withdrawals/request", withdrawal(10_000), player.auth)).body
        const approving = yield* Effect.fork(client.post(`/api/admin/withdrawals/${requested.id}/approve`, undefined, root.auth))
        // Wait until the approval is inside the gateway call.
        while ((yield* gateway.payouts).length === 0) yield* Effect.sleep("5 millis")

        const cancel = yield* client.post(`/api/withdrawals/${requested.id}/cancel`, undefined, player.auth)
        expect(cancel.status).toBe(409)
        expect(cancel.body).toEqual({ statusCode: 409, message: "Withdrawal is already being processed" })
        const reject = yield* client.post(`/api/admin/withdrawals/${requested.id}/reject`, { reason: "too late" }, root.auth)
        expect(reject.status).toBe(409)
        expect(reject.body).toEqual({ statusCode: 409, message: "Withdrawal payout is in progress" })
        // PROCESSING while the gateway has it (docs/rules.md#withdrawal-payout).
        const listed = (yield* client.get("/api/admin/withdrawals?status=PROCESSING", root.auth)).body.withdrawals
        expect(listed.find((w: any) => w.id === requested.id)).toMatchObject({ status: "PROCESSING", payoutInProgress: true })

        const approved = yield* Fiber.join(approving)
        expect(approved.status).toBe(200)
        expect(approved.body.status).toBe("COMPLETED")
        expect(yield* balanceOf(client, player.auth)).toBe(0)
        expect(yield* gateway.payouts).toHaveLength(1)
        expect(yield* ledgerProblems).toEqual(healthyLedger)
      }))
  }
)
