/**
 * The gateway callback's timestamp and replay protection (docs/rules.md#gateway-callback-timestamp,
 * docs/rules.md#gateway-event-ids): `x-webhook-timestamp` is covered by the signature and must be within
 * 5 minutes of our clock; each event (its id: the signed content's hash) takes effect once, a repeat is
 * answered `{received: true, duplicate: true}` and moves nothing. Without the header the SPEC signature
 * works unless WEBHOOK_REQUIRE_TIMESTAMP is on. Every scenario ends with balance = ledger.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import { balanceOf, fundedPlayer } from "../support/GameFixtures"
import { gatewayCall, initiateDeposit, paidEvent, signGateway, signGatewayAt } from "../support/PaymentFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestAppOptions, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { makeTestGateway, type TestGatewayControl } from "../support/TestGateway"
import { TestStores } from "../support/TestStores"
import { healthyLedger, ledgerProblems, withdrawal } from "../support/WithdrawalFixtures"

const START_MS = 1_800_000_000_000
const lifted = { count: 1000, windowMs: 60_000 }

const appOptions = (extra: TestAppOptions = {}, requireTimestamp = false): TestAppOptions => ({
  stores: TestStores,
  ...extra,
  config: {
    adminIdpIds: ["root"],
    rateLimits: { ...testConfig.rateLimits, withdrawal: lifted },
    gateway: { ...testConfig.gateway, requireTimestamp },
    ...extra.config
  }
})

/** Now, in whole seconds of the test clock: what the gateway puts in `x-webhook-timestamp`. */
const nowSeconds = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))

const refusedTimestamp = { statusCode: 401, message: "Invalid webhook timestamp" }
const refusedSignature = { statusCode: 401, message: "Invalid webhook signature" }
const duplicate = { received: true, duplicate: true }

const storedEvents = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ n: number }>`SELECT count(*)::int AS n FROM gateway_events`).pipe(Effect.map((rows) => rows[0]!.n))

const payoutFailed = (withdrawalId: string) => ({
  event: "payout.failed",
  data: { id: `po_gw_${withdrawalId}`, reference: `withdrawal-${withdrawalId}`, failReason: "Receiving bank offline" }
})

const adminView = (client: TestClient, root: Record<string, string>, id: string) =>
  Effect.map(client.get("/api/admin/withdrawals?limit=100", root), (r) => r.body.withdrawals.find((w: any) => w.id === id))

/**
 * The finding's setting: attempt 1 of a payout got no answer (PROCESSING), reconciliation found the gateway
 * had none and moved it back to PENDING, the gateway's payout.failed for attempt 1 arrived while PENDING
 * (acknowledged, nothing to refund) and was captured on the way; then attempt 2, again unanswered: PROCESSING,
 * its money possibly on its way. `deliver` sends the gateway's event and returns how to replay it.
 */
const secondAttemptProcessing = <A>(
  client: TestClient,
  gateway: TestGatewayControl,
  login: string,
  deliver: (body: ReturnType<typeof payoutFailed>) => Effect.Effect<A>
) =>
  Effect.gen(function*() {
    const player = yield* fundedPlayer(client, login, 20_000)
    const root = (yield* signIn(client, "root")).auth
    const requested = yield* client.post("/api/withdrawals/request", withdrawal(20_000), player.auth)
    expect(requested.status).toBe(201)
    const id = requested.body.id as string
    const approveUnanswered = Effect.gen(function*() {
      yield* gateway.timeOutPayouts({ paid: false })
      const approved = yield* client.post(`/api/admin/withdrawals/${id}/approve`, undefined, root)
      yield* gateway.timeOutPayouts(undefined)
      expect(approved.body.status).toBe("PROCESSING")
    })
    yield* approveUnanswered
    yield* TestClock.adjust(2 * 60_000)
    const reconciled = yield* client.post(`/api/admin/withdrawals/${id}/reconcile`, undefined, root)
    expect(reconciled.body).toMatchObject({ status: "PENDING", payoutAttempts: 1 })
    const captured = yield* deliver(payoutFailed(id))
    expect(yield* adminView(client, root, id)).toMatchObject({ status: "PENDING" })
    yield* TestClock.adjust(20_000)
    yield* approveUnanswered
    expect(yield* adminView(client, root, id)).toMatchObject({ status: "PROCESSING", payoutAttempts: 2 })
    expect(yield* balanceOf(client, player.auth)).toBe(0)
    return { id, player, root, captured }
  })

