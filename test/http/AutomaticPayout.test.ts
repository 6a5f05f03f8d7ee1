/**
 * The automatic payout under JURISDICTION=BR (docs/rules.md#automatic-payout): right after its request commits, a
 * withdrawal of at most AUTO_PAYOUT_MAX_CENTS from a player with no SECURITY_ALERT in the last 24 hours goes the way
 * of an approval with `system` as its actor, and the 201 shows it as it then is; larger ones, and those of an alerted
 * player, wait PENDING for an administrator; a refusal or no answer from the gateway leaves it PENDING or PROCESSING
 * with the 201 answered. Under NONE nothing is paid automatically. On the stores and database of the run; every
 * scenario ends with balance = ledger.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import type { Jurisdiction } from "../../src/layers/AppConfig"
import { cpfOf } from "../support/Cpf"
import { balanceOf, fundedPlayer } from "../support/GameFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { makeTestGateway, type TestGatewayControl } from "../support/TestGateway"
import { TestStores } from "../support/TestStores"
import { healthyLedger, ledgerProblems, withdrawal } from "../support/WithdrawalFixtures"

const HOUR = 60 * 60_000
/** The players are born in 1990: adults on the service's date (docs/rules.md#identity-verification). */
const NOW = Date.parse("2026-11-26T12:00:00Z")
const lifted = { count: 1000, windowMs: 60_000 }
const adminToken = { authorization: "Bearer test-admin-token" }

const app = (gateway: TestGatewayControl, jurisdiction: Jurisdiction = "BR") =>
  makeTestClient({
    stores: TestStores,
    gateway: gateway.layer,
    config: {
      jurisdiction,
      adminIdpIds: ["root"],
      rateLimits: { ...testConfig.rateLimits, withdrawal: lifted, global: lifted, auth: lifted }
    }
  })

let cpfs = 0
/** A player with `balanceCents`, identity verified through the API (docs/rules.md#identity-required). */
const verifiedPlayer = (client: TestClient, login: string, balanceCents: number) =>
  Effect.gen(function*() {
    const player = yield* fundedPlayer(client, login, balanceCents)
    const verified = yield* client.post(
      "/api/users/me/identity",
      { cpf: cpfOf(String(471_000_000 + ++cpfs)), fullName: "Automatic Payee", birthDate: "1990-01-01" },
      player.auth
    )
    expect(verified.status).toBe(200)
    return player
  })

const request = (client: TestClient, auth: Record<string, string>, amountCents: number, headers: Record<string, string> = {}) =>
  client.post("/api/withdrawals/request", withdrawal(amountCents), { ...auth, ...headers })

const auditOf = (withdrawalId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ action: string; metadata: unknown }>`
      SELECT action, metadata FROM audit_logs WHERE entity_type = 'Withdrawal' AND entity_id = ${withdrawalId} ORDER BY id`)
    .pipe(Effect.map((rows) => rows.map((row) => ({
      action: row.action,
      metadata: typeof row.metadata === "string" ? JSON.parse(row.metadata) : row.metadata
    }))))

const notificationTypes = (client: TestClient, auth: Record<string, string>) =>
  Effect.map(client.get("/api/notifications", auth), (r) =>
    (r.body.notifications as ReadonlyArray<{ type: string }>).map((n) => n.type))

const deliveriesOf = (withdrawalId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ event: string }>`
      SELECT event FROM webhook_deliveries WHERE payload::jsonb -> 'data' ->> 'withdrawalId' = ${withdrawalId}`)

const adminView = (client: TestClient, root: Record<string, string>, id: string) =>
  Effect.map(client.get("/api/admin/withdrawals?limit=100", root), (r) =>
    (r.body.withdrawals as ReadonlyArray<{ id: string }>).find((w) => w.id === id) as Record<string, unknown>)

