/**
 * How a withdrawal ended, told to its owner (docs/rules.md#withdrawal-outcome-notifications) through the public
 * API, on the stores and database of the run: WITHDRAWAL_COMPLETED (approval, payout event, reconciliation),
 * WITHDRAWAL_REJECTED with the administrator's reason, WITHDRAWAL_FAILED with the refund; each stored and
 * pushed exactly once however often the gateway repeats itself or an administrator reconciles.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { balanceOf, fundedPlayer } from "../support/GameFixtures"
import { gatewayCall } from "../support/PaymentFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestAppOptions, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { makeTestGateway, type TestGatewayControl } from "../support/TestGateway"
import { TestStores } from "../support/TestStores"
import { healthyLedger, ledgerProblems, withdrawal } from "../support/WithdrawalFixtures"

const NOW = 1_800_000_000_000
const lifted = { count: 1000, windowMs: 60_000 }

const appOptions = (extra: TestAppOptions = {}): TestAppOptions => ({
  stores: TestStores,
  ...extra,
  config: { adminIdpIds: ["root"], rateLimits: { ...testConfig.rateLimits, withdrawal: lifted } }
})

const emailKey = { pixKeyType: "EMAIL", pixKey: "Maria.Silva@example.com" }
const cpfKey = { pixKeyType: "CPF", pixKey: "529.982.247-25" }
const OUTCOMES = ["WITHDRAWAL_COMPLETED", "WITHDRAWAL_REJECTED", "WITHDRAWAL_FAILED"]

interface Listed {
  readonly type: string
  readonly title: string
  readonly message: string
  readonly read: boolean
}

/** The user's notifications of how a withdrawal ended, oldest first. */
const outcomes = (client: TestClient, auth: Record<string, string>) =>
  Effect.map(
    client.get("/api/notifications?limit=100", auth),
    (r) => (r.body.notifications as ReadonlyArray<Listed>).filter((n) => OUTCOMES.includes(n.type)).reverse()
  )

/** A player with `balance` and a PENDING withdrawal of `amount` to `key`, and an administrator. */
const pendingWithdrawal = (client: TestClient, login: string, balance: number, amount: number, key = emailKey) =>
  Effect.gen(function*() {
    const player = yield* fundedPlayer(client, login, balance)
    const root = (yield* signIn(client, "root")).auth
    const requested = yield* client.post("/api/withdrawals/request", withdrawal(amount, key), player.auth)
    expect(requested.status).toBe(201)
    return { player, root, id: requested.body.id as string }
  })

/** Approve while the gateway does not answer: the withdrawal stays PROCESSING, its owner told nothing yet. */
const approveUnanswered = (client: TestClient, gateway: TestGatewayControl, root: Record<string, string>, id: string, paid: boolean) =>
  Effect.gen(function*() {
    yield* gateway.timeOutPayouts({ paid })
    const approved = yield* client.post(`/api/admin/withdrawals/${id}/approve`, undefined, root)
    yield* gateway.timeOutPayouts(undefined)
    expect(approved.body).toMatchObject({ status: "PROCESSING" })
  })

const payoutEvent = (event: "payout.paid" | "payout.failed", withdrawalId: string, extra: Record<string, string> = {}) => ({
  event,
  data: { id: `po_gw_${withdrawalId}`, reference: `withdrawal-${withdrawalId}`, ...extra }
})

/** The user's realtime stream, read until `until` has been seen `times` times; returns everything read. */
const openStream = (client: TestClient, auth: Record<string, string>) =>
  Effect.gen(function*() {
    const reader = (yield* client.open("/api/realtime", { headers: auth })).body!.getReader()
    yield* Effect.promise(() => reader.read())
    const decoder = new TextDecoder()
    let text = ""
    const readUntil = (until: string, times = 1) =>
      Effect.promise(async () => {
        while (text.split(until).length - 1 < times) text += decoder.decode((await reader.read()).value)
        return text
      })
    return { readUntil, close: Effect.promise(() => reader.cancel()) }
  })

/** How many `notification` events of `type` a stream's text holds. */
const pushedCount = (text: string, type: string) =>
  text.split("event: notification").filter((event) => event.includes(`"type":"${type}"`)).length

