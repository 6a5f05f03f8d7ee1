/** Administrators and bans (docs/rules.md#admin-roles, docs/rules.md#bans) through the public API. */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { ACCOUNT_RECHECK_MS } from "../../src/services/identity/Sessions"
import { signIn } from "../support/SignIn"
import { makeTestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const withAdmin = makeTestClient({ config: { adminIdpIds: ["root"] } })

layer(TestDatabase)("user administration", (it) => {
  it.scoped("admin endpoints: 401 without a session, 403 for a user, 200 for an administrator", () =>
    Effect.gen(function*() {
      const client = yield* withAdmin
      expect((yield* client.get("/api/admin/users")).status).toBe(401)
      const user = yield* signIn(client, "plain-user")
      const refused = yield* client.get("/api/admin/users", user.auth)
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual({ statusCode: 403, message: "Forbidden" })
      const admin = yield* signIn(client, "root")
      const listed = yield* client.get("/api/admin/users?search=PLAIN&limit=10", admin.auth)
      expect(listed.status).toBe(200)
      expect(listed.body).toEqual({
        users: [{
          id: expect.any(String),
          username: "plain-user",
          idpId: "plain-user",
          role: "USER",
          balanceCents: 0,
          bannedAt: null,
          createdAt: expect.any(String),
          lastActiveAt: expect.any(String),
          twoFactorEnabled: false,
          activeSessions: 1
        }],
        total: 1,
        page: 1
      })
      const bad = yield* client.get("/api/admin/users?limit=500&page=0", admin.auth)
      expect(bad.status).toBe(400)
      expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(["limit", "page"])
    }))

  it.scoped("a ban ends the user's sessions and refuses sign-in until unbanned", () =>
    Effect.gen(function*() {
      const client = yield* withAdmin
      const admin = yield* signIn(client, "root")
      const target = yield* signIn(client, "troublemaker")
      yield* signIn(client, "troublemaker")
      const id = (yield* client.get("/api/auth/me", target.auth)).body.id

      const noReason = yield* client.post(`/api/admin/users/${id}/ban`, {}, admin.auth)
      expect(noReason.status).toBe(400)
      expect(noReason.body.errors).toEqual([{ field: "reason", message: expect.any(String) }])

      const banned = yield* client.post(`/api/admin/users/${id}/ban`, { reason: "chargeback fraud" }, admin.auth)
      expect(banned.body).toEqual({ message: "User banned", sessionsRevoked: 2 })
      expect((yield* client.get("/api/auth/me", target.auth)).status).toBe(401)
      const again = yield* signIn(client, "troublemaker")
      expect(again.callback.status).toBe(403)
      expect(again.callback.body).toEqual({ statusCode: 403, message: "Account banned" })
      expect(again.sessionId).toBe("")

      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ banReason: string; actions: string }>`
        SELECT ban_reason, (SELECT string_agg(action, ',') FROM audit_logs WHERE user_id = ${id}) AS actions
        FROM users WHERE id = ${id}`
      expect(row).toEqual({ banReason: "chargeback fraud", actions: "USER_BANNED" })

      expect((yield* client.post(`/api/admin/users/${id}/unban`, undefined, admin.auth)).body).toEqual({
        message: "User unbanned"
      })
      const back = yield* signIn(client, "troublemaker")
      expect((yield* client.get("/api/auth/me", back.auth)).status).toBe(200)
    }))

  it.scoped("a session that outlives a ban is refused with 403", () =>
    Effect.gen(function*() {
      const client = yield* withAdmin
      const target = yield* signIn(client, "sneaky")
      const id = (yield* client.get("/api/auth/me", target.auth)).body.id
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE users SET banned_at = now(), ban_reason = 'test' WHERE id = ${id}`
      const response = yield* client.get("/api/auth/me", target.auth)
      expect(response.status).toBe(403)
      expect(response.body).toEqual({ statusCode: 403, message: "Account banned" })
      // Other endpoints know the user from the session's copy, read again when it is 30 s old.
      expect((yield* client.get("/api/inventory", target.auth)).status).toBe(200)
      yield* TestClock.adjust(ACCOUNT_RECHECK_MS)
      for (const refused of [yield* client.get("/api/inventory", target.auth), yield* client.post("/api/cases/1/open", undefined, target.auth)]) {
        expect(refused.body).toEqual({ statusCode: 403, message: "Account banned" })
      }
    }))

  it.scoped("a promotion to administrator reaches the user's existing sessions within 30 s", () =>
    Effect.gen(function*() {
      const client = yield* withAdmin
      const target = yield* signIn(client, "rising")
      expect((yield* client.get("/api/admin/users", target.auth)).status).toBe(403)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE users SET role = 'ADMIN' WHERE idp_id = 'rising'`
      yield* TestClock.adjust(ACCOUNT_RECHECK_MS - 1)
      expect((yield* client.get("/api/admin/users", target.auth)).status).toBe(403)
      yield* TestClock.adjust(1)
      expect((yield* client.get("/api/admin/users", target.auth)).status).toBe(200)
    }))

  it.scoped("an administrator cannot ban themselves; unknown users are 404", () =>
    Effect.gen(function*() {
      const client = yield* withAdmin
      const admin = yield* signIn(client, "root")
      const self = (yield* client.get("/api/auth/me", admin.auth)).body.id
      const refused = yield* client.post(`/api/admin/users/${self}/ban`, { reason: "oops" }, admin.auth)
      expect(refused.body).toEqual({ statusCode: 400, message: "You cannot ban yourself" })
      expect((yield* client.post("/api/admin/users/999999/ban", { reason: "x" }, admin.auth)).body).toEqual({
        statusCode: 404,
        message: "User not found"
      })
    }))

  it.scoped("balance adjustments go through the ledger and cannot overdraw", () =>
    Effect.gen(function*() {
      const client = yield* withAdmin
      const admin = yield* signIn(client, "root")
      const player = yield* signIn(client, "player-adjust")
      const id = (yield* client.get("/api/auth/me", player.auth)).body.id
      const credit = yield* client.post(`/api/admin/users/${id}/adjust-balance`, { amountCents: 2500, reason: "goodwill" }, admin.auth)
      expect(credit.body).toEqual({ userId: id, balanceCents: 2500, transactionId: expect.any(String) })
      const overdraw = yield* client.post(`/api/admin/users/${id}/adjust-balance`, { amountCents: -3000, reason: "correction" }, admin.auth)
      expect(overdraw.status).toBe(400)
      expect(overdraw.body).toEqual({ statusCode: 400, message: "Insufficient balance" })
      const debit = yield* client.post(`/api/admin/users/${id}/adjust-balance`, { amountCents: -500, reason: "correction" }, admin.auth)
      expect(debit.body.balanceCents).toBe(2000)
      const zero = yield* client.post(`/api/admin/users/${id}/adjust-balance`, { amountCents: 0, reason: "x" }, admin.auth)
      expect(zero.status).toBe(400)
      expect((yield* client.get("/api/auth/me", player.auth)).body.balanceCents).toBe(2000)
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ amountCents: string; reason: string }>`
        SELECT amount_cents, reason FROM transactions WHERE user_id = ${id} ORDER BY id`
      expect(rows).toEqual([{ amountCents: "2500", reason: "goodwill" }, { amountCents: "-500", reason: "correction" }])
      const [audits] = yield* sql<{ n: string }>`
        SELECT count(*)::text AS n FROM audit_logs WHERE user_id = ${id} AND action = 'ADMIN_ADJUST_BALANCE'`
      expect(audits!.n).toBe("2")
    }))
})
