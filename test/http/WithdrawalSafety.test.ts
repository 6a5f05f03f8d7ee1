/**
 * Withdrawal safety (docs/rules.md#withdrawal-2fa) through the public API, on the stores the service runs with
 * (Redis when REDIS_URL is set) and the database of the run (PostgreSQL when DATABASE_URL is set): the rolling
 * 24-hour 2FA threshold and the new-key rule, the notification of every request, the 2FA lock-out
 * reached through withdrawals, and payouts whose outcome is not known (PROCESSING, payout events,
 * reconciliation). Every scenario ends with balance = ledger.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Ref, TestClock } from "effect"
import { Stores } from "../../src/layers/stores/Stores"
import { WithdrawalCheckpoint } from "../../src/services/money/Withdrawals"
import { balanceOf, fundedPlayer } from "../support/GameFixtures"
import { gatewayCall } from "../support/PaymentFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestAppOptions, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { makeTestGateway, type TestGatewayControl } from "../support/TestGateway"
import { TestStores } from "../support/TestStores"
import { codeNow, enableTwoFactor, healthyLedger, ledgerProblems, withdrawal } from "../support/WithdrawalFixtures"

const HOUR = 60 * 60_000
const lifted = { count: 1000, windowMs: 60_000 }

const appOptions = (extra: TestAppOptions = {}): TestAppOptions => ({
  stores: TestStores,
  ...extra,
  config: {
    adminIdpIds: ["root"],
    rateLimits: { ...testConfig.rateLimits, withdrawal: lifted, twoFactorVerify: lifted, twoFactorDisable: lifted },
    ...extra.config
  }
})

const adminToken = { authorization: "Bearer test-admin-token" }
const key = { pixKeyType: "EMAIL", pixKey: "saver@example.com" }
const otherKey = { pixKeyType: "CPF", pixKey: "529.982.247-25" }
const required = { statusCode: 400, error: "2FA_REQUIRED", message: "2FA code required" }

const request = (client: TestClient, auth: Record<string, string>, amountCents: number, details = key, extra = {}) =>
  client.post("/api/withdrawals/request", withdrawal(amountCents, details, extra), auth)

/**
 * A first withdrawal to `details` with a code, paid out: from then on the key is known
 * (docs/rules.md#withdrawal-2fa).
 */
const payOutOnce = (client: TestClient, auth: Record<string, string>, secret: string, root: Record<string, string>, details = key) =>
  Effect.gen(function*() {
    const first = yield* request(client, auth, 1_000, details, { twoFactorCode: yield* codeNow(secret) })
    expect(first.status).toBe(201)
    yield* TestClock.adjust(30_000) // the next code is a fresh step
    const approved = yield* client.post(`/api/admin/withdrawals/${first.body.id}/approve`, undefined, root)
    expect(approved.body.status).toBe("COMPLETED")
    return first.body.id as string
  })

/**
 * A checkpoint (between a request's first 2FA check and its transaction) that, once armed, holds every
 * request there until `parties` of them have arrived: they all pass the first check before any commits.
 */
const makeRendezvous = (parties: number) =>
  Effect.gen(function*() {
    const armed = yield* Ref.make(false)
    const arrived = yield* Ref.make(0)
    const everyone = yield* Deferred.make<void>()
    const checkpoint = Effect.gen(function*() {
      if (!(yield* Ref.get(armed))) return
      if ((yield* Ref.updateAndGet(arrived, (n) => n + 1)) === parties) yield* Deferred.succeed(everyone, undefined)
      yield* Deferred.await(everyone)
    })
    return { layer: Layer.succeed(WithdrawalCheckpoint, checkpoint), arm: Ref.set(armed, true), arrived: Ref.get(arrived) }
  })

const auditActions = (withdrawalId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ action: string }>`SELECT action FROM audit_logs WHERE entity_type = 'Withdrawal' AND entity_id = ${withdrawalId} ORDER BY id`
  ).pipe(Effect.map((rows) => rows.map((r) => r.action)))