layer(TestDatabase)("withdrawal outcome notifications", (it) => {
  it.scoped("approved and paid: WITHDRAWAL_COMPLETED with the amount and masked key, stored and pushed once", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const { id, player, root } = yield* pendingWithdrawal(client, "paid-out", 20_000, 12_345)
      const stream = yield* openStream(client, player.auth)
      expect(yield* outcomes(client, player.auth)).toEqual([])

      expect((yield* client.post(`/api/admin/withdrawals/${id}/approve`, undefined, root)).body.status).toBe("COMPLETED")
      const told = yield* outcomes(client, player.auth)
      expect(told).toEqual([{
        id: expect.any(String),
        type: "WITHDRAWAL_COMPLETED",
        title: "Withdrawal completed",
        message: "Your withdrawal of R$ 123.45 to the PIX key (EMAIL) m***@example.com was paid out.",
        read: false,
        createdAt: expect.any(String)
      }])
      expect(JSON.stringify(told)).not.toContain("silva")

      // The gateway's own word afterwards, and a reconciliation: already COMPLETED, nothing told again.
      expect((yield* gatewayCall(client, payoutEvent("payout.paid", id))).body).toEqual({ received: true })
      expect((yield* client.post(`/api/admin/withdrawals/${id}/reconcile`, undefined, root)).status).toBe(400)
      expect(yield* outcomes(client, player.auth)).toHaveLength(1)

      // Pushed as it happened, once: a later request's push comes after it and nothing else.
      expect((yield* client.post("/api/withdrawals/request", withdrawal(1_000), player.auth)).status).toBe(201)
      const pushed = yield* stream.readUntil("WITHDRAWAL_REQUESTED")
      yield* stream.close
      expect(pushedCount(pushed, "WITHDRAWAL_COMPLETED")).toBe(1)
      expect(pushed).toContain("R$ 123.45 to the PIX key (EMAIL) m***@example.com was paid out.")
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("a payout that looked refused, then paid by the gateway's event: WITHDRAWAL_COMPLETED once", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      const { id, player, root } = yield* pendingWithdrawal(client, "paid-late", 5_000, 5_000)
      yield* gateway.failPayouts("Destination bank timeout")
      expect((yield* client.post(`/api/admin/withdrawals/${id}/approve`, undefined, root)).status).toBe(502)
      yield* gateway.failPayouts(undefined)
      // Back to PENDING: nothing ended, nothing told.
      expect(yield* outcomes(client, player.auth)).toEqual([])
      expect((yield* gatewayCall(client, payoutEvent("payout.paid", id))).status).toBe(200)
      expect((yield* outcomes(client, player.auth)).map((n) => [n.type, n.message])).toEqual([
        ["WITHDRAWAL_COMPLETED", "Your withdrawal of R$ 50.00 to the PIX key (EMAIL) m***@example.com was paid out."]
      ])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("rejected: WITHDRAWAL_REJECTED with the administrator's reason and the refund; rejecting again tells nothing", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const { id, player, root } = yield* pendingWithdrawal(client, "refused", 30_000, 25_000, cpfKey)
      const stream = yield* openStream(client, player.auth)
      const reason = "The PIX key belongs to another person"
      const rejected = yield* client.post(`/api/admin/withdrawals/${id}/reject`, { reason }, root)
      expect(rejected.body).toMatchObject({ status: "REJECTED", rejectionReason: reason })
      expect(yield* balanceOf(client, player.auth)).toBe(30_000)

      const again = yield* client.post(`/api/admin/withdrawals/${id}/reject`, { reason: "Once more" }, root)
      expect(again.body).toEqual({ statusCode: 400, message: "Withdrawal is not pending" })
      expect((yield* outcomes(client, player.auth)).map(({ message, title, type }) => ({ type, title, message }))).toEqual([{
        type: "WITHDRAWAL_REJECTED",
        title: "Withdrawal rejected",
        message: "Your withdrawal of R$ 250.00 to the PIX key (CPF) ***.982.247-** was rejected, and R$ 250.00 was " +
          "returned to your balance. Reason: The PIX key belongs to another person"
      }])

      const pushed = yield* stream.readUntil("WITHDRAWAL_REJECTED")
      yield* stream.close
      expect(pushed).toContain(`Reason: ${reason}`)
      expect(pushed).not.toContain("52998224725")
      // The owner's own cancellation is not announced to them.
      const cancelled = yield* client.post("/api/withdrawals/request", withdrawal(1_000), player.auth)
      expect((yield* client.post(`/api/withdrawals/${cancelled.body.id}/cancel`, undefined, player.auth)).status).toBe(200)
      expect(yield* outcomes(client, player.auth)).toHaveLength(1)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("payout.failed: WITHDRAWAL_FAILED saying the money was returned; replayed, re-sent and concurrent events tell once", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      yield* TestClock.setTime(NOW)
      const { id, player, root } = yield* pendingWithdrawal(client, "bounced", 20_000, 15_000)
      yield* approveUnanswered(client, gateway, root, id, false)
      expect(yield* outcomes(client, player.auth)).toEqual([])
      const stream = yield* openStream(client, player.auth)

      const failed = payoutEvent("payout.failed", id, { failReason: "Receiving bank offline" })
      // The same signed event replayed, the gateway sending it anew (new timestamps: new events), all at once.
      const seconds = NOW / 1000
      const answers = yield* Effect.all([
        gatewayCall(client, failed, { timestamp: seconds }),
        gatewayCall(client, failed, { timestamp: seconds }),
        gatewayCall(client, failed, { timestamp: seconds + 1 }),
        gatewayCall(client, failed, { timestamp: seconds + 2 }),
        gatewayCall(client, failed)
      ], { concurrency: "unbounded" })
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200])
      expect((yield* gatewayCall(client, failed, { timestamp: seconds })).body).toEqual({ received: true, duplicate: true })
      expect((yield* gatewayCall(client, failed, { timestamp: seconds + 3 })).body).toEqual({ received: true })
      expect(yield* balanceOf(client, player.auth)).toBe(20_000)

      expect((yield* outcomes(client, player.auth)).map(({ message, title, type }) => ({ type, title, message }))).toEqual([{
        type: "WITHDRAWAL_FAILED",
        title: "Withdrawal failed",
        message: "Your withdrawal of R$ 150.00 to the PIX key (EMAIL) m***@example.com could not be paid out, and " +
          "R$ 150.00 was returned to your balance. Reason: Receiving bank offline"
      }])
      expect((yield* client.post("/api/withdrawals/request", withdrawal(1_000), player.auth)).status).toBe(201)
      const pushed = yield* stream.readUntil("WITHDRAWAL_REQUESTED")
      yield* stream.close
      expect(pushedCount(pushed, "WITHDRAWAL_FAILED")).toBe(1)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("payout.paid replayed and re-sent at once: WITHDRAWAL_COMPLETED once", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      yield* TestClock.setTime(NOW)
      const { id, player, root } = yield* pendingWithdrawal(client, "paid-twice", 10_000, 10_000)
      yield* approveUnanswered(client, gateway, root, id, true)
      const paid = payoutEvent("payout.paid", id)
      const seconds = NOW / 1000
      const answers = yield* Effect.all(
        [seconds, seconds, seconds + 1, seconds + 2].map((timestamp) => gatewayCall(client, paid, { timestamp })),
        { concurrency: "unbounded" }
      )
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200])
      expect((yield* outcomes(client, player.auth)).map((n) => n.type)).toEqual(["WITHDRAWAL_COMPLETED"])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("reconciliation: paid or failed at the gateway, reconciled twice at once and again: one notification each", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      const player = yield* fundedPlayer(client, "reconciled", 50_000)
      const root = (yield* signIn(client, "root")).auth
      const ids = [] as Array<string>
      for (const paid of [true, false]) {
        const requested = yield* client.post("/api/withdrawals/request", withdrawal(10_000, cpfKey), player.auth)
        ids.push(requested.body.id)
        yield* approveUnanswered(client, gateway, root, requested.body.id, paid)
      }
      const [paid, failed] = ids as [string, string]
      yield* gateway.answerPayoutStatus(BigInt(failed), { _tag: "Failed", reason: "Account closed" })
      const reconcile = (id: string) => client.post(`/api/admin/withdrawals/${id}/reconcile`, undefined, root)

      const answers = yield* Effect.all([reconcile(paid), reconcile(paid), reconcile(failed), reconcile(failed)], {
        concurrency: "unbounded"
      })
      for (const answer of answers) expect(answer.status === 200 || answer.status === 400).toBe(true)
      expect((yield* reconcile(paid)).body).toEqual({ statusCode: 400, message: "Withdrawal is not processing" })
      expect((yield* reconcile(failed)).body).toEqual({ statusCode: 400, message: "Withdrawal is not processing" })

      expect((yield* outcomes(client, player.auth)).map((n) => [n.type, n.message]).sort()).toEqual([
        ["WITHDRAWAL_COMPLETED", "Your withdrawal of R$ 100.00 to the PIX key (CPF) ***.982.247-** was paid out."],
        [
          "WITHDRAWAL_FAILED",
          "Your withdrawal of R$ 100.00 to the PIX key (CPF) ***.982.247-** could not be paid out, and R$ 100.00 " +
          "was returned to your balance. Reason: Account closed"
        ]
      ])
      expect(yield* balanceOf(client, player.auth)).toBe(40_000)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))
})
