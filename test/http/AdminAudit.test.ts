/** The audit log (docs/rules.md#audit-log): GET /admin/audit, paged, filtered, with who acted. */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { sessionReference } from "../../src/schema/admin/AdminPlayer"
import { fundedPlayer } from "../support/GameFixtures"
import { initiateDeposit } from "../support/PaymentFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { withdrawal } from "../support/WithdrawalFixtures"

const withAdmin = makeTestClient({
  config: {
    adminIdpIds: ["root", "auditor", "archivist"],
    rateLimits: { ...testConfig.rateLimits, global: { count: 10_000, windowMs: 60_000 } }
  }
})

const fieldsOf = (body: { errors: ReadonlyArray<{ field: string }> }) => body.errors.map((e) => e.field).sort()
const actionsOf = (body: { entries: ReadonlyArray<{ action: string }> }) => body.entries.map((e) => e.action)

const T0 = 1_800_000_000_000
const iso = (ms: number) => new Date(ms).toISOString()

layer(TestDatabase)("the audit log", (it) => {
  it.scoped("lists entries newest first with their actor, narrowed by action, actor, user and time", () =>
    Effect.gen(function*() {
      const client = yield* withAdmin
      yield* TestClock.setTime(T0)
      const root = yield* signIn(client, "root")
      const rootId = (yield* client.get("/api/auth/me", root.auth)).body.id as string
      const auditor = yield* signIn(client, "auditor")
      const auditorId = (yield* client.get("/api/auth/me", auditor.auth)).body.id as string
      // root funds the player (ADMIN_ADJUST_BALANCE, actor root)
      const player = yield* fundedPlayer(client, "audited-player", 5_000)
      yield* TestClock.adjust(60_000)
      // a withdrawal (WITHDRAWAL_REQUESTED: no actor) root approves (WITHDRAWAL_PAYOUT_STARTED and WITHDRAWAL_APPROVED, actor root)
      const requestedWithdrawal = yield* client.post("/api/withdrawals/request", withdrawal(1_000), player.auth)
      expect(requestedWithdrawal.status).toBe(201)
      expect((yield* client.post(`/api/admin/withdrawals/${requestedWithdrawal.body.id}/approve`, undefined, root.auth)).status)
        .toBe(200)
      yield* TestClock.adjust(60_000)
      // the auditor confirms a deposit by hand (ADMIN_CONFIRM_DEPOSIT stored under the auditor) and bans the player
      const deposit = yield* initiateDeposit(client, player.auth, 2_000)
      expect((yield* client.post(`/api/admin/deposits/${deposit.depositId}/confirm`, undefined, auditor.auth)).status).toBe(200)
      yield* TestClock.adjust(60_000)
      expect((yield* client.post(`/api/admin/users/${player.id}/ban`, { reason: "audit test" }, auditor.auth)).status).toBe(200)

      const all = yield* client.get("/api/admin/audit", auditor.auth)
      expect(all.status).toBe(200)
      expect(all.body.page).toBe(1)
      expect(actionsOf(all.body)).toEqual([
        "USER_BANNED",
        "ADMIN_CONFIRM_DEPOSIT",
        "DEPOSIT_CONFIRMED",
        "WITHDRAWAL_APPROVED",
        "WITHDRAWAL_PAYOUT_STARTED",
        "WITHDRAWAL_REQUESTED",
        "ADMIN_ADJUST_BALANCE"
      ])
      expect(all.body.total).toBe(7)
      const [banned, confirmedByHand, confirmed, approved, started, requested, adjusted] = all.body.entries
      expect(banned).toEqual({
        id: expect.any(String),
        createdAt: iso(T0 + 180_000),
        action: "USER_BANNED",
        userId: player.id,
        actor: { id: auditorId, username: "auditor" },
        entityType: "User",
        entityId: player.id,
        metadata: { reason: "audit test", adminId: auditorId }
      })
      expect(confirmedByHand).toMatchObject({ userId: auditorId, actor: { id: auditorId, username: "auditor" }, entityType: "Deposit" })
      expect(confirmed).toMatchObject({ userId: player.id, actor: null, entityId: deposit.depositId })
      expect(approved).toMatchObject({ userId: player.id, actor: { id: rootId, username: "root" }, metadata: { adminId: rootId } })
      expect(started).toMatchObject({
        userId: player.id,
        actor: { id: rootId, username: "root" },
        entityType: "Withdrawal",
        entityId: requestedWithdrawal.body.id,
        metadata: { adminId: rootId, attempt: 1, amountCents: "1000" }
      })
      expect(requested).toMatchObject({ userId: player.id, actor: null, createdAt: iso(T0 + 60_000) })
      expect(adjusted).toMatchObject({ userId: player.id, actor: { id: rootId, username: "root" }, createdAt: iso(T0) })

      const get = (query: string) => Effect.map(client.get(`/api/admin/audit?${query}`, root.auth), (r) => {
        expect(r.status).toBe(200)
        return r.body
      })
      expect(actionsOf(yield* get("action=WITHDRAWAL_APPROVED"))).toEqual(["WITHDRAWAL_APPROVED"])
      expect(actionsOf(yield* get(`actorId=${auditorId}`))).toEqual(["USER_BANNED", "ADMIN_CONFIRM_DEPOSIT"])
      expect(actionsOf(yield* get(`actorId=${rootId}`))).toEqual(["WITHDRAWAL_APPROVED", "WITHDRAWAL_PAYOUT_STARTED", "ADMIN_ADJUST_BALANCE"])
      expect(actionsOf(yield* get(`userId=${auditorId}`))).toEqual(["ADMIN_CONFIRM_DEPOSIT"])
      expect((yield* get(`userId=${player.id}`)).total).toBe(6)
      expect(actionsOf(yield* get(`userId=${player.id}&action=USER_BANNED`))).toEqual(["USER_BANNED"])
      // from and to are inclusive, a date alone is UTC midnight, an offset is honoured
      expect(actionsOf(yield* get(`from=${iso(T0 + 60_000)}&to=${iso(T0 + 120_000)}`))).toEqual([
        "ADMIN_CONFIRM_DEPOSIT",
        "DEPOSIT_CONFIRMED",
        "WITHDRAWAL_APPROVED",
        "WITHDRAWAL_PAYOUT_STARTED",
        "WITHDRAWAL_REQUESTED"
      ])
      expect(actionsOf(yield* get(`from=${iso(T0 + 180_000)}`))).toEqual(["USER_BANNED"])
      expect(actionsOf(yield* get(`to=${iso(T0)}`))).toEqual(["ADMIN_ADJUST_BALANCE"])
      const day = iso(T0).slice(0, 10)
      expect((yield* get(`from=${day}`)).total).toBe(7)
      expect((yield* get(`to=${day}`)).total).toBe(0)
      const inSaoPaulo = iso(T0 + 180_000 - 3 * 3_600_000).slice(0, 19) + "-03:00"
      expect(actionsOf(yield* get(`from=${encodeURIComponent(inSaoPaulo)}`))).toEqual(["USER_BANNED"])
      // paging: a page beyond the end is empty with the total
      const second = yield* get("limit=4&page=2")
      expect(second).toMatchObject({ total: 7, page: 2 })
      expect(actionsOf(second)).toEqual(["WITHDRAWAL_PAYOUT_STARTED", "WITHDRAWAL_REQUESTED", "ADMIN_ADJUST_BALANCE"])
      expect(yield* get("limit=4&page=3")).toEqual({ entries: [], total: 7, page: 3 })
      expect(yield* get(`actorId=999999999`)).toEqual({ entries: [], total: 0, page: 1 })

      // A session id in metadata (it signs in) is shown as the session's reference.
      const sql = yield* SqlClient.SqlClient
      const alert = { sessionId: player.sessionId, originalIp: "203.0.113.9", newIp: "198.51.100.7" }
      yield* sql`INSERT INTO audit_logs (user_id, action, metadata, created_at)
                 VALUES (${player.id}, 'SUSPICIOUS_IP_CHANGE', ${JSON.stringify(alert)}::jsonb, ${new Date(T0 + 240_000)})`
      const changed = yield* get("action=SUSPICIOUS_IP_CHANGE")
      expect(changed.entries[0].metadata).toEqual({ ...alert, sessionId: sessionReference(player.sessionId) })
      expect(JSON.stringify(changed)).not.toContain(player.sessionId)
    }))

  it.scoped("a session an entry is about (DEVICE_MISMATCH's entityId, as Sessions records it) is shown by its reference", () =>
    Effect.gen(function*() {
      const client = yield* withAdmin
      const admin = yield* signIn(client, "root")
      const player = yield* signIn(client, "bound-player", { "x-device-id": "phone-A" })
      const playerId = (yield* client.get("/api/auth/me", player.auth)).body.id as string
      // Another device with the player's session: refused, and audited under the player with the session as entity.
      expect((yield* client.get("/api/auth/me", { ...player.auth, "x-device-id": "laptop-B" })).status).toBe(401)

      for (const path of ["/api/admin/audit?action=DEVICE_MISMATCH", `/api/admin/users/${playerId}/audit?action=DEVICE_MISMATCH`]) {
        const answer = yield* client.get(path, admin.auth)
        expect(answer.status).toBe(200)
        expect(answer.body.entries).toHaveLength(1)
        expect(answer.body.entries[0]).toMatchObject({
          action: "DEVICE_MISMATCH",
          userId: playerId,
          entityType: "Session",
          entityId: sessionReference(player.sessionId)
        })
        // The id itself signs in as the player: an administrator never reads it.
        expect(JSON.stringify(answer.body)).not.toContain(player.sessionId)
      }
    }))

  it.scoped("400 for bad parameters, 401 without a session, 403 for a player", () =>
    Effect.gen(function*() {
      const client = yield* withAdmin
      const admin = yield* signIn(client, "root")
      const player = yield* signIn(client, "curious-player")
      expect((yield* client.get("/api/admin/audit")).status).toBe(401)
      const refused = yield* client.get("/api/admin/audit", player.auth)
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual({ statusCode: 403, message: "Forbidden" })

      const bad = (query: string) => Effect.map(client.get(`/api/admin/audit?${query}`, admin.auth), (r) => {
        expect(r.status).toBe(400)
        expect(r.body).toMatchObject({ statusCode: 400 })
        return fieldsOf(r.body)
      })
      expect(yield* bad("limit=101")).toEqual(["limit"])
      expect(yield* bad("limit=0&page=0")).toEqual(["limit", "page"])
      expect(yield* bad("action=SOMETHING_ELSE")).toEqual(["action"])
      expect(yield* bad("actorId=abc&userId=-1")).toEqual(["actorId", "userId"])
      expect(yield* bad("from=yesterday")).toEqual(["from"])
      expect(yield* bad("to=2026-11-26T10:00:00")).toEqual(["to"]) // a date-time needs its time zone
      expect(yield* bad("from=2026-13-40")).toEqual(["from"])
      const backwards = yield* client.get("/api/admin/audit?from=2026-11-02&to=2026-11-01T23:59:59Z", admin.auth)
      expect(backwards.status).toBe(400)
      expect(backwards.body.errors).toEqual([{ field: "from", message: "must not be after to" }])
      expect((yield* client.get("/api/admin/audit?from=2026-11-02&to=2026-11-02", admin.auth)).status).toBe(200)
    }))

  it.scoped("10 000 users and 10 000 audit entries: the last page of each", () =>
    Effect.gen(function*() {
      const client = yield* withAdmin
      const admin = yield* signIn(client, "archivist")
      const adminId = (yield* client.get("/api/auth/me", admin.auth)).body.id as string
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        INSERT INTO users (idp_id, username, created_at, updated_at)
        SELECT 'seeded-' || n, 'seeded_' || n, timestamptz '2020-01-01' + n * interval '1 second', now()
        FROM generate_series(1, 10000) AS n`
      // Older than anything else in the log; every tenth names the administrator as its actor, and the fifth of
      // each ten the service (as an automatic payout under BR does).
      yield* sql`
        INSERT INTO audit_logs (user_id, action, entity_type, entity_id, metadata, created_at)
        SELECT u.id, CASE WHEN n % 10 = 0 THEN 'USER_BANNED' ELSE 'DEPOSIT_EXPIRED' END, 'User', u.id::text,
               CASE WHEN n % 10 = 0 THEN jsonb_build_object('n', n, 'adminId', ${adminId}::text)
                    WHEN n % 10 = 5 THEN jsonb_build_object('n', n, 'actor', 'system')
                    ELSE jsonb_build_object('n', n) END,
               timestamptz '1950-01-01' + n * interval '1 minute'
        FROM generate_series(1, 10000) AS n JOIN users u ON u.idp_id = 'seeded-' || n`

      const users = yield* client.get("/api/admin/users?limit=100", admin.auth)
      const usersTotal = users.body.total as number
      expect(usersTotal).toBeGreaterThanOrEqual(10_002)
      const lastUsers = Math.ceil(usersTotal / 100)
      const lastUserPage = yield* client.get(`/api/admin/users?limit=100&page=${lastUsers}`, admin.auth)
      expect(lastUserPage.status).toBe(200)
      const onLast = usersTotal - 100 * (lastUsers - 1)
      // Listed by id: the last page holds the last seeded users.
      expect(lastUserPage.body.users.map((u: { username: string }) => u.username))
        .toEqual(Array.from({ length: onLast }, (_, i) => `seeded_${10_000 - onLast + 1 + i}`))
      expect((yield* client.get(`/api/admin/users?limit=100&page=${lastUsers + 1}`, admin.auth)).body)
        .toEqual({ users: [], total: usersTotal, page: lastUsers + 1 })

      const log = yield* client.get("/api/admin/audit?limit=100", admin.auth)
      const logTotal = log.body.total as number
      expect(logTotal).toBeGreaterThanOrEqual(10_000)
      const lastLog = Math.ceil(logTotal / 100)
      const lastLogPage = yield* client.get(`/api/admin/audit?limit=100&page=${lastLog}`, admin.auth)
      const onLastLog = logTotal - 100 * (lastLog - 1)
      // Newest first: the last page holds the oldest entries, the first seeded ones, n descending to 1.
      expect(lastLogPage.body.entries.map((e: { metadata: { n: number } }) => e.metadata.n))
        .toEqual(Array.from({ length: onLastLog }, (_, i) => onLastLog - i))
      expect(lastLogPage.body.entries.at(-1)).toMatchObject({
        action: "DEPOSIT_EXPIRED",
        createdAt: "1950-01-01T00:01:00.000Z",
        actor: null,
        entityType: "User"
      })
      expect(lastLogPage.body.entries.find((e: { metadata: { n: number } }) => e.metadata.n === 5))
        .toMatchObject({ actor: "system", metadata: { actor: "system" } })

      // Filtered by actor: the 1 000 entries naming the administrator, the last page the oldest of them.
      const byActor = yield* client.get(`/api/admin/audit?actorId=${adminId}&limit=100&page=10`, admin.auth)
      expect(byActor.body.total).toBe(1_000)
      expect(byActor.body.entries.map((e: { metadata: { n: number } }) => e.metadata.n))
        .toEqual(Array.from({ length: 100 }, (_, i) => 1_000 - 10 * i))
      expect(byActor.body.entries[0].actor).toEqual({ id: adminId, username: "archivist" })
      const byAction = yield* client.get("/api/admin/audit?action=DEPOSIT_EXPIRED&limit=100&page=90", admin.auth)
      expect(byAction.body.total).toBe(9_000)
      expect(byAction.body.entries.at(-1).metadata.n).toBe(1)
      const window = yield* client.get("/api/admin/audit?from=1950-01-01T00:01:00Z&to=1950-01-01T00:10:00Z", admin.auth)
      expect(window.body.total).toBe(10)
    }))
})