layer(TestDatabase)("automatic payout", (it) => {
  it.scoped("a small withdrawal is COMPLETED with no administrator: audit actor system, WITHDRAWAL_COMPLETED, the webhook; a keyed replay pays nothing again", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const gateway = yield* makeTestGateway()
      const client = yield* app(gateway)
      const hook = yield* client.post(
        "/api/webhooks",
        { url: "https://receiver.example.com/auto", events: ["withdrawal.completed"], secret: "receiver-secret-0123" },
        adminToken
      )
      expect(hook.status).toBe(201)
      const player = yield* verifiedPlayer(client, "auto-small", 30_000)

      const answer = yield* request(client, player.auth, 5_000)
      expect(answer.status).toBe(201)
      expect(answer.body).toMatchObject({ amountCents: 5_000, status: "COMPLETED" })
      const id = answer.body.id as string
      expect(yield* gateway.payouts).toHaveLength(1)
      expect((yield* client.get("/api/withdrawals", player.auth)).body.withdrawals[0]).toMatchObject({ id, status: "COMPLETED" })
      const audit = yield* auditOf(id)
      expect(audit.map((a) => a.action)).toEqual(["WITHDRAWAL_REQUESTED", "WITHDRAWAL_APPROVED"])
      expect(audit[1]!.metadata).toMatchObject({ actor: "system", by: "automatic" })
      expect(audit[1]!.metadata).not.toHaveProperty("adminId")
      expect(yield* notificationTypes(client, player.auth)).toEqual(["WITHDRAWAL_COMPLETED", "WITHDRAWAL_REQUESTED"])
      expect(yield* deliveriesOf(id)).toEqual([{ event: "withdrawal.completed" }])

      // With an Idempotency-Key: paid after that key's transaction committed; its replay shows it and pays nothing.
      const keyed = yield* request(client, player.auth, 5_000, { "idempotency-key": "auto-1" })
      expect(keyed.status).toBe(201)
      expect(keyed.body.status).toBe("COMPLETED")
      const replay = yield* request(client, player.auth, 5_000, { "idempotency-key": "auto-1" })
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.body).toMatchObject({ id: keyed.body.id, status: "COMPLETED" })
      expect(yield* gateway.payouts).toHaveLength(2)
      expect(yield* balanceOf(client, player.auth)).toBe(20_000)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("AUTO_PAYOUT_MAX_CENTS: exactly the maximum is paid, one cent more waits PENDING for an administrator", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const gateway = yield* makeTestGateway()
      const client = yield* app(gateway)
      const player = yield* verifiedPlayer(client, "auto-large", 300_000)
      const root = (yield* signIn(client, "root")).auth

      const atMax = yield* request(client, player.auth, 100_000)
      expect(atMax.status).toBe(201)
      expect(atMax.body.status).toBe("COMPLETED")
      const above = yield* request(client, player.auth, 100_001)
      expect(above.status).toBe(201)
      expect(above.body.status).toBe("PENDING")
      expect(yield* gateway.payouts).toHaveLength(1)
      expect((yield* auditOf(above.body.id)).map((a) => a.action)).toEqual(["WITHDRAWAL_REQUESTED"])
      expect(yield* adminView(client, root, above.body.id)).toMatchObject({ status: "PENDING", payoutAttempts: 0 })

      // A smaller maximum configured: 5000 cents waits too.
      const strict = yield* makeTestClient({
        stores: TestStores,
        gateway: gateway.layer,
        config: { jurisdiction: "BR", autoPayoutMaxCents: 4_999, adminIdpIds: ["root"], rateLimits: { ...testConfig.rateLimits, withdrawal: lifted } }
      })
      const waits = yield* request(strict, (yield* signIn(strict, "auto-large")).auth, 5_000)
      expect(waits.body.status).toBe("PENDING")
      expect(yield* gateway.payouts).toHaveLength(1)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("a SECURITY_ALERT in the last 24 hours: the withdrawal waits PENDING; once the alert is older, the next is paid", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const gateway = yield* makeTestGateway()
      const client = yield* app(gateway)
      const player = yield* verifiedPlayer(client, "auto-alerted", 30_000)
      const sql = yield* SqlClient.SqlClient
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* sql`
        INSERT INTO notifications (user_id, type, title, message, created_at)
        VALUES (${player.id}, 'SECURITY_ALERT', 'New sign-in location', 'Your session was used from elsewhere', ${now})`

      const held = yield* request(client, player.auth, 5_000)
      expect(held.status).toBe(201)
      expect(held.body.status).toBe("PENDING")
      yield* TestClock.adjust(24 * HOUR - 1)
      expect((yield* request(client, player.auth, 5_000)).body.status).toBe("PENDING")
      expect(yield* gateway.payouts).toHaveLength(0)

      yield* TestClock.adjust(1)
      expect((yield* request(client, player.auth, 5_000)).body.status).toBe("COMPLETED")
      expect(yield* gateway.payouts).toHaveLength(1)
      // The ones that waited are still an administrator's.
      expect((yield* client.get("/api/withdrawals", player.auth)).body.withdrawals.map((w: { status: string }) => w.status))
        .toEqual(["COMPLETED", "PENDING", "PENDING"])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("the gateway refuses: 201 all the same, PENDING with the refusal, audited with actor system; an administrator then pays it", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const gateway = yield* makeTestGateway()
      const client = yield* app(gateway)
      const player = yield* verifiedPlayer(client, "auto-refused", 30_000)
      const root = (yield* signIn(client, "root")).auth
      yield* gateway.failPayouts("Invalid PIX key")

      const answer = yield* request(client, player.auth, 5_000)
      expect(answer.status).toBe(201)
      expect(answer.body.status).toBe("PENDING")
      const id = answer.body.id as string
      expect(yield* gateway.payouts).toHaveLength(1)
      expect(yield* adminView(client, root, id)).toMatchObject({ status: "PENDING", payoutAttempts: 1, payoutError: "Invalid PIX key" })
      const audit = yield* auditOf(id)
      expect(audit.map((a) => a.action)).toEqual(["WITHDRAWAL_REQUESTED", "WITHDRAWAL_PAYOUT_FAILED"])
      expect(audit[1]!.metadata).toMatchObject({ actor: "system", by: "automatic", error: "Invalid PIX key" })
      expect(yield* balanceOf(client, player.auth)).toBe(25_000)
      // Attempted: the owner can no longer cancel it; an administrator decides.
      expect((yield* client.post(`/api/withdrawals/${id}/cancel`, undefined, player.auth)).status).toBe(409)
      yield* gateway.failPayouts(undefined)
      const approved = yield* client.post(`/api/admin/withdrawals/${id}/approve`, undefined, root)
      expect(approved.body.status).toBe("COMPLETED")
      expect((yield* auditOf(id)).slice(2)).toMatchObject([
        { action: "WITHDRAWAL_PAYOUT_STARTED", metadata: { adminId: expect.any(String), attempt: 2 } },
        { action: "WITHDRAWAL_APPROVED", metadata: { by: "approval" } }
      ])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("no answer from the gateway: 201 all the same, PROCESSING, unconfirmed with actor system; payout.paid settles it", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const gateway = yield* makeTestGateway()
      const client = yield* app(gateway)
      const player = yield* verifiedPlayer(client, "auto-unanswered", 30_000)
      const root = (yield* signIn(client, "root")).auth
      yield* gateway.timeOutPayouts({ paid: true })

      const answer = yield* request(client, player.auth, 5_000)
      expect(answer.status).toBe(201)
      expect(answer.body.status).toBe("PROCESSING")
      const id = answer.body.id as string
      expect(yield* adminView(client, root, id)).toMatchObject({ status: "PROCESSING", payoutInProgress: true })
      const audit = yield* auditOf(id)
      expect(audit.map((a) => a.action)).toEqual(["WITHDRAWAL_REQUESTED", "WITHDRAWAL_PAYOUT_UNCONFIRMED"])
      expect(audit[1]!.metadata).toMatchObject({ actor: "system" })
      expect((yield* client.post(`/api/admin/withdrawals/${id}/reject`, { reason: "x" }, root)).status).toBe(409)
      yield* gateway.timeOutPayouts(undefined)
      const reconciled = yield* client.post(`/api/admin/withdrawals/${id}/reconcile`, undefined, root)
      expect(reconciled.body.status).toBe("COMPLETED")
      expect(yield* gateway.payouts).toHaveLength(1)
      expect(yield* balanceOf(client, player.auth)).toBe(25_000)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("under NONE the same request waits PENDING, under BR it is paid", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const gateway = yield* makeTestGateway()
      const none = yield* app(gateway, "NONE")
      const player = yield* fundedPlayer(none, "auto-none", 30_000)
      const plain = yield* request(none, player.auth, 5_000)
      expect(plain.status).toBe(201)
      expect(plain.body.status).toBe("PENDING")
      expect(yield* gateway.payouts).toHaveLength(0)

      const br = yield* app(gateway, "BR")
      const same = yield* signIn(br, "auto-none")
      const verified = yield* br.post(
        "/api/users/me/identity",
        { cpf: cpfOf("471999001"), fullName: "Automatic Payee", birthDate: "1990-01-01" },
        same.auth
      )
      expect(verified.status).toBe(200)
      expect((yield* request(br, same.auth, 5_000)).body.status).toBe("COMPLETED")
      expect(yield* gateway.payouts).toHaveLength(1)
      // The one requested under NONE is left to an administrator.
      expect((yield* br.get("/api/withdrawals", same.auth)).body.withdrawals.map((w: { status: string }) => w.status))
        .toEqual(["COMPLETED", "PENDING"])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))
})