const deliveriesOf = (withdrawalId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ event: string }>`
      SELECT event FROM webhook_deliveries WHERE payload::jsonb -> 'data' ->> 'withdrawalId' = ${withdrawalId}`)

const payoutEvent = (event: "payout.paid" | "payout.failed", withdrawalId: string, extra: Record<string, string> = {}) => ({
  event,
  data: { id: `po_gw_${withdrawalId}`, reference: `withdrawal-${withdrawalId}`, ...extra }
})

const adminView = (client: TestClient, root: Record<string, string>, id: string) =>
  Effect.map(client.get("/api/admin/withdrawals?limit=100", root), (r) => r.body.withdrawals.find((w: any) => w.id === id))

/** A player with `balance`, a PENDING withdrawal of `amount`, and an administrator. */
const pendingWithdrawal = (client: TestClient, login: string, balance: number, amount: number) =>
  Effect.gen(function*() {
    const player = yield* fundedPlayer(client, login, balance)
    const root = (yield* signIn(client, "root")).auth
    const requested = yield* request(client, player.auth, amount)
    expect(requested.status).toBe(201)
    return { player, root, id: requested.body.id as string }
  })

/** Approve while the gateway does not answer: the withdrawal stays PROCESSING. */
const approveUnanswered = (client: TestClient, gateway: TestGatewayControl, root: Record<string, string>, id: string, paid: boolean) =>
  Effect.gen(function*() {
    yield* gateway.timeOutPayouts({ paid })
    const approved = yield* client.post(`/api/admin/withdrawals/${id}/approve`, undefined, root)
    yield* gateway.timeOutPayouts(undefined)
    expect(approved.status).toBe(200)
    expect(approved.body).toMatchObject({
      status: "PROCESSING",
      processedAt: null,
      payoutId: null,
      payoutInProgress: true,
      payoutError: expect.stringContaining("No answer from the gateway")
    })
    return approved
  })

