/**
 * A deposit whose owner is excluded when it is paid (docs/rules.md#deposit-excluded; D23; docs/responsible-gaming.md
 * #self-exclusion): started before the exclusion, paid after it, it is never credited but returned to the payer
 * through the refund path (REFUND_PENDING, then REFUNDED), in every jurisdiction, audited DEPOSIT_EXCLUDED and told
 * with its own wording, also when the refund job finishes it later. An administrator cannot confirm it (403
 * SELF_EXCLUDED). Under BR a third party's payment keeps its own reason (checked first). A player not excluded is
 * credited as before.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import type { Jurisdiction } from "../../src/layers/AppConfig"
import { Deposits } from "../../src/services/money/Deposits"
import { cpfOf, formatted } from "../support/Cpf"
import { balanceOf, fundedPlayer } from "../support/GameFixtures"
import { gatewayCall, healthyLedger, initiateDeposit, ledgerProblems, notificationsOf, paidEvent } from "../support/PaymentFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestAppOptions, type TestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { makeTestGateway } from "../support/TestGateway"

const NOON_UTC = Date.parse("2026-11-26T12:00:00Z")
const DAY = 86_400_000

const options = (jurisdiction: Jurisdiction, extra: TestAppOptions = {}): TestAppOptions => ({
  ...extra,
  config: { jurisdiction, adminIdpIds: ["root"] }
})

const depositOf = (client: TestClient, auth: Record<string, string>, id: string) =>
  Effect.map(client.get("/api/payment/deposits?limit=100", auth), (r) =>
    (r.body.deposits as ReadonlyArray<{ id: string; status: string; confirmedAt: string | null }>).find((d) => d.id === id)!)

const auditOf = (action: string, entityId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ metadata: Record<string, unknown> }>`
      SELECT metadata FROM audit_logs WHERE action = ${action} AND entity_id = ${entityId} ORDER BY id`)

const refundReasonOf = (depositId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ refundReason: string | null }>`SELECT refund_reason FROM deposits WHERE id = ${depositId}`,
      (rows) => rows[0]!.refundReason
    ))

const EXCLUDED_REFUND = (amount: string) => ({
  type: "DEPOSIT_REFUNDED",
  title: "Deposit refunded",
  message: `Your deposit of ${amount} arrived while you were self-excluded, so it was not credited: ` +
    "the payment has been returned to the payer."
})

const THIRD_PARTY_REFUND = (amount: string) => ({
  type: "DEPOSIT_REFUNDED",
  title: "Deposit refunded",
  message: `Your deposit of ${amount} was paid from an account that is not in your name, so it was not credited: ` +
    "the payment has been returned to the payer."
})

const selfExclude = (client: TestClient, auth: Record<string, string>, days: number) =>
  Effect.gen(function*() {
    const excluded = yield* client.post("/api/users/me/self-exclusion", { days }, auth)
    expect(excluded.status).toBe(200)
    return excluded.body as { until: string }
  })

layer(TestDatabase)("deposits of an excluded owner under JURISDICTION=NONE", (it) => {
  it.scoped("started before the exclusion, paid after it: not credited, REFUNDED (amount + fee), told why, audited; a replay credits nothing", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(options("NONE", { gateway: gateway.layer }))
      const player = yield* fundedPlayer(client, "excluded-after-initiate", 0)
      // CREDIT_CARD: a fee (3.5 %) on top, returned with the amount.
      const deposit = yield* initiateDeposit(client, player.auth, 10_000, "CREDIT_CARD")
      const { until } = yield* selfExclude(client, player.auth, 7)

      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const paid = yield* gatewayCall(client, paidEvent(deposit.externalId), { timestamp: now })
      expect(paid.status).toBe(200)
      expect(paid.body).toEqual({ received: true })
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      expect(yield* depositOf(client, player.auth, deposit.depositId)).toMatchObject({ status: "REFUNDED", confirmedAt: null })
      expect(yield* refundReasonOf(deposit.depositId)).toBe("SELF_EXCLUDED")
      expect(yield* gateway.refunds).toEqual([
        { depositId: BigInt(deposit.depositId), externalId: deposit.externalId, amountCents: 10_350n }
      ])
      const notes = yield* notificationsOf(client, player.auth)
      expect(notes).toEqual([EXCLUDED_REFUND("R$ 100.00")])
      expect((yield* auditOf("DEPOSIT_EXCLUDED", deposit.depositId)).map((a) => a.metadata)).toEqual([
        { externalId: deposit.externalId, amount: 10_000, previousStatus: "PENDING", until, registryListed: false }
      ])
      expect((yield* auditOf("DEPOSIT_REFUNDED", deposit.depositId)).map((a) => a.metadata)).toEqual([
        { externalId: deposit.externalId, refundId: `re_test_${deposit.depositId}`, amount: 10_350 }
      ])
      expect(yield* auditOf("DEPOSIT_CONFIRMED", deposit.depositId)).toEqual([])
      expect(yield* auditOf("DEPOSIT_THIRD_PARTY", deposit.depositId)).toEqual([])

      // The same signed callback replayed: a duplicate. Sent anew (another timestamp): acknowledged, nothing done.
      const replay = yield* gatewayCall(client, paidEvent(deposit.externalId), { timestamp: now })
      expect(replay.body).toEqual({ received: true, duplicate: true })
      expect((yield* gatewayCall(client, paidEvent(deposit.externalId), { timestamp: now - 1 })).status).toBe(200)
      // Even once the exclusion is over, the refunded deposit is never credited.
      yield* TestClock.adjust(8 * DAY)
      expect((yield* gatewayCall(client, paidEvent(deposit.externalId))).status).toBe(200)
      const later = yield* signIn(client, "excluded-after-initiate")
      expect((yield* client.get("/api/users/me/compliance", later.auth)).body.exclusion.excluded).toBe(false)
      expect(yield* depositOf(client, later.auth, deposit.depositId)).toMatchObject({ status: "REFUNDED" })
      expect(yield* balanceOf(client, later.auth)).toBe(0)
      expect(yield* gateway.refunds).toHaveLength(1)
      expect(yield* notificationsOf(client, later.auth)).toEqual([EXCLUDED_REFUND("R$ 100.00")])
      expect(yield* auditOf("DEPOSIT_EXCLUDED", deposit.depositId)).toHaveLength(1)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("the gateway refusing the refund leaves REFUND_PENDING (nothing credited, nothing told); the refund job finishes it with the same wording", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(options("NONE", { gateway: gateway.layer }))
      const deposits = yield* client.service(Deposits)
      const player = yield* fundedPlayer(client, "excluded-refund-down", 0)
      const deposit = yield* initiateDeposit(client, player.auth, 2_000)
      yield* selfExclude(client, player.auth, 1)

      yield* gateway.failRefunds("gateway down")
      expect((yield* gatewayCall(client, paidEvent(deposit.externalId))).status).toBe(200)
      expect((yield* depositOf(client, player.auth, deposit.depositId)).status).toBe("REFUND_PENDING")
      expect(yield* notificationsOf(client, player.auth)).toEqual([])
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      expect(yield* deposits.retryRefunds()).toBe(0)

      // The exclusion ends before the gateway takes the refund: the deposit is still not credited, and the reason
      // told is the one it was refused for.
      yield* TestClock.adjust(2 * DAY)
      expect((yield* client.get("/api/users/me/compliance", player.auth)).body.exclusion.excluded).toBe(false)
      yield* gateway.failRefunds(undefined)
      expect(yield* deposits.retryRefunds()).toBe(1)
      expect(yield* deposits.retryRefunds()).toBe(0)
      expect((yield* depositOf(client, player.auth, deposit.depositId)).status).toBe("REFUNDED")
      expect(yield* notificationsOf(client, player.auth)).toEqual([EXCLUDED_REFUND("R$ 20.00")])
      expect((yield* gateway.refunds).map((r) => [r.depositId, r.amountCents])).toEqual([
        [BigInt(deposit.depositId), 2_000n],
        [BigInt(deposit.depositId), 2_000n],
        [BigInt(deposit.depositId), 2_000n]
      ])
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      expect(yield* auditOf("DEPOSIT_EXCLUDED", deposit.depositId)).toHaveLength(1)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("an administrator's confirmation of an excluded owner's PENDING deposit: 403 SELF_EXCLUDED, nothing credited", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(options("NONE", { gateway: gateway.layer }))
      const player = yield* fundedPlayer(client, "excluded-admin-confirm", 0)
      const admin = yield* signIn(client, "root")
      const deposit = yield* initiateDeposit(client, player.auth, 4_200)
      const { until } = yield* selfExclude(client, player.auth, 30)

      const refused = yield* client.post(`/api/admin/deposits/${deposit.depositId}/confirm`, undefined, admin.auth)
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual({
        statusCode: 403,
        error: "SELF_EXCLUDED",
        message: "You are self-excluded: playing and deposits are closed",
        until
      })
      expect(yield* depositOf(client, player.auth, deposit.depositId)).toMatchObject({ status: "PENDING", confirmedAt: null })
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      expect(yield* notificationsOf(client, player.auth)).toEqual([])
      expect(yield* auditOf("ADMIN_CONFIRM_DEPOSIT", deposit.depositId)).toEqual([])
      expect(yield* auditOf("DEPOSIT_CONFIRMED", deposit.depositId)).toEqual([])
      // Declared in the OpenAPI document.
      const openApi = (yield* client.get("/api/docs-json")).body
      expect(JSON.stringify(openApi.paths["/api/admin/deposits/{id}/confirm"].post.responses["403"]))
        .toContain("#/components/schemas/SelfExcluded")

      // Paid later, it goes back to the payer.
      expect((yield* gatewayCall(client, paidEvent(deposit.externalId))).status).toBe(200)
      expect((yield* depositOf(client, player.auth, deposit.depositId)).status).toBe("REFUNDED")
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("a player who is not excluded is credited as before, by the gateway and by an administrator", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(options("NONE", { gateway: gateway.layer }))
      const player = yield* fundedPlayer(client, "not-excluded", 0)
      const admin = yield* signIn(client, "root")
      const paid = yield* initiateDeposit(client, player.auth, 3_000)
      const byAdmin = yield* initiateDeposit(client, player.auth, 1_000)
      // An exclusion that has ended closes nothing.
      yield* selfExclude(client, player.auth, 1)
      yield* TestClock.adjust(DAY + 1_000)

      expect((yield* gatewayCall(client, paidEvent(paid.externalId))).status).toBe(200)
      expect((yield* depositOf(client, player.auth, paid.depositId)).status).toBe("CONFIRMED")
      expect((yield* client.post(`/api/admin/deposits/${byAdmin.depositId}/confirm`, undefined, admin.auth)).status).toBe(200)
      expect(yield* balanceOf(client, player.auth)).toBe(4_000)
      expect(yield* refundReasonOf(paid.depositId)).toBeNull()
      expect(yield* gateway.refunds).toEqual([])
      expect(yield* auditOf("DEPOSIT_EXCLUDED", paid.depositId)).toEqual([])
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))
})

layer(TestDatabase)("deposits of an excluded owner under JURISDICTION=BR", (it) => {
  /** A signed-in player whose identity is verified with `cpf`. */
  const verifiedPlayer = (client: TestClient, login: string, cpf: string) =>
    Effect.gen(function*() {
      const player = yield* signIn(client, login)
      const verified = yield* client.post(
        "/api/users/me/identity",
        { cpf: formatted(cpf), fullName: "Ana Souza", birthDate: "1990-05-17" },
        player.auth
      )
      expect(verified.status).toBe(200)
      return player
    })

  it.scoped("excluded and paid by a third party: the third-party reason first; paid by the holder: the exclusion's", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(options("BR", { gateway: gateway.layer }))
      const holderCpf = cpfOf("300000001")
      const player = yield* verifiedPlayer(client, "br-excluded", holderCpf)
      const byOther = yield* initiateDeposit(client, player.auth, 2_500)
      const byHolder = yield* initiateDeposit(client, player.auth, 1_500)
      yield* selfExclude(client, player.auth, 7)

      const other = { event: "charge.paid", data: { id: byOther.externalId, payerDocument: cpfOf("987654321") } }
      expect((yield* gatewayCall(client, other)).status).toBe(200)
      expect(yield* refundReasonOf(byOther.depositId)).toBe("THIRD_PARTY")
      expect(yield* auditOf("DEPOSIT_THIRD_PARTY", byOther.depositId)).toHaveLength(1)
      expect(yield* auditOf("DEPOSIT_EXCLUDED", byOther.depositId)).toEqual([])

      const own = { event: "charge.paid", data: { id: byHolder.externalId, payerDocument: holderCpf } }
      expect((yield* gatewayCall(client, own)).status).toBe(200)
      expect(yield* refundReasonOf(byHolder.depositId)).toBe("SELF_EXCLUDED")
      expect(yield* auditOf("DEPOSIT_EXCLUDED", byHolder.depositId)).toHaveLength(1)
      expect(yield* auditOf("DEPOSIT_THIRD_PARTY", byHolder.depositId)).toEqual([])

      expect((yield* depositOf(client, player.auth, byOther.depositId)).status).toBe("REFUNDED")
      expect((yield* depositOf(client, player.auth, byHolder.depositId)).status).toBe("REFUNDED")
      expect(yield* notificationsOf(client, player.auth)).toEqual([EXCLUDED_REFUND("R$ 15.00"), THIRD_PARTY_REFUND("R$ 25.00")])
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))
})
