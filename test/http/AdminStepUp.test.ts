/**
 * Administrators' step-up 2FA on money actions (docs/rules.md#admin-step-up): adjust-balance, deposit confirm,
 * withdrawal approve and reject. A stolen administrator session alone moves no money: with 2FA on it needs a
 * code in X-2FA-Code, and production refuses administrators without 2FA.
 */
import { expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, TestClock } from "effect"
import { balanceOf, fundedPlayer } from "../support/GameFixtures"
import { initiateDeposit } from "../support/PaymentFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { TestStores } from "../support/TestStores"
import { codeNow, enableTwoFactor, healthyLedger, ledgerProblems, withdrawal } from "../support/WithdrawalFixtures"

const required = { statusCode: 400, error: "2FA_REQUIRED", message: "2FA code required" }
const invalid = { statusCode: 400, message: "Invalid 2FA code" }

const options = (production: boolean) => ({
  stores: TestStores,
  config: {
    production,
    adminIdpIds: ["root", "boss", "boss-2", "boss-3", "boss-4", "boss-5"],
    rateLimits: { ...testConfig.rateLimits, withdrawal: { count: 1000, windowMs: 60_000 } }
  }
})

/** The four money actions of an administrator, on fresh targets each time. */
const moneyActions = (client: TestClient, playerId: string, playerAuth: Record<string, string>) =>
  Effect.gen(function*() {
    const deposit = yield* initiateDeposit(client, playerAuth, 1_000)
    const toApprove = (yield* client.post("/api/withdrawals/request", withdrawal(1_000), playerAuth)).body.id
    const toReject = (yield* client.post("/api/withdrawals/request", withdrawal(1_000), playerAuth)).body.id
    return [
      (headers: Record<string, string>) =>
        client.post(`/api/admin/users/${playerId}/adjust-balance`, { amountCents: 500, reason: "goodwill" }, headers),
      (headers: Record<string, string>) => client.post(`/api/admin/deposits/${deposit.depositId}/confirm`, undefined, headers),
      (headers: Record<string, string>) => client.post(`/api/admin/withdrawals/${toApprove}/approve`, undefined, headers),
      (headers: Record<string, string>) => client.post(`/api/admin/withdrawals/${toReject}/reject`, { reason: "no" }, headers)
    ] as const
  })

/** Rows of a table, to show that a refused action wrote nothing. */
const countOf = (table: "items" | "cases" | "raffles" | "audit_logs") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: string }>`SELECT count(*)::text AS n FROM ${sql(table)}`)
    .pipe(Effect.map(([row]) => Number(row!.n)))

const put = (client: TestClient, path: string, body: unknown, headers: Record<string, string>) =>
  client.request(path, { method: "PUT", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })

/**
 * The report's bypass: the administrative actions that create value or lock people out besides the money
 * actions, on targets made beforehand (an item, a case, a player's pending deposit).
 */
const valueActions = (client: TestClient, setup: { itemId: string; caseId: string; playerId: string; externalId: string }) => {
  const { caseId, externalId, itemId, playerId } = setup
  const endsAt = new Date(1_800_000_000_000 + 86_400_000).toISOString()
  return [
    (h: Record<string, string>) =>
      client.post("/api/admin/items", { name: "Minted", rarity: "COVERT", valueCents: 9_000_000, imageUrl: "/m.png", isUpgradable: true }, h),
    (h: Record<string, string>) => put(client, `/api/admin/items/${itemId}`, { valueCents: 9_000_000 }, h),
    (h: Record<string, string>) =>
      client.post("/api/admin/cases", { name: "Gift", slug: "gift", imageUrl: "/g.png", priceCents: 1, promotional: true, items: [{ itemId }] }, h),
    (h: Record<string, string>) => put(client, `/api/admin/cases/${caseId}`, { priceCents: 1, promotional: true }, h),
    (h: Record<string, string>) => client.post("/api/admin/raffles", { itemId, ticketPriceCents: 1, maxTickets: 1, endsAt }, h),
    (h: Record<string, string>) => client.post(`/api/admin/users/${playerId}/ban`, { reason: "step-up test" }, h),
    (h: Record<string, string>) => client.post(`/api/admin/users/${playerId}/unban`, undefined, h),
    (h: Record<string, string>) => client.post("/api/live-drops/emit", { userId: playerId, itemId, source: "CASE_OPEN" }, h),
    (h: Record<string, string>) => client.post(`/api/sandbox/charges/${externalId}/pay`, undefined, h)
  ] as const
}

