/**
 * Administrators' step-up 2FA on money actions (docs/rules.md#admin-step-up): adjust-balance, deposit confirm,
 * withdrawal approve and reject. A stolen administrator session alone moves no money: with 2FA on it needs a
 * code in X-2FA-Code, and production refuses administrators without 2FA.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { fundedPlayer } from "../support/GameFixtures"
import { initiateDeposit } from "../support/PaymentFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { TestStores } from "../support/TestStores"
import { balanceOf, codeNow, enableTwoFactor, healthyLedger, ledgerProblems, withdrawal } from "../support/WithdrawalFixtures"

const required = { statusCode: 400, error: "2FA_REQUIRED", message: "2FA code required" }
const invalid = { statusCode: 400, message: "Invalid 2FA code" }

const options = (production: boolean) => ({
  stores: TestStores,
  config: {
    production,
    adminIdpIds: ["root", "boss", "boss-2", "boss-3"],
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
})
