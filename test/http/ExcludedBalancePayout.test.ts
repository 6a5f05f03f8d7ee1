/**
 * The payout of an excluded player's balance (docs/rules.md#excluded-players-balance, D23): the whole balance goes to
 * the key of the player's most recent COMPLETED withdrawal, through the automatic payout's path (actor `system`),
 * at most one unpaid at a time; Empty with a balance of 0, NoKey with no completed withdrawal. The dashboard's
 * `excluded-balance` alert (docs/rules.md#dashboard-alerts) names the listed players whose money is still with us.
 * Players are made and paid through the API under JURISDICTION=BR; the payout is asked of the Withdrawals service as
 * the registry check asks it, on the same database and stores as the app. Every scenario ends with balance = ledger.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, Layer, TestClock } from "effect"
import { AppConfig } from "../../src/layers/AppConfig"
import { Withdrawals } from "../../src/services/money/Withdrawals"
import type { UserId } from "../../src/schema/platform/Ids"
import { cpfOf } from "../support/Cpf"
import { balanceOf, fundedPlayer } from "../support/GameFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { makeTestGateway, type TestGatewayControl } from "../support/TestGateway"
import { TestStores } from "../support/TestStores"
import { healthyLedger, ledgerProblems, withdrawal } from "../support/WithdrawalFixtures"

/** The players are born in 1990: adults on the service's date (docs/rules.md#identity-verification). */
const NOW = Date.parse("2026-11-26T12:00:00Z")
const lifted = { count: 1000, windowMs: 60_000 }
const KEY = { pixKeyType: "EMAIL", pixKey: "own.key@example.com" }

/**
 * The app and, beside it, its Withdrawals service as another service of the app calls it: the same database, gateway
 * and stores (so the same user locks).
 */
const setUp = (gateway: TestGatewayControl) =>
  Effect.gen(function*() {
    const stores = yield* Layer.build(TestStores)
    const config = {
      ...testConfig,
      jurisdiction: "BR" as const,
      adminIdpIds: ["root"],
      rateLimits: { ...testConfig.rateLimits, withdrawal: lifted, global: lifted, auth: lifted }
    }
    const client = yield* makeTestClient({ stores: Layer.succeedContext(stores), gateway: gateway.layer, config })
    const database = yield* Effect.context<SqlClient.SqlClient>()
    const withdrawals = yield* Effect.provide(
      Withdrawals,
      Withdrawals.Default.pipe(Layer.provide(Layer.mergeAll(
        Layer.succeedContext(stores),
        gateway.layer,
        Layer.succeed(AppConfig, config),
        Layer.succeedContext(database)
      )))
    )
    const root = (yield* signIn(client, "root")).auth
    return { client, withdrawals, root }
  })

let cpfs = 0
/** A player with `balanceCents`, identity verified through the API (docs/rules.md#identity-required). */
const verifiedPlayer = (client: TestClient, login: string, balanceCents: number) =>
  Effect.gen(function*() {
    const player = yield* fundedPlayer(client, login, balanceCents)
    const verified = yield* client.post(
      "/api/users/me/identity",
      { cpf: cpfOf(String(482_000_000 + ++cpfs)), fullName: "Excluded Player", birthDate: "1990-01-01" },
      player.auth
    )
    expect(verified.status).toBe(200)
    return { ...player, userId: BigInt(player.id) as UserId }
  })

const request = (client: TestClient, auth: Record<string, string>, amountCents: number, key = KEY) =>
  Effect.map(client.post("/api/withdrawals/request", withdrawal(amountCents, key), auth), (r) => {
    expect(r.status).toBe(201)
    return r.body as { id: string; status: string }
  })

const WithdrawalRow = (id: string | bigint) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ userId: string; amountCents: string; status: string; pixKeyType: string; pixKey: string; pixKeyOwnerCpfMasked: string | null }>`
      SELECT user_id::text, amount_cents::text, status, pix_key_type, pix_key, pix_key_owner_cpf_masked
      FROM withdrawals WHERE id = ${id}`)
    .pipe(Effect.map((rows) => rows[0]!))

const withdrawalsOf = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string; status: string }>`SELECT id::text, status FROM withdrawals WHERE user_id = ${userId} ORDER BY id`)

const auditOf = (withdrawalId: string | bigint) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ action: string; metadata: unknown }>`
      SELECT action, metadata FROM audit_logs
      WHERE entity_type = 'Withdrawal' AND entity_id = ${String(withdrawalId)} ORDER BY id`)
    .pipe(Effect.map((rows) => rows.map((row) => ({
      action: row.action,
      metadata: typeof row.metadata === "string" ? JSON.parse(row.metadata) : row.metadata
    }))))

/** The registry's verdict, as its check stores it. */
const listInRegistry = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      sql`
        INSERT INTO responsible_gaming (user_id, registry_listed, registry_checked_at)
        VALUES (${userId}, true, ${new Date(now)})
        ON CONFLICT (user_id) DO UPDATE SET registry_listed = true, registry_checked_at = excluded.registry_checked_at`))