layer(TestDatabase)("administrators' step-up", (it) => {
  it.scoped("an administrator with 2FA needs X-2FA-Code on every money action: missing 400 2FA_REQUIRED, wrong 400, right 200", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(options(false))
      yield* TestClock.setTime(1_800_000_000_000)
      const player = yield* fundedPlayer(client, "stepped-up", 10_000)
      const boss = yield* signIn(client, "boss")
      const secret = yield* enableTwoFactor(client, boss.auth)
      const actions = yield* moneyActions(client, player.id, player.auth)
      const before = yield* balanceOf(client, player.auth)

      for (const action of actions) {
        expect((yield* action(boss.auth)).body).toEqual(required)
        expect((yield* action({ ...boss.auth, "x-2fa-code": "   " })).body).toEqual(required)
      }
      // Nothing moved.
      expect(yield* balanceOf(client, player.auth)).toBe(before)

      const statuses: Array<number> = []
      for (const action of actions) {
        statuses.push((yield* action({ ...boss.auth, "x-2fa-code": yield* codeNow(secret) })).status)
        yield* TestClock.adjust(30_000) // each code is good once
      }
      expect(statuses).toEqual([200, 200, 200, 200])
      // adjust +500, confirm +1000, the rejected withdrawal refunded +1000.
      expect(yield* balanceOf(client, player.auth)).toBe(before + 500 + 1_000 + 1_000)
      // A replayed code is a wrong code.
      const code = yield* codeNow(secret)
      const [adjust] = actions
      expect((yield* adjust({ ...boss.auth, "x-2fa-code": code })).status).toBe(200)
      expect((yield* adjust({ ...boss.auth, "x-2fa-code": code })).body).toEqual(invalid)
      // Reading is not a money action.
      expect((yield* client.get("/api/admin/withdrawals", boss.auth)).status).toBe(200)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("wrong step-up codes count towards the lock-out: the 5th locks the administrator's money actions (429)", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(options(false))
      yield* TestClock.setTime(1_800_000_000_000)
      const player = yield* fundedPlayer(client, "stepped-on", 10_000)
      const boss = yield* signIn(client, "boss-2")
      const secret = yield* enableTwoFactor(client, boss.auth)
      const [adjust] = yield* moneyActions(client, player.id, player.auth)
      for (const wrong of ["000001", "000002", "000003", "000004", "000005"]) {
        expect((yield* adjust({ ...boss.auth, "x-2fa-code": wrong })).body).toEqual(invalid)
      }
      const locked = yield* adjust({ ...boss.auth, "x-2fa-code": yield* codeNow(secret) })
      expect(locked.status).toBe(429)
      expect(locked.headers.get("retry-after")).toBe("900")
      expect(yield* balanceOf(client, player.auth)).toBe(10_000 - 2 * 1_000) // the two withdrawals requested

      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("production refuses money actions of an administrator without 2FA (403); with 2FA and a code they pass", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(options(true))
      yield* TestClock.setTime(1_800_000_000_000)
      // Funded by a direct grant: root has no 2FA and may not adjust balances in production.
      const player = yield* signIn(client, "prod-player")
      const me = (yield* client.get("/api/auth/me", player.auth)).body
      const boss = yield* signIn(client, "boss-3")
      const secret = yield* enableTwoFactor(client, boss.auth)
      const grant = yield* client.post(
        `/api/admin/users/${me.id}/adjust-balance`,
        { amountCents: 10_000, reason: "opening credit" },
        { ...boss.auth, "x-2fa-code": yield* codeNow(secret) }
      )
      expect(grant.status).toBe(200)
      yield* TestClock.adjust(30_000)

      const root = yield* signIn(client, "root")
      const actions = yield* moneyActions(client, me.id, player.auth)
      for (const action of actions) {
        const refused = yield* action(root.auth)
        expect(refused.status).toBe(403)
        expect(refused.body).toEqual({ statusCode: 403, message: "Administrators need 2FA enabled for money actions" })
      }
      expect(yield* balanceOf(client, player.auth)).toBe(8_000)
      expect((yield* client.get("/api/admin/withdrawals", root.auth)).status).toBe(200)
      const [adjust] = actions
      expect((yield* adjust({ ...boss.auth, "x-2fa-code": yield* codeNow(secret) })).status).toBe(200)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("the report's bypass: with 2FA on, item and case changes, raffles, bans, live drops and another's sandbox charge need X-2FA-Code too", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(options(false))
      yield* TestClock.setTime(1_800_000_000_000)
      const player = yield* fundedPlayer(client, "holder", 1_000)
      const boss = yield* signIn(client, "boss-4")
      const secret = yield* enableTwoFactor(client, boss.auth)
      const withCode = Effect.gen(function*() {
        const code = yield* codeNow(secret)
        yield* TestClock.adjust(30_000) // each code is good once
        return { ...boss.auth, "x-2fa-code": code }
      })
      const item = yield* client.post(
        "/api/admin/items",
        { name: "Knife", rarity: "COVERT", valueCents: 5_000, imageUrl: "/k.png", isUpgradable: true },
        yield* withCode
      )
      expect(item.status).toBe(201)
      const kase = yield* client.post(
        "/api/admin/cases",
        { name: "Knives", slug: "knives", imageUrl: "/k.png", priceCents: 10_000, items: [{ itemId: item.body.id }] },
        yield* withCode
      )
      expect(kase.status).toBe(201)
      const deposit = yield* initiateDeposit(client, player.auth, 2_000)
      const actions = valueActions(client, { itemId: item.body.id, caseId: kase.body.id, playerId: player.id, externalId: deposit.externalId })
      const counts = Effect.all([countOf("items"), countOf("cases"), countOf("raffles"), countOf("audit_logs")])
      const before = yield* counts

      for (const action of actions) {
        expect((yield* action(boss.auth)).body).toEqual(required)
      }
      // Nothing was written: no row, no audit, the item's value and the case's price as they were, the
      // player not banned, the deposit not paid.
      expect(yield* counts).toEqual(before)
      expect((yield* client.get(`/api/admin/cases/${kase.body.id}`, boss.auth)).body).toMatchObject({ priceCents: 10_000, promotional: false })
      expect((yield* client.get("/api/admin/items", boss.auth)).body.items).toContainEqual(expect.objectContaining({ id: item.body.id, valueCents: 5_000 }))
      expect((yield* client.get("/api/auth/me", player.auth)).status).toBe(200)
      expect(yield* balanceOf(client, player.auth)).toBe(1_000)

      const statuses: Array<number> = []
      for (const action of actions) statuses.push((yield* action(yield* withCode)).status)
      expect(statuses).toEqual([201, 200, 201, 200, 201, 200, 200, 200, 200])
      // The ban revoked the player's sessions; unbanned, they sign in again and find the deposit paid.
      const again = yield* signIn(client, "holder")
      expect(yield* balanceOf(client, again.auth)).toBe(3_000)
      // A player settling their own sandbox charge needs no code.
      const own = yield* initiateDeposit(client, again.auth, 500)
      expect((yield* client.post(`/api/sandbox/charges/${own.externalId}/pay`, undefined, again.auth)).status).toBe(200)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("a revaluation that pushes an active case over its house edge: a CRITICAL alert and an audit entry naming the case", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(options(false))
      const root = yield* signIn(client, "root")
      const item = (yield* client.post(
        "/api/admin/items",
        { name: "Cheap", rarity: "MIL_SPEC", valueCents: 100, imageUrl: "/c.png", isUpgradable: true },
        root.auth
      )).body
      const kase = (yield* client.post(
        "/api/admin/cases",
        { name: "Cheap case", slug: "cheap-case", imageUrl: "/c.png", priceCents: 1_000, items: [{ itemId: item.id }] },
        root.auth
      )).body
      expect((yield* put(client, `/api/admin/items/${item.id}`, { valueCents: 9_000_000 }, root.auth)).status).toBe(200)
      const alerts = (yield* client.get("/api/admin/dashboard/alerts", root.auth)).body
      expect(alerts.alerts ?? alerts).toContainEqual(expect.objectContaining({ id: `case-over-house-edge:${kase.id}`, level: "CRITICAL" }))
      const sql = yield* SqlClient.SqlClient
      const [audit] = yield* sql<{ metadata: string | Record<string, unknown> }>`
        SELECT metadata FROM audit_logs WHERE action = 'ITEM_UPDATED' AND entity_id = ${String(item.id)}`
      const metadata = typeof audit!.metadata === "string" ? JSON.parse(audit!.metadata) : audit!.metadata
      expect(metadata).toMatchObject({ previousValueCents: 100, valueCents: 9_000_000, casesPushedOverHouseEdge: [String(kase.id)] })
    }))

  it.scoped("production refuses the value actions of an administrator without 2FA (403)", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(options(true))
      yield* TestClock.setTime(1_800_000_000_000)
      const player = yield* signIn(client, "prod-holder")
      const me = (yield* client.get("/api/auth/me", player.auth)).body
      const root = yield* signIn(client, "root")
      const before = yield* Effect.all([countOf("items"), countOf("cases"), countOf("raffles")])
      const actions = valueActions(client, { itemId: "1", caseId: "1", playerId: me.id, externalId: "none" }).slice(0, 8)
      for (const action of actions) {
        expect((yield* action(root.auth)).body).toEqual({ statusCode: 403, message: "Administrators need 2FA enabled for money actions" })
      }
      expect(yield* Effect.all([countOf("items"), countOf("cases"), countOf("raffles")])).toEqual(before)
    }))
})
