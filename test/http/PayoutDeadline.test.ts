/**
 * The payout deadline under JURISDICTION=BR (docs/rules.md#payout-deadline): unpaid withdrawals older than 60 minutes
 * are at risk (a WARNING alert), older than 100 minutes about to miss the 120-minute deadline (CRITICAL); the
 * dashboard's financial block counts them. Without the jurisdiction the dashboard answers as SPEC says.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { fundedPlayer } from "../support/GameFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { withdrawal } from "../support/WithdrawalFixtures"

const MINUTE = 60_000
const config = {
  adminIdpIds: ["root"],
  rateLimits: { ...testConfig.rateLimits, withdrawal: { count: 1_000, windowMs: 60_000 } }
}

layer(TestDatabase)("payout deadline", (it) => {
  it.scoped("unpaid withdrawals past 60 and 100 minutes: payoutsAtRisk, the oldest's minutes and the alert's level; NONE shows none of it", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_800_000_000_000)
      // The requests are made where no identity is needed; the same database is then read under BR.
      const none = yield* makeTestClient({ config })
      const player = yield* fundedPlayer(none, "payee", 10_000)
      const request = Effect.gen(function*() {
        const answer = yield* none.post("/api/withdrawals/request", withdrawal(1_000), player.auth)
        expect(answer.status).toBe(201)
        return answer.body.id as string
      })
      const br = yield* makeTestClient({ config: { ...config, jurisdiction: "BR" } })
      const admin = yield* signIn(br, "root")
      const financial = Effect.map(br.get("/api/admin/dashboard", admin.auth), (r) => r.body.financial)
      const deadlineAlert = Effect.map(
        br.get("/api/admin/dashboard/alerts", admin.auth),
        (r) => (r.body.alerts as ReadonlyArray<{ id: string; level: string; message: string }>).find((a) => a.id === "payout-deadline")
      )

      expect(yield* financial).toMatchObject({ payoutsAtRisk: 0, oldestPendingPayoutMinutes: null })
      const first = yield* request
      yield* TestClock.adjust(30 * MINUTE)
      yield* request
      yield* TestClock.adjust(30 * MINUTE - 1)
      // 59:59.999 after the first request: not yet at risk.
      expect(yield* financial).toMatchObject({ payoutsAtRisk: 0, oldestPendingPayoutMinutes: 59 })
      expect(yield* deadlineAlert).toBeUndefined()

      yield* TestClock.adjust(1)
      expect(yield* financial).toMatchObject({ payoutsAtRisk: 1, oldestPendingPayoutMinutes: 60 })
      expect(yield* deadlineAlert).toMatchObject({ level: "WARNING" })

      yield* TestClock.adjust(40 * MINUTE)
      expect(yield* financial).toMatchObject({ payoutsAtRisk: 2, oldestPendingPayoutMinutes: 100 })
      const critical = yield* deadlineAlert
      expect(critical).toMatchObject({ level: "CRITICAL" })
      expect(critical!.message).toContain("2 withdrawals unpaid for more than 60 minutes, 1 for more than 100")

      // Paid, it is no longer at risk.
      expect((yield* br.post(`/api/admin/withdrawals/${first}/approve`, undefined, admin.auth)).status).toBe(200)
      expect(yield* financial).toMatchObject({ payoutsAtRisk: 1, oldestPendingPayoutMinutes: 70 })
      expect(yield* deadlineAlert).toMatchObject({ level: "WARNING" })

      // Under NONE: neither the figures nor the alert.
      const noneAdmin = yield* signIn(none, "root")
      const plain = (yield* none.get("/api/admin/dashboard", noneAdmin.auth)).body.financial
      expect(plain).not.toHaveProperty("payoutsAtRisk")
      expect(plain).not.toHaveProperty("oldestPendingPayoutMinutes")
      const alerts = (yield* none.get("/api/admin/dashboard/alerts", noneAdmin.auth)).body.alerts as ReadonlyArray<{ id: string }>
      expect(alerts.map((a) => a.id)).not.toContain("payout-deadline")
    }))
})