const excludedAlerts = (client: TestClient, root: Record<string, string>) =>
  Effect.map(client.get("/api/admin/dashboard/alerts", root), (r) => {
    expect(r.status).toBe(200)
    return (r.body.alerts as ReadonlyArray<{ id: string; level: string; title: string; message: string }>)
      .filter((alert) => alert.id.startsWith("excluded-balance"))
  })

layer(TestDatabase)("excluded player's balance", (it) => {
  it.scoped("the whole balance goes to the key of the last COMPLETED withdrawal, actor system, on the automatic payout's path", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const gateway = yield* makeTestGateway()
      const { client, withdrawals } = yield* setUp(gateway)
      const player = yield* verifiedPlayer(client, "excluded-paid", 250_000)
      // Paid out automatically to an older key, then to KEY; a later request to a third key waits (above the
      // automatic maximum) and is rejected: neither names the key.
      expect((yield* request(client, player.auth, 5_000, { pixKeyType: "EMAIL", pixKey: "older@example.com" })).status)
        .toBe("COMPLETED")
      yield* TestClock.adjust(60_000)
      const last = yield* request(client, player.auth, 5_000)
      expect(last.status).toBe("COMPLETED")
      yield* TestClock.adjust(60_000)
      const waiting = yield* request(client, player.auth, 150_000, { pixKeyType: "EMAIL", pixKey: "third@example.com" })
      expect(waiting.status).toBe("PENDING")
      const root = (yield* signIn(client, "root")).auth
      const rejected = yield* client.post(`/api/admin/withdrawals/${waiting.id}/reject`, { reason: "checking" }, root)
      expect(rejected.status).toBe(200)
      expect(yield* balanceOf(client, player.auth)).toBe(240_000)

      const outcome = yield* withdrawals.payOutExcludedBalance(player.userId)
      expect(outcome._tag).toBe("Started")
      const id = (outcome as { withdrawalId: bigint }).withdrawalId
      const row = yield* WithdrawalRow(id)
      const earlier = yield* WithdrawalRow(last.id)
      expect(row).toMatchObject({
        userId: player.id,
        amountCents: "240000",
        status: "COMPLETED",
        pixKeyType: KEY.pixKeyType,
        pixKey: KEY.pixKey,
        pixKeyOwnerCpfMasked: earlier.pixKeyOwnerCpfMasked
      })
      expect(earlier.pixKeyOwnerCpfMasked).toMatch(/^\*\*\*\.\d{3}\.\d{3}-\*\*$/)
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      const payouts = yield* gateway.payouts
      expect(payouts).toHaveLength(3)
      expect(payouts[2]).toMatchObject({ withdrawalId: id, amountCents: 240_000n, pixKeyType: "EMAIL", pixKey: KEY.pixKey })
      const audit = yield* auditOf(id)
      expect(audit.map((a) => a.action)).toEqual(["WITHDRAWAL_EXCLUDED_PAYOUT", "WITHDRAWAL_APPROVED"])
      expect(audit[0]!.metadata).toMatchObject({ actor: "system", amountCents: "240000", keyOfWithdrawal: last.id })
      expect(audit[1]!.metadata).toMatchObject({ actor: "system", by: "excluded" })
      const notices = (yield* client.get("/api/notifications", player.auth)).body.notifications as ReadonlyArray<{ type: string; message: string }>
      expect(notices.slice(0, 2).map((n) => n.type)).toEqual(["WITHDRAWAL_COMPLETED", "WITHDRAWAL_REQUESTED"])
      expect(notices[1]!.message).toContain("self-exclusion registry")

      // Paid out: nothing left, nothing more.
      expect(yield* withdrawals.payOutExcludedBalance(player.userId)).toEqual({ _tag: "Empty" })
      expect(yield* gateway.payouts).toHaveLength(3)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("twice, or twice at once, while the payout is unanswered: one withdrawal, one payout call; the owner cannot cancel it", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const gateway = yield* makeTestGateway()
      const { client, withdrawals } = yield* setUp(gateway)
      const player = yield* verifiedPlayer(client, "excluded-twice", 12_345)
      expect((yield* request(client, player.auth, 5_000)).status).toBe("COMPLETED")
      yield* gateway.timeOutPayouts({ paid: false })

      const [first, second] = yield* Effect.all(
        [withdrawals.payOutExcludedBalance(player.userId), withdrawals.payOutExcludedBalance(player.userId)],
        { concurrency: "unbounded" }
      )
      expect(first._tag).toBe("Started")
      expect(second).toEqual(first)
      const third = yield* withdrawals.payOutExcludedBalance(player.userId)
      expect(third).toEqual(first)
      const id = (first as { withdrawalId: bigint }).withdrawalId
      expect(yield* WithdrawalRow(id)).toMatchObject({ amountCents: "7345", status: "PROCESSING" })
      expect((yield* withdrawalsOf(player.id)).map((w) => w.status)).toEqual(["COMPLETED", "PROCESSING"])
      expect(yield* gateway.payouts).toHaveLength(2)
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      expect((yield* client.post(`/api/withdrawals/${id}/cancel`, undefined, player.auth)).status).toBe(409)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("NoKey without a COMPLETED withdrawal, Empty with a balance of 0; neither creates anything", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const gateway = yield* makeTestGateway()
      const { client, withdrawals } = yield* setUp(gateway)
      const never = yield* verifiedPlayer(client, "excluded-never-paid", 20_000)
      expect(yield* withdrawals.payOutExcludedBalance(never.userId)).toEqual({ _tag: "NoKey" })
      // A refused payout (PENDING, then rejected) is no "used" key either.
      yield* gateway.failPayouts("Invalid PIX key")
      const refused = yield* request(client, never.auth, 5_000)
      expect(refused.status).toBe("PENDING")
      const root = (yield* signIn(client, "root")).auth
      expect((yield* client.post(`/api/admin/withdrawals/${refused.id}/reject`, { reason: "bad key" }, root)).status).toBe(200)
      expect(yield* withdrawals.payOutExcludedBalance(never.userId)).toEqual({ _tag: "NoKey" })
      expect(yield* balanceOf(client, never.auth)).toBe(20_000)
      yield* gateway.failPayouts(undefined)

      const empty = yield* verifiedPlayer(client, "excluded-empty", 0)
      expect(yield* withdrawals.payOutExcludedBalance(empty.userId)).toEqual({ _tag: "Empty" })
      const spent = yield* verifiedPlayer(client, "excluded-spent", 5_000)
      expect((yield* request(client, spent.auth, 5_000)).status).toBe("COMPLETED")
      expect(yield* withdrawals.payOutExcludedBalance(spent.userId)).toEqual({ _tag: "Empty" })
      expect((yield* withdrawalsOf(never.id)).map((w) => w.status)).toEqual(["REJECTED"])
      expect(yield* withdrawalsOf(empty.id)).toEqual([])
      expect(yield* gateway.payouts).toHaveLength(2)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("the dashboard's excluded-balance alert: a listed player with a balance and no withdrawal under way, until paid out", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const gateway = yield* makeTestGateway()
      const { client, root, withdrawals } = yield* setUp(gateway)
      const noKey = yield* verifiedPlayer(client, "alert-no-key", 4_321)
      const withKey = yield* verifiedPlayer(client, "alert-with-key", 20_000)
      expect((yield* request(client, withKey.auth, 5_000)).status).toBe("COMPLETED")
      const unlisted = yield* verifiedPlayer(client, "alert-unlisted", 9_000)
      const listedEmpty = yield* verifiedPlayer(client, "alert-listed-empty", 0)
      const ours = <A extends { readonly id: string }>(alerts: ReadonlyArray<A>) =>
        alerts.filter((a) => [noKey, withKey, unlisted, listedEmpty].some((p) => a.id === `excluded-balance:${p.id}`))
      expect(ours(yield* excludedAlerts(client, root))).toEqual([])

      yield* listInRegistry(noKey.id)
      yield* listInRegistry(withKey.id)
      yield* listInRegistry(listedEmpty.id)
      const alerts = ours(yield* excludedAlerts(client, root))
      expect(alerts.map((a) => a.id)).toEqual([`excluded-balance:${noKey.id}`, `excluded-balance:${withKey.id}`])
      expect(alerts[0]).toMatchObject({ level: "WARNING" })
      expect(alerts[0]!.message).toContain(`User ${noKey.id}`)
      expect(alerts[0]!.message).toContain("R$ 43.21")
      expect(alerts[0]!.message).toContain("own account")

      // The one with a key is paid out (its withdrawal under way hides the alert, a balance of 0 ends it);
      // the one without stays for an administrator.
      yield* gateway.timeOutPayouts({ paid: false })
      expect((yield* withdrawals.payOutExcludedBalance(withKey.userId))._tag).toBe("Started")
      expect(ours(yield* excludedAlerts(client, root)).map((a) => a.id)).toEqual([`excluded-balance:${noKey.id}`])
      expect(yield* withdrawals.payOutExcludedBalance(noKey.userId)).toEqual({ _tag: "NoKey" })
      expect(ours(yield* excludedAlerts(client, root)).map((a) => a.id)).toEqual([`excluded-balance:${noKey.id}`])
      // The administrator pays it out off-platform and brings the balance to 0 (docs/operations.md#excluded-balance-alert).
      const adjusted = yield* client.post(
        `/api/admin/users/${noKey.id}/adjust-balance`,
        { amountCents: -4_321, reason: "excluded balance paid to the player's own account" },
        root
      )
      expect(adjusted.status).toBe(200)
      expect(ours(yield* excludedAlerts(client, root))).toEqual([])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))
})
