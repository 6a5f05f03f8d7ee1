/**
 * The player page (docs/rules.md#player-page): GET /admin/users/:id and its paged lists (ledger, deposits,
 * withdrawals, openings, audit), and an administrator ending one of the player's sessions.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { sessionReference } from "../../src/schema/admin/AdminPlayer"
import { fundedPlayer, makeCase } from "../support/GameFixtures"
import { confirmedDeposit } from "../support/PaymentFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { TestStores } from "../support/TestStores"
import { codeNow, enableTwoFactor, withdrawal } from "../support/WithdrawalFixtures"

const withAdmin = makeTestClient({
  stores: TestStores,
  config: {
    adminIdpIds: ["root", "boss"],
    rateLimits: { ...testConfig.rateLimits, global: { count: 10_000, windowMs: 60_000 } }
  }
})

const fieldsOf = (body: { errors: ReadonlyArray<{ field: string }> }) => body.errors.map((e) => e.field).sort()

layer(TestDatabase)("the player page", (it) => {
  it.scoped("shows a player's profile, sessions and what they did, each list paged and filtered", () =>
    Effect.gen(function*() {
      const client = yield* withAdmin
      yield* TestClock.setTime(1_800_000_000_000)
      const player = yield* fundedPlayer(client, "page-player", 10_000)
      const admin = yield* signIn(client, "root")
      const adminId = (yield* client.get("/api/auth/me", admin.auth)).body.id as string
      yield* confirmedDeposit(client, player.auth, 2_000)
      const requested = yield* client.post("/api/withdrawals/request", withdrawal(1_500), player.auth)
      expect(requested.status).toBe(201)
      const { kase } = yield* makeCase({ priceCents: 500n })
      const opened = yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)
      expect(opened.status).toBe(200)
      const adjusted = yield* client.post(
        `/api/admin/users/${player.id}/adjust-balance`,
        { amountCents: -100, reason: "chargeback fee" },
        admin.auth
      )
      expect(adjusted.status).toBe(200)

      const page = yield* client.get(`/api/admin/users/${player.id}`, admin.auth)
      expect(page.status).toBe(200)
      const balance = (yield* client.get("/api/auth/me", player.auth)).body.balanceCents
      const compliance = (yield* client.get("/api/users/me/compliance", player.auth)).body
      expect(compliance).toMatchObject({ identity: { status: "UNVERIFIED" }, limits: { usage: { lossTodayCents: 500 } } })
      expect(page.body).toEqual({
        id: player.id,
        username: "page-player",
        idpId: "page-player",
        role: "USER",
        balanceCents: balance,
        twoFactorEnabled: false,
        banned: null,
        createdAt: expect.any(String),
        lastActiveAt: expect.any(String),
        // As the player's own compliance status shows them.
        identity: compliance.identity,
        responsibleGaming: { exclusion: compliance.exclusion, limits: compliance.limits },
        // funding, deposit, withdrawal, opening, adjustment
        counts: { transactions: 5, deposits: 1, withdrawals: 1, openings: 1, auditEntries: expect.any(Number) },
        sessions: [{
          id: sessionReference(player.sessionId),
          ip: expect.any(String),
          userAgent: expect.any(String),
          createdAt: expect.any(String),
          lastActivity: expect.any(String)
        }]
      })
      // The session id itself (a credential) is never shown.
      expect(JSON.stringify(page.body)).not.toContain(player.sessionId)

      const ledger = yield* client.get(`/api/admin/users/${player.id}/transactions`, admin.auth)
      expect(ledger.status).toBe(200)
      expect(ledger.body.total).toBe(5)
      expect(ledger.body.transactions.map((t: { type: string }) => t.type)).toEqual([
        "ADMIN_ADJUSTMENT",
        "CASE_OPEN",
        "WITHDRAWAL",
        "DEPOSIT",
        "ADMIN_ADJUSTMENT"
      ])
      expect(ledger.body.transactions[0]).toEqual({
        id: expect.any(String),
        type: "ADMIN_ADJUSTMENT",
        amountCents: -100,
        balanceAfterCents: balance,
        reference: null,
        reason: "chargeback fee",
        createdAt: expect.any(String)
      })
      expect(ledger.body.transactions[1]).toMatchObject({ amountCents: -500, reference: { type: "CASE", id: String(kase.id) } })
      const adjustments = yield* client.get(`/api/admin/users/${player.id}/transactions?type=ADMIN_ADJUSTMENT&limit=1`, admin.auth)
      expect(adjustments.body).toMatchObject({ total: 2, page: 1, transactions: [{ reason: "chargeback fee" }] })
      const second = yield* client.get(`/api/admin/users/${player.id}/transactions?type=ADMIN_ADJUSTMENT&limit=1&page=2`, admin.auth)
      expect(second.body).toMatchObject({ total: 2, page: 2, transactions: [{ reason: "test funds", amountCents: 10_000 }] })
      const beyond = yield* client.get(`/api/admin/users/${player.id}/transactions?page=9`, admin.auth)
      expect(beyond.body).toEqual({ transactions: [], total: 5, page: 9 })

      const deposits = yield* client.get(`/api/admin/users/${player.id}/deposits`, admin.auth)
      expect(deposits.body).toMatchObject({
        total: 1,
        deposits: [{ amountCents: "2000", status: "CONFIRMED", user: { id: player.id, username: "page-player" } }]
      })
      expect((yield* client.get(`/api/admin/users/${player.id}/deposits?status=PENDING`, admin.auth)).body)
        .toEqual({ deposits: [], total: 0, page: 1 })
      const withdrawals = yield* client.get(`/api/admin/users/${player.id}/withdrawals`, admin.auth)
      expect(withdrawals.body).toMatchObject({
        total: 1,
        withdrawals: [{ id: requested.body.id, amountCents: 1_500, user: { id: player.id }, pixKey: "player@example.com" }]
      })
      const openings = yield* client.get(`/api/admin/users/${player.id}/openings`, admin.auth)
      const own = yield* client.get("/api/cases/openings", player.auth)
      expect(openings.body).toEqual(own.body)
      expect(openings.body).toMatchObject({ total: 1, openings: [{ id: opened.body.openingId, case: { id: String(kase.id) } }] })

      const audit = yield* client.get(`/api/admin/users/${player.id}/audit`, admin.auth)
      expect(audit.status).toBe(200)
      const actions = audit.body.entries.map((e: { action: string }) => e.action)
      expect(actions).toEqual(expect.arrayContaining(["ADMIN_ADJUST_BALANCE", "DEPOSIT_CONFIRMED", "WITHDRAWAL_REQUESTED"]))
      expect(audit.body.total).toBe(page.body.counts.auditEntries)
      const adjustedEntries = yield* client.get(`/api/admin/users/${player.id}/audit?action=ADMIN_ADJUST_BALANCE`, admin.auth)
      expect(adjustedEntries.body.total).toBe(2)
      expect(adjustedEntries.body.entries[0]).toEqual({
        id: expect.any(String),
        createdAt: expect.any(String),
        action: "ADMIN_ADJUST_BALANCE",
        userId: player.id,
        actor: { id: adminId, username: "root" },
        entityType: "Transaction",
        entityId: ledger.body.transactions[0].id,
        metadata: { amountCents: "-100", reason: "chargeback fee", adminId }
      })
      const deposited = audit.body.entries.find((e: { action: string }) => e.action === "DEPOSIT_CONFIRMED")
      expect(deposited.actor).toBeNull()
    }))

  it.scoped("400 for bad parameters, 403 for a player, 404 for an unknown user", () =>
    Effect.gen(function*() {
      const client = yield* withAdmin
      const player = yield* fundedPlayer(client, "nosy-player", 0)
      const admin = yield* signIn(client, "root")
      const paths = ["", "/transactions", "/deposits", "/withdrawals", "/openings", "/audit"]
      for (const path of paths) {
        const refused = yield* client.get(`/api/admin/users/${player.id}${path}`, player.auth)
        expect(refused.status).toBe(403)
        expect(refused.body).toEqual({ statusCode: 403, message: "Forbidden" })
        expect((yield* client.get(`/api/admin/users/${player.id}${path}`)).status).toBe(401)
        const unknown = yield* client.get(`/api/admin/users/999999999${path}`, admin.auth)
        expect(unknown.status).toBe(404)
        expect(unknown.body).toEqual({ statusCode: 404, message: "User not found" })
        const badId = yield* client.get(`/api/admin/users/abc${path}`, admin.auth)
        expect(badId.status).toBe(400)
        expect(fieldsOf(badId.body)).toEqual(["id"])
        if (path !== "") {
          const bounds = yield* client.get(`/api/admin/users/${player.id}${path}?limit=101&page=0`, admin.auth)
          expect(bounds.status).toBe(400)
          expect(fieldsOf(bounds.body)).toEqual(["limit", "page"])
        }
      }
      const badType = yield* client.get(`/api/admin/users/${player.id}/transactions?type=GIFT`, admin.auth)
      expect(badType.status).toBe(400)
      expect(fieldsOf(badType.body)).toEqual(["type"])
      const badStatus = yield* client.get(`/api/admin/users/${player.id}/withdrawals?status=LOST`, admin.auth)
      expect(fieldsOf(badStatus.body)).toEqual(["status"])
      const badAudit = yield* client.get(`/api/admin/users/${player.id}/audit?action=NOPE&from=2026-12-02&to=2026-12-01`, admin.auth)
      expect(badAudit.status).toBe(400)
      expect(fieldsOf(badAudit.body)).toEqual(["action"])
      const backwards = yield* client.get(`/api/admin/users/${player.id}/audit?from=2026-12-02&to=2026-12-01`, admin.auth)
      expect(backwards.status).toBe(400)
      expect(backwards.body.errors).toEqual([{ field: "from", message: "must not be after to" }])
    }))

  it.scoped("an administrator ends one session of a player: that session is 401 at once, the others stay", () =>
    Effect.gen(function*() {
      const client = yield* withAdmin
      yield* TestClock.setTime(1_800_000_000_000)
      const first = yield* fundedPlayer(client, "two-sessions", 0)
      const second = yield* signIn(client, "two-sessions")
      const other = yield* fundedPlayer(client, "someone-else", 0)
      const admin = yield* signIn(client, "root")
      const adminId = (yield* client.get("/api/auth/me", admin.auth)).body.id as string
      const target = sessionReference(first.sessionId)

      const refused = yield* client.post(`/api/admin/users/${first.id}/sessions/${target}/revoke`, undefined, first.auth)
      expect(refused.status).toBe(403)
      // Another player's session, an unknown reference, an unknown user: 404.
      const notTheirs = yield* client.post(
        `/api/admin/users/${other.id}/sessions/${target}/revoke`,
        undefined,
        admin.auth
      )
      expect(notTheirs.body).toEqual({ statusCode: 404, message: "Session not found" })
      expect((yield* client.post(`/api/admin/users/${first.id}/sessions/${"0".repeat(24)}/revoke`, undefined, admin.auth)).status)
        .toBe(404)
      expect((yield* client.post(`/api/admin/users/999999999/sessions/${target}/revoke`, undefined, admin.auth)).body)
        .toEqual({ statusCode: 404, message: "User not found" })
      // The session id itself is not a reference.
      const byId = yield* client.post(`/api/admin/users/${first.id}/sessions/${first.sessionId}/revoke`, undefined, admin.auth)
      expect(byId.status).toBe(400)
      expect(fieldsOf(byId.body)).toEqual(["sessionId"])
      expect((yield* client.get("/api/auth/me", first.auth)).status).toBe(200)

      const revoked = yield* client.post(`/api/admin/users/${first.id}/sessions/${target}/revoke`, undefined, admin.auth)
      expect(revoked.status).toBe(200)
      expect(revoked.body.sessions.map((s: { id: string }) => s.id)).toEqual([sessionReference(second.sessionId)])
      expect((yield* client.get("/api/auth/me", first.auth)).status).toBe(401)
      expect((yield* client.get("/api/auth/me", second.auth)).status).toBe(200)
      expect((yield* client.get("/api/auth/me", other.auth)).status).toBe(200)
      // Once ended, it is not the player's any more.
      expect((yield* client.post(`/api/admin/users/${first.id}/sessions/${target}/revoke`, undefined, admin.auth)).status)
        .toBe(404)

      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ entityId: string; metadata: Record<string, unknown> }>`
        SELECT entity_id, metadata FROM audit_logs WHERE action = 'SESSION_REVOKED' AND user_id = ${first.id}`
      expect(rows.map((r) => ({ ...r, metadata: typeof r.metadata === "string" ? JSON.parse(r.metadata) : r.metadata }))).toEqual([{
        entityId: target,
        metadata: { adminId, ip: expect.any(String), userAgent: expect.any(String) }
      }])
      const listed = yield* client.get(`/api/admin/audit?action=SESSION_REVOKED&userId=${first.id}`, admin.auth)
      expect(listed.body.entries).toMatchObject([{ actor: { id: adminId, username: "root" }, entityType: "Session", entityId: target }])
    }))

  it.scoped("ending a session needs the administrator's 2FA code when they have 2FA on", () =>
    Effect.gen(function*() {
      const client = yield* withAdmin
      yield* TestClock.setTime(1_800_000_000_000)
      const player = yield* fundedPlayer(client, "stepped-session", 0)
      const boss = yield* signIn(client, "boss")
      const secret = yield* enableTwoFactor(client, boss.auth)
      const path = `/api/admin/users/${player.id}/sessions/${sessionReference(player.sessionId)}/revoke`

      expect((yield* client.post(path, undefined, boss.auth)).body)
        .toEqual({ statusCode: 400, error: "2FA_REQUIRED", message: "2FA code required" })
      expect((yield* client.post(path, undefined, { ...boss.auth, "x-2fa-code": "000000" })).body)
        .toEqual({ statusCode: 400, message: "Invalid 2FA code" })
      expect((yield* client.get("/api/auth/me", player.auth)).status).toBe(200)
      const done = yield* client.post(path, undefined, { ...boss.auth, "x-2fa-code": yield* codeNow(secret) })
      expect(done.status).toBe(200)
      expect(done.body).toEqual({ sessions: [] })
      expect((yield* client.get("/api/auth/me", player.auth)).status).toBe(401)
      // Reading the player page is not a step-up action.
      expect((yield* client.get(`/api/admin/users/${player.id}`, boss.auth)).status).toBe(200)
    }))
})