layer(TestDatabase)("withdrawal safety", (it) => {
  it.scoped("the report's drain: with 2FA on, five 10000-cent withdrawals to a new key in a second move nothing without a code", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      yield* TestClock.setTime(1_800_000_000_000)
      const victim = yield* fundedPlayer(client, "drained", 50_000)
      yield* enableTwoFactor(client, victim.auth)
      const attempts = yield* Effect.forEach(Array.from({ length: 5 }), () => request(client, victim.auth, 10_000, otherKey))
      for (const attempt of attempts) expect(attempt.body).toEqual(required)
      expect(yield* balanceOf(client, victim.auth)).toBe(50_000)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("a known key: 10000 cents a rolling 24 hours without a code; PENDING, PROCESSING and COMPLETED count, refunded ones do not", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      yield* TestClock.setTime(1_800_000_000_000)
      const player = yield* fundedPlayer(client, "rolling", 100_000)
      const root = (yield* signIn(client, "root")).auth
      const secret = yield* enableTwoFactor(client, player.auth)
      yield* payOutOnce(client, player.auth, secret, root) // 1000 cents, COMPLETED
      // 1000 (completed) + 9000 = 10000: exactly the threshold needs no code; one cent more would.
      const a = yield* request(client, player.auth, 4_000)
      expect(a.status).toBe(201)
      const b = yield* request(client, player.auth, 5_000)
      expect(b.status).toBe(201)
      expect((yield* request(client, player.auth, 1_000)).body).toEqual(required)
      // Split into many small ones changes nothing: the sum counts.
      expect((yield* request(client, player.auth, 1_000, key)).body).toEqual(required)
      // A PROCESSING one still counts; a cancelled one does not.
      yield* gateway.timeOutPayouts({ paid: false })
      expect((yield* client.post(`/api/admin/withdrawals/${b.body.id}/approve`, undefined, root)).body.status).toBe("PROCESSING")
      yield* gateway.timeOutPayouts(undefined)
      expect((yield* request(client, player.auth, 1_000)).body).toEqual(required)
      expect((yield* client.post(`/api/withdrawals/${a.body.id}/cancel`, undefined, player.auth)).status).toBe(200)
      yield* TestClock.adjust(60_000)
      const afterCancel = yield* request(client, player.auth, 4_000)
      expect(afterCancel.status).toBe(201)

      // The first (1000, at start + 30 s) is 24 h minus a second old: everything still counts.
      const start = 1_800_000_000_000
      yield* TestClock.setTime(start + 30_000 + 24 * HOUR - 1_000)
      expect((yield* request(client, player.auth, 1_000)).body).toEqual(required)
      // 24 h after a and b (start + 60 s) they no longer count; afterCancel (4000, a minute younger) still does.
      yield* TestClock.setTime(start + 60_000 + 24 * HOUR)
      expect((yield* request(client, player.auth, 7_000)).body).toEqual(required)
      yield* TestClock.setTime(start + 120_000 + 24 * HOUR)
      expect((yield* request(client, player.auth, 10_000)).status).toBe(201)
      // A new key always needs a code, whatever the amount.
      expect((yield* request(client, player.auth, 1_000, otherKey)).body).toEqual(required)
      const withCode = yield* request(client, player.auth, 1_000, otherKey, { twoFactorCode: yield* codeNow(secret) })
      expect(withCode.status).toBe(201)
      // Requested but never paid out there: the key is still new.
      yield* TestClock.adjust(24 * HOUR)
      expect((yield* request(client, player.auth, 1_000, otherKey)).body).toEqual(required)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("two instances that do not share a lock: of two requests without a code that together pass 10000 cents, the re-check in the transaction refuses one", () =>
    Effect.gen(function*() {
      const rendezvous = yield* makeRendezvous(2)
      // Each instance has in-memory stores of its own, so its user lock does not see the other's; the
      // checkpoint rides along with them.
      const instance = () => makeTestClient(appOptions({ stores: Layer.merge(Stores.memory, rendezvous.layer) }))
      const one = yield* instance()
      const two = yield* instance()
      yield* TestClock.setTime(1_800_000_000_000)
      const player = yield* fundedPlayer(one, "two-places", 50_000)
      const root = (yield* signIn(one, "root")).auth
      const secret = yield* enableTwoFactor(one, player.auth)
      yield* payOutOnce(one, player.auth, secret, root) // 1000 cents, COMPLETED
      expect((yield* request(one, player.auth, 8_000)).status).toBe(201)
      const elsewhere = yield* signIn(two, "two-places")

      // 9000 in the last 24 hours: each 1000 alone needs no code, both together would pass 10000.
      yield* rendezvous.arm
      const answers = yield* Effect.all([request(one, player.auth, 1_000), request(two, elsewhere.auth, 1_000)], {
        concurrency: "unbounded"
      })
      expect(yield* rendezvous.arrived).toBe(2)
      expect(answers.map((a) => a.status).sort()).toEqual([201, 400])
      expect(answers.find((a) => a.status === 400)!.body).toEqual(required)
      expect(yield* balanceOf(one, player.auth)).toBe(50_000 - 1_000 - 8_000 - 1_000)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("every request tells its owner: a WITHDRAWAL_REQUESTED notification with the amount, key type and masked key", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const player = yield* fundedPlayer(client, "notified", 100_000)
      const stream = (yield* client.open("/api/realtime", { headers: player.auth })).body!.getReader()
      yield* Effect.promise(() => stream.read())
      const keys: ReadonlyArray<[string, string, string]> = [
        ["EMAIL", "Maria.Silva@example.com", "m***@example.com"],
        ["CPF", "529.982.247-25", "***.982.247-**"],
        ["CNPJ", "11.222.333/0001-81", "**.222.333/****-**"],
        ["PHONE", "+5511912345678", "+55 11 *****-5678"],
        ["RANDOM", "123e4567-e89b-12d3-a456-426614174000", "123e…4000"]
      ]
      for (const [pixKeyType, pixKey] of keys) {
        expect((yield* request(client, player.auth, 1_234, { pixKeyType, pixKey })).status).toBe(201)
      }
      const listed = (yield* client.get("/api/notifications?limit=10", player.auth)).body.notifications
      const requested = listed.filter((n: any) => n.type === "WITHDRAWAL_REQUESTED").reverse()
      expect(requested.map((n: any) => n.message)).toEqual(keys.map(([type, , masked]) =>
        `A withdrawal of R$ 12.34 to the PIX key (${type}) ${masked} was requested. ` +
        "If this was not you, cancel it and sign out of all sessions."
      ))
      expect(requested[0]).toMatchObject({ title: "Withdrawal requested", read: false })
      for (const [, pixKey] of keys) expect(JSON.stringify(listed)).not.toContain(pixKey.toLowerCase().replace(/\D/g, "").slice(0, 11) || pixKey)
      // Pushed as it happened, too.
      const pushed = yield* Effect.promise(async () => {
        const decoder = new TextDecoder()
        let text = ""
        while ((text.match(/WITHDRAWAL_REQUESTED/g) ?? []).length < keys.length) text += decoder.decode((await stream.read()).value)
        return text
      })
      expect(pushed).toContain("event: notification")
      yield* Effect.promise(() => stream.cancel())
      // A refused request (2FA) tells nothing: nothing was requested.
      const careful = yield* fundedPlayer(client, "notified-careful", 10_000)
      yield* enableTwoFactor(client, careful.auth)
      expect((yield* request(client, careful.auth, 1_000)).body).toEqual(required)
      expect((yield* client.get("/api/notifications", careful.auth)).body.notifications.filter((n: any) => n.type === "WITHDRAWAL_REQUESTED"))
        .toEqual([])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("wrong codes on withdrawals and verify count together; the 5th locks withdrawals and verify: 429 with Retry-After", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      yield* TestClock.setTime(1_800_000_000_000)
      const player = yield* fundedPlayer(client, "guesser", 50_000)
      const secret = yield* enableTwoFactor(client, player.auth)
      for (const code of ["000001", "000002", "000003"]) {
        expect((yield* request(client, player.auth, 10_000, key, { twoFactorCode: code })).body).toEqual({ statusCode: 400, message: "Invalid 2FA code" })
      }
      expect((yield* client.post("/api/auth/2fa/verify", { code: "000004" }, player.auth)).body).toEqual({ valid: false })
      expect((yield* client.post("/api/auth/2fa/disable", { code: "000005" }, player.auth)).body).toEqual({ statusCode: 400, message: "Invalid 2FA code" })

      const right = yield* codeNow(secret)
      const locked = [
        yield* request(client, player.auth, 10_000, key, { twoFactorCode: right }),
        yield* client.post("/api/auth/2fa/verify", { code: right }, player.auth),
        yield* client.post("/api/auth/2fa/disable", { code: right }, player.auth)
      ]
      for (const answer of locked) {
        expect(answer.status).toBe(429)
        expect(answer.body).toEqual({ statusCode: 429, message: "Too many requests" })
        expect(answer.headers.get("retry-after")).toBe("900")
      }
      expect(yield* balanceOf(client, player.auth)).toBe(50_000)
      expect((yield* client.get("/api/auth/me", player.auth)).body.twoFactorEnabled).toBe(true)
      const alerts = (yield* client.get("/api/notifications", player.auth)).body.notifications
      expect(alerts.filter((n: any) => n.type === "SECURITY_ALERT" && n.title === "Two-factor checks locked")).toHaveLength(1)
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT 1 FROM audit_logs WHERE user_id = ${player.id} AND action = '2FA_LOCKED'`).toHaveLength(1)

      // A withdrawal that needs no code is not 2FA-protected and still works; after 15 minutes all do.
      yield* TestClock.adjust(15 * 60_000)
      const after = yield* request(client, player.auth, 10_000, key, { twoFactorCode: yield* codeNow(secret) })
      expect(after.status).toBe(201)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("no answer from the gateway: PROCESSING; reject, cancel and approve refused; a later payout.failed refunds exactly once", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      const { id, player, root } = yield* pendingWithdrawal(client, "unanswered", 30_000, 20_000)
      const pending = Effect.map(client.get("/api/admin/dashboard", root), (r) => r.body.financial.pendingWithdrawals as number)
      const pendingBefore = yield* pending
      yield* approveUnanswered(client, gateway, root, id, false)
      // Still waiting to be settled: the dashboard keeps counting it.
      expect(yield* pending).toBe(pendingBefore)

      const reject = yield* client.post(`/api/admin/withdrawals/${id}/reject`, { reason: "changed my mind" }, root)
      expect(reject.status).toBe(409)
      expect(reject.body).toEqual({ statusCode: 409, message: "Withdrawal payout is in progress" })
      const cancel = yield* client.post(`/api/withdrawals/${id}/cancel`, undefined, player.auth)
      expect(cancel.body).toEqual({ statusCode: 409, message: "Withdrawal is already being processed" })
      expect((yield* client.post(`/api/admin/withdrawals/${id}/approve`, undefined, root)).status).toBe(409)
      expect(yield* gateway.payouts).toHaveLength(1)
      expect(yield* balanceOf(client, player.auth)).toBe(10_000)
      expect((yield* client.get("/api/withdrawals", player.auth)).body.withdrawals[0]).toMatchObject({ id, status: "PROCESSING" })

      // The gateway's word, twice and at once: one refund.
      const failed = payoutEvent("payout.failed", id, { failReason: "Receiving bank offline" })
      const answers = yield* Effect.all(Array.from({ length: 5 }, () => gatewayCall(client, failed)), { concurrency: "unbounded" })
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200])
      expect((yield* gatewayCall(client, failed)).status).toBe(200)
      expect(yield* balanceOf(client, player.auth)).toBe(30_000)
      expect(yield* adminView(client, root, id)).toMatchObject({
        status: "FAILED",
        rejectionReason: "Payout failed: Receiving bank offline",
        processedAt: expect.any(String),
        payoutInProgress: false
      })
      expect((yield* client.get("/api/withdrawals", player.auth)).body.withdrawals[0]).toMatchObject({
        status: "FAILED",
        rejectionReason: "Payout failed: Receiving bank offline"
      })
      // Ended: nothing more to do with it.
      expect((yield* client.post(`/api/admin/withdrawals/${id}/reject`, { reason: "x" }, root)).body).toEqual({ statusCode: 400, message: "Withdrawal is not pending" })
      expect(yield* auditActions(id)).toEqual([
        "WITHDRAWAL_REQUESTED",
        "WITHDRAWAL_PAYOUT_STARTED",
        "WITHDRAWAL_PAYOUT_UNCONFIRMED",
        "WITHDRAWAL_FAILED"
      ])
      expect(yield* deliveriesOf(id)).toEqual([])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("the report's case: the gateway paid but timed out; a reject is refused, payout.paid completes it once with its webhook", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      yield* client.post("/api/webhooks", { url: "https://receiver.example.com/safety", events: ["withdrawal.completed"], secret: "receiver-secret-0123" }, adminToken)
      const { id, player, root } = yield* pendingWithdrawal(client, "paid-silently", 20_000, 20_000)
      yield* approveUnanswered(client, gateway, root, id, true)
      expect((yield* client.post(`/api/admin/withdrawals/${id}/reject`, { reason: "stuck" }, root)).status).toBe(409)
      expect(yield* balanceOf(client, player.auth)).toBe(0)

      const paid = payoutEvent("payout.paid", id)
      expect((yield* gatewayCall(client, paid)).status).toBe(200)
      expect((yield* gatewayCall(client, paid)).status).toBe(200)
      expect(yield* adminView(client, root, id)).toMatchObject({ status: "COMPLETED", payoutId: `po_gw_${id}`, payoutError: null })
      expect(yield* deliveriesOf(id)).toEqual([{ event: "withdrawal.completed" }])
      // A contradicting payout.failed afterwards moves no money; it is kept for review.
      expect((yield* gatewayCall(client, payoutEvent("payout.failed", id))).status).toBe(200)
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      expect(yield* auditActions(id)).toEqual([
        "WITHDRAWAL_REQUESTED",
        "WITHDRAWAL_PAYOUT_STARTED",
        "WITHDRAWAL_PAYOUT_UNCONFIRMED",
        "WITHDRAWAL_APPROVED",
        "WITHDRAWAL_PAYOUT_CONFLICT"
      ])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("reconcile asks the gateway by reference: paid -> COMPLETED, failed -> FAILED refunded, processing -> unchanged, never received -> PENDING after 2 minutes", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      yield* TestClock.setTime(1_800_000_000_000)
      const player = yield* fundedPlayer(client, "reconciled", 100_000)
      const root = (yield* signIn(client, "root")).auth
      const ids = [] as Array<string>
      for (let i = 0; i < 4; i++) {
        const requested = yield* request(client, player.auth, 10_000)
        ids.push(requested.body.id)
        yield* approveUnanswered(client, gateway, root, requested.body.id, i === 0)
      }
      const [paid, failed, processing, lost] = ids as [string, string, string, string]
      const reconcile = (id: string) => client.post(`/api/admin/withdrawals/${id}/reconcile`, undefined, root)

      expect((yield* reconcile(paid)).body).toMatchObject({ status: "COMPLETED", payoutId: `po_test_${paid}_1` })
      yield* gateway.answerPayoutStatus(BigInt(failed), { _tag: "Failed", reason: "Account closed" })
      expect((yield* reconcile(failed)).body).toMatchObject({ status: "FAILED", rejectionReason: "Payout failed: Account closed" })
      yield* gateway.answerPayoutStatus(BigInt(processing), { _tag: "Processing" })
      expect((yield* reconcile(processing)).body).toMatchObject({ status: "PROCESSING" })
      // Never received: only once the approval's own call cannot still be on its way.
      expect((yield* reconcile(lost)).body).toMatchObject({ status: "PROCESSING" })
      yield* TestClock.adjust(2 * 60_000)
      expect((yield* reconcile(lost)).body).toMatchObject({
        status: "PENDING",
        payoutError: "The gateway has no payout for this withdrawal",
        payoutAttempts: 1
      })
      // Back in the queue: approve again (same reference at the gateway) or reject with refund.
      expect((yield* client.post(`/api/admin/withdrawals/${lost}/reject`, { reason: "Retry later" }, root)).body.status).toBe("REJECTED")

      // Not PROCESSING, unknown, not an administrator, gateway down.
      expect((yield* reconcile(paid)).body).toEqual({ statusCode: 400, message: "Withdrawal is not processing" })
      expect((yield* reconcile("999999999")).status).toBe(404)
      expect((yield* client.post(`/api/admin/withdrawals/${processing}/reconcile`, undefined, player.auth)).status).toBe(403)
      expect(yield* gateway.statusQueries).toEqual([paid, failed, processing, lost, lost].map(BigInt))

      expect(yield* balanceOf(client, player.auth)).toBe(100_000 - 10_000 - 10_000)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("a reconciliation's late answer moves only the attempt it asked about, never a later one the gateway may be paying", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      yield* TestClock.setTime(1_800_000_000_000)
      const player = yield* fundedPlayer(client, "late-answer", 100_000)
      const root = (yield* signIn(client, "root")).auth
      const reconcile = (id: string) => client.post(`/api/admin/withdrawals/${id}/reconcile`, undefined, root)
      for (const late of [{ _tag: "Unknown" }, { _tag: "Failed", reason: "Account closed" }] as const) {
        const id = (yield* request(client, player.auth, 10_000)).body.id as string
        yield* approveUnanswered(client, gateway, root, id, false)
        yield* TestClock.adjust(2 * 60_000)
        // A first reconciliation asks the gateway about attempt 1, and its answer is slow.
        const [asked, answered] = [yield* Deferred.make<void>(), yield* Deferred.make<void>()]
        yield* gateway.holdPayoutStatus(Effect.zipRight(Deferred.succeed(asked, undefined), Deferred.await(answered)))
        const slow = yield* Effect.fork(reconcile(id))
        yield* Deferred.await(asked)
        yield* gateway.holdPayoutStatus(undefined)
        // Meanwhile a second one hears at once that the gateway has no payout: PENDING, and approved again, attempt 2
        // is handed over with no answer.
        expect((yield* reconcile(id)).body).toMatchObject({ status: "PENDING", payoutAttempts: 1 })
        yield* approveUnanswered(client, gateway, root, id, false)
        // The first one's answer arrives: attempt 1 never received, or failed.
        if (late._tag === "Failed") yield* gateway.answerPayoutStatus(BigInt(id), late)
        yield* Deferred.succeed(answered, undefined)
        expect((yield* Fiber.join(slow)).body).toMatchObject({ status: "PROCESSING", payoutAttempts: 2 })
        // Attempt 2 stays in progress: nobody can reject it (and refund it) while the gateway may pay it.
        expect((yield* client.post(`/api/admin/withdrawals/${id}/reject`, { reason: "Retry later" }, root)).status).toBe(409)
        expect(yield* auditActions(id)).toEqual([
          "WITHDRAWAL_REQUESTED",
          "WITHDRAWAL_PAYOUT_STARTED",
          "WITHDRAWAL_PAYOUT_UNCONFIRMED",
          "WITHDRAWAL_PAYOUT_FAILED",
          "WITHDRAWAL_PAYOUT_STARTED",
          "WITHDRAWAL_PAYOUT_UNCONFIRMED"
        ])
        yield* gateway.answerPayoutStatus(BigInt(id), undefined)
      }
      expect(yield* balanceOf(client, player.auth)).toBe(100_000 - 2 * 10_000)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("a refusal that comes after a later attempt started leaves that attempt PROCESSING; the approval answers it as it is", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      yield* TestClock.setTime(1_800_000_000_000)
      const player = yield* fundedPlayer(client, "late-refusal", 50_000)
      const root = (yield* signIn(client, "root")).auth
      const id = (yield* request(client, player.auth, 10_000)).body.id as string
      /** An approval whose payout call the gateway holds until its answer is given (`answer`). */
      const slowApproval = Effect.gen(function*() {
        const [asked, answer] = [yield* Deferred.make<void>(), yield* Deferred.make<void>()]
        yield* gateway.holdPayouts(Effect.zipRight(Deferred.succeed(asked, undefined), Deferred.await(answer)))
        const approval = yield* Effect.fork(client.post(`/api/admin/withdrawals/${id}/approve`, undefined, root))
        yield* Deferred.await(asked)
        yield* gateway.holdPayouts(undefined)
        return { approval, answer: Deferred.succeed(answer, undefined) }
      })
      const first = yield* slowApproval
      // 2 minutes on, a reconciliation hears that the gateway has no payout: PENDING; approved again, attempt 2.
      yield* TestClock.adjust(2 * 60_000)
      expect((yield* client.post(`/api/admin/withdrawals/${id}/reconcile`, undefined, root)).body)
        .toMatchObject({ status: "PENDING", payoutAttempts: 1 })
      const second = yield* slowApproval
      // Attempt 1's refusal comes now: attempt 2 stays PROCESSING, and can be neither rejected nor refunded.
      yield* gateway.failPayouts("Invalid PIX key")
      yield* first.answer
      const firstAnswer = yield* Fiber.join(first.approval)
      expect(firstAnswer.status).toBe(200)
      expect(firstAnswer.body).toMatchObject({ status: "PROCESSING", payoutAttempts: 2 })
      expect((yield* client.post(`/api/admin/withdrawals/${id}/reject`, { reason: "Retry later" }, root)).status).toBe(409)
      // Attempt 2's own refusal puts it back in the queue.
      yield* second.answer
      expect((yield* Fiber.join(second.approval)).body)
        .toEqual({ statusCode: 502, message: "Payout failed: Invalid PIX key. The withdrawal is still pending." })
      expect(yield* adminView(client, root, id)).toMatchObject({ status: "PENDING", payoutAttempts: 2, payoutError: "Invalid PIX key" })
      expect(yield* auditActions(id)).toEqual([
        "WITHDRAWAL_REQUESTED",
        "WITHDRAWAL_PAYOUT_STARTED",
        "WITHDRAWAL_PAYOUT_FAILED",
        "WITHDRAWAL_PAYOUT_STARTED",
        "WITHDRAWAL_PAYOUT_FAILED"
      ])
      expect(yield* balanceOf(client, player.auth)).toBe(50_000 - 10_000)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("approved again after a refusal: the new attempt shows no error of the earlier one while it runs", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      const player = yield* fundedPlayer(client, "second-attempt", 50_000)
      const root = (yield* signIn(client, "root")).auth
      const id = (yield* request(client, player.auth, 10_000)).body.id as string
      yield* gateway.failPayouts("Invalid PIX key")
      expect((yield* client.post(`/api/admin/withdrawals/${id}/approve`, undefined, root)).status).toBe(502)
      expect(yield* adminView(client, root, id)).toMatchObject({ status: "PENDING", payoutAttempts: 1, payoutError: "Invalid PIX key" })
      yield* gateway.failPayouts(undefined)
      const [asked, answer] = [yield* Deferred.make<void>(), yield* Deferred.make<void>()]
      yield* gateway.holdPayouts(Effect.zipRight(Deferred.succeed(asked, undefined), Deferred.await(answer)))
      const approval = yield* Effect.fork(client.post(`/api/admin/withdrawals/${id}/approve`, undefined, root))
      yield* Deferred.await(asked)
      expect(yield* adminView(client, root, id)).toMatchObject({ status: "PROCESSING", payoutAttempts: 2, payoutError: null })
      yield* Deferred.succeed(answer, undefined)
      expect((yield* Fiber.join(approval)).body).toMatchObject({ status: "COMPLETED", payoutAttempts: 2, payoutError: null })
      expect(yield* balanceOf(client, player.auth)).toBe(50_000 - 10_000)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("payout events: an unknown reference is 404, a bad one 400, an unsigned one 401; nothing moves", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      const { id, player } = yield* pendingWithdrawal(client, "event-target", 5_000, 5_000)
      const unknown = yield* gatewayCall(client, payoutEvent("payout.paid", "999999999"))
      expect(unknown.body).toEqual({ statusCode: 404, message: "Withdrawal not found" })
      const foreign = yield* gatewayCall(client, { event: "payout.paid", data: { id: "po_1", reference: "deposit-1" } })
      expect(foreign.status).toBe(404)
      const incomplete = yield* gatewayCall(client, { event: "payout.failed", data: { id: "po_1" } })
      expect(incomplete.body).toMatchObject({ statusCode: 400, errors: [{ field: "data.reference", message: expect.any(String) }] })
      const unsigned = yield* gatewayCall(client, payoutEvent("payout.failed", id), { signature: "00".repeat(32) })
      expect(unsigned.status).toBe(401)
      // A PENDING withdrawal (never handed to the gateway) is not refunded by a payout.failed.
      expect((yield* gatewayCall(client, payoutEvent("payout.failed", id))).status).toBe(200)
      expect((yield* client.get("/api/withdrawals", player.auth)).body.withdrawals[0]).toMatchObject({ status: "PENDING" })
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))
})