layer(TestDatabase)("gateway callback timestamps and replays", (it) => {
  it.scoped("a timestamped signature (over timestamp.body) is accepted; the same signature without the header is not", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      yield* TestClock.setTime(START_MS)
      const player = yield* signIn(client, "stamped")
      const deposit = yield* initiateDeposit(client, player.auth, 1_000)
      const body = JSON.stringify(paidEvent(deposit.externalId))
      const at = yield* nowSeconds

      // Signed over the body alone while a timestamp is sent, or over timestamp.body while none is: refused.
      expect(yield* gatewayCall(client, body, { timestamp: at, signature: signGateway(body) }))
        .toMatchObject({ status: 401, body: refusedSignature })
      expect(yield* gatewayCall(client, body, { signature: signGatewayAt(at, body) }))
        .toMatchObject({ status: 401, body: refusedSignature })
      // Another timestamp than the one signed: refused.
      expect(yield* gatewayCall(client, body, { timestamp: at - 1, signature: signGatewayAt(at, body) }))
        .toMatchObject({ status: 401, body: refusedSignature })
      expect(yield* balanceOf(client, player.auth)).toBe(0)

      expect(yield* gatewayCall(client, body, { timestamp: at })).toMatchObject({ status: 200, body: { received: true } })
      expect((yield* gatewayCall(client, body, { timestamp: at })).body).toEqual(duplicate)
      expect(yield* balanceOf(client, player.auth)).toBe(1_000)

      // Pretty-printed bytes signed in their compact form, with a timestamp: accepted, as without one.
      const other = yield* initiateDeposit(client, player.auth, 500)
      const pretty = JSON.stringify(paidEvent(other.externalId), null, 2)
      const compactSigned = signGatewayAt(at, JSON.stringify(paidEvent(other.externalId)))
      expect((yield* gatewayCall(client, pretty, { timestamp: at, signature: compactSigned })).body).toEqual({ received: true })
      // ... and the same event in its compact bytes is the same event: a replay.
      expect((yield* gatewayCall(client, JSON.stringify(paidEvent(other.externalId)), { timestamp: at })).body).toEqual(duplicate)
      expect(yield* balanceOf(client, player.auth)).toBe(1_500)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("a timestamp more than 5 minutes old or ahead is 401 and moves nothing; a malformed one is 401 before the body is read", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      yield* TestClock.setTime(START_MS)
      const player = yield* signIn(client, "stale")
      const deposit = yield* initiateDeposit(client, player.auth, 1_000)
      const body = paidEvent(deposit.externalId)
      const at = yield* nowSeconds

      expect(yield* gatewayCall(client, body, { timestamp: at - 301 })).toMatchObject({ status: 401, body: refusedTimestamp })
      expect(yield* gatewayCall(client, body, { timestamp: at + 301 })).toMatchObject({ status: 401, body: refusedTimestamp })
      for (const bad of ["", "abc", "1.5", "-5", `${at}000000000`]) {
        expect(yield* gatewayCall(client, body, { timestamp: bad }), bad).toMatchObject({ status: 401 })
      }
      // A malformed timestamp header is refused before the body is read: a body that never ends.
      const endless = new ReadableStream({ pull: () => new Promise(() => {}) })
      const unread = yield* client.request("/api/webhooks/payment", {
        method: "POST",
        headers: { "content-type": "application/json", "x-webhook-signature": "ab".repeat(32), "x-webhook-timestamp": "soon" },
        body: endless,
        duplex: "half"
      } as RequestInit)
      expect(unread).toMatchObject({ status: 401, body: refusedTimestamp })
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      expect((yield* client.get("/api/payment/deposits", player.auth)).body.deposits[0].status).toBe("PENDING")

      // Exactly 5 minutes old: still accepted. A captured event replayed once it is older: 401.
      expect((yield* gatewayCall(client, body, { timestamp: at - 300 })).body).toEqual({ received: true })
      expect(yield* balanceOf(client, player.auth)).toBe(1_000)
      const sentAt = yield* nowSeconds
      yield* TestClock.adjust(301_000)
      expect(yield* gatewayCall(client, body, { timestamp: sentAt })).toMatchObject({ status: 401, body: refusedTimestamp })
      expect(yield* balanceOf(client, player.auth)).toBe(1_000)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("the finding: attempt 1's payout.failed replayed while attempt 2 is PROCESSING refunds nothing (duplicate, then stale)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(START_MS)
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      const { captured, id, player, root } = yield* secondAttemptProcessing(client, gateway, "replayed", (event) =>
        Effect.gen(function*() {
          const at = yield* nowSeconds
          expect((yield* gatewayCall(client, event, { timestamp: at })).body).toEqual({ received: true })
          return { event, at }
        }))

      // The captured request, byte for byte, within the 5 minutes: a duplicate, no refund.
      const replay = yield* gatewayCall(client, captured.event, { timestamp: captured.at })
      expect(replay).toMatchObject({ status: 200, body: duplicate })
      const replays = yield* Effect.all(
        Array.from({ length: 5 }, () => gatewayCall(client, captured.event, { timestamp: captured.at })),
        { concurrency: "unbounded" }
      )
      expect(replays.map((r) => r.body)).toEqual(Array(5).fill(duplicate))
      expect(yield* adminView(client, root, id)).toMatchObject({ status: "PROCESSING", payoutInProgress: true })
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      // Later: too old.
      yield* TestClock.adjust(5 * 60_000)
      expect(yield* gatewayCall(client, captured.event, { timestamp: captured.at })).toMatchObject({ status: 401, body: refusedTimestamp })
      expect(yield* adminView(client, root, id)).toMatchObject({ status: "PROCESSING" })
      expect(yield* balanceOf(client, player.auth)).toBe(0)

      // Attempt 2's own outcome, a new event from the gateway, still settles it.
      const paid = { event: "payout.paid", data: { id: `po_gw_${id}`, reference: `withdrawal-${id}` } }
      expect((yield* gatewayCall(client, paid, { timestamp: yield* nowSeconds })).body).toEqual({ received: true })
      expect(yield* adminView(client, root, id)).toMatchObject({ status: "COMPLETED" })
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("the finding without timestamps (the SPEC signature): the replayed body is the same event, a duplicate; no refund", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(START_MS)
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(appOptions({ gateway: gateway.layer }))
      const { captured, id, player, root } = yield* secondAttemptProcessing(client, gateway, "replayed-plain", (event) =>
        Effect.gen(function*() {
          expect((yield* gatewayCall(client, event)).body).toEqual({ received: true })
          return event
        }))
      expect(yield* gatewayCall(client, captured)).toMatchObject({ status: 200, body: duplicate })
      // Re-formatted bytes of the same signed content are the same event too.
      const pretty = JSON.stringify(captured, null, 2)
      expect(yield* gatewayCall(client, pretty, { signature: signGateway(JSON.stringify(captured)) }))
        .toMatchObject({ status: 200, body: duplicate })
      expect(yield* adminView(client, root, id)).toMatchObject({ status: "PROCESSING" })
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("each event is stored once, with its effect: a refused or failed event leaves no id behind", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions())
      yield* TestClock.setTime(START_MS)
      const player = yield* signIn(client, "stored")
      const before = yield* storedEvents
      const at = yield* nowSeconds
      // Unknown charge (404), malformed (400), bad signature (401): nothing stored, and a repeat is not a duplicate.
      const unknown = { event: "charge.paid", data: { id: "ch_nobody_replay" } }
      for (let i = 0; i < 2; i++) {
        expect((yield* gatewayCall(client, unknown, { timestamp: at })).status).toBe(404)
        expect((yield* gatewayCall(client, { event: "charge.paid", data: {} }, { timestamp: at })).status).toBe(400)
        expect((yield* gatewayCall(client, unknown, { timestamp: at, signature: "00".repeat(32) })).status).toBe(401)
      }
      expect(yield* storedEvents).toBe(before)

      // Accepted events are stored, including those acknowledged without action; repeats add nothing.
      const deposit = yield* initiateDeposit(client, player.auth, 1_000)
      const other = { event: "charge.refunded", data: { id: deposit.externalId } }
      const answers = yield* Effect.all(
        Array.from({ length: 10 }, () => gatewayCall(client, paidEvent(deposit.externalId), { timestamp: at })),
        { concurrency: "unbounded" }
      )
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200))
      expect(answers.filter((a) => a.body.duplicate === true)).toHaveLength(9)
      expect((yield* gatewayCall(client, other, { timestamp: at })).body).toEqual({ received: true })
      expect((yield* gatewayCall(client, other, { timestamp: at })).body).toEqual(duplicate)
      expect(yield* storedEvents).toBe(before + 2)
      // The same event sent again by the gateway later (a new timestamp) is a new event: answered, moves nothing more.
      yield* TestClock.adjust(10_000)
      expect((yield* gatewayCall(client, paidEvent(deposit.externalId), { timestamp: yield* nowSeconds })).body).toEqual({ received: true })
      expect(yield* storedEvents).toBe(before + 3)
      expect(yield* balanceOf(client, player.auth)).toBe(1_000)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("without x-webhook-timestamp: the SPEC signature is accepted by default and refused with WEBHOOK_REQUIRE_TIMESTAMP", () =>
    Effect.gen(function*() {
      const lenient = yield* makeTestClient(appOptions())
      const player = yield* signIn(lenient, "untimestamped")
      const a = yield* initiateDeposit(lenient, player.auth, 1_000)
      expect(yield* gatewayCall(lenient, paidEvent(a.externalId))).toMatchObject({ status: 200, body: { received: true } })
      expect(yield* balanceOf(lenient, player.auth)).toBe(1_000)

      const strict = yield* makeTestClient(appOptions({}, true))
      const strictPlayer = yield* signIn(strict, "untimestamped-strict")
      const b = yield* initiateDeposit(strict, strictPlayer.auth, 2_000)
      expect(yield* gatewayCall(strict, paidEvent(b.externalId))).toMatchObject({ status: 401, body: refusedTimestamp })
      expect(yield* balanceOf(strict, strictPlayer.auth)).toBe(0)
      yield* TestClock.setTime(START_MS)
      expect(yield* gatewayCall(strict, paidEvent(b.externalId), { timestamp: yield* nowSeconds }))
        .toMatchObject({ status: 200, body: { received: true } })
      expect(yield* balanceOf(strict, strictPlayer.auth)).toBe(2_000)

      // The sandbox gateway signs with a timestamp: it works with the timestamp required.
      const c = yield* initiateDeposit(strict, strictPlayer.auth, 500)
      const paid = yield* strict.post(`/api/sandbox/charges/${c.externalId}/pay`, undefined, strictPlayer.auth)
      expect(paid.body).toMatchObject({ event: "charge.paid", callbackStatus: 200, deposit: { status: "CONFIRMED" } })
      expect(yield* balanceOf(strict, strictPlayer.auth)).toBe(2_500)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))
})
