/**
 * Deposits under JURISDICTION=BR (docs/rules.md#deposits-br): PIX only (422 for card and crypto on both paths), and
 * a charge.paid whose payer is not the account holder is never credited but refunded through the gateway
 * (docs/rules.md#deposit-third-party), once, however often the event arrives; a failed refund is asked again by a
 * later charge.paid and by the refund job (docs/rules.md#deposit-refund-retry). Under NONE none of it applies.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, Layer, Ref, TestClock } from "effect"
import type { Jurisdiction } from "../../src/layers/AppConfig"
import { SandboxGateway } from "../../src/layers/gateway/SandboxGateway"
import { PaymentGateway, type RefundRequest } from "../../src/layers/PaymentGateway"
import { Deposits } from "../../src/services/money/Deposits"
import { Ledger } from "../../src/services/money/Ledger"
import { balanceOf } from "../support/GameFixtures"
import { cpfOf, formatted } from "../support/Cpf"
import { gatewayCall, initiateDeposit, notificationsOf } from "../support/PaymentFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestAppOptions, type TestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { makeTestGateway } from "../support/TestGateway"

const NOON_UTC = Date.parse("2026-11-26T12:00:00Z")

const options = (jurisdiction: Jurisdiction, extra: TestAppOptions = {}): TestAppOptions => ({
  ...extra,
  config: { jurisdiction, adminIdpIds: ["root"] }
})

/** Distinct CPFs per test: the file's tests share one database, and a CPF verifies one account. */
let nine = 200_000_000
const nextCpf = () => cpfOf(String(++nine))

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

const depositOf = (client: TestClient, auth: Record<string, string>, id: string) =>
  Effect.map(client.get("/api/payment/deposits?limit=100", auth), (r) =>
    (r.body.deposits as ReadonlyArray<{ id: string; status: string }>).find((d) => d.id === id)!)

const auditOf = (action: string, entityId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ metadata: Record<string, unknown> }>`
      SELECT metadata FROM audit_logs WHERE action = ${action} AND entity_id = ${entityId} ORDER BY id`)

/** Ledger rows of deposits: a refunded deposit has none. */
const depositCredits = (depositId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ count: number }>`
        SELECT count(*)::int AS count FROM transactions WHERE type = 'DEPOSIT' AND reference_type = 'DEPOSIT'
          AND reference_id = ${depositId}`,
      (rows) => rows[0]!.count
    ))

const ledgerDiscrepancies = Effect.flatMap(Ledger, (ledger) => ledger.discrepancies).pipe(Effect.provide(Ledger.Default))

/** The embedded sandbox gateway, every refund it is asked for recorded. */
const recordingSandbox = Effect.gen(function*() {
  const refunds = yield* Ref.make<ReadonlyArray<RefundRequest>>([])
  const layer = Layer.effect(
    PaymentGateway,
    Effect.map(PaymentGateway, (sandbox) => ({
      ...sandbox,
      refund: (request: RefundRequest) => Effect.zipRight(Ref.update(refunds, (all) => [...all, request]), sandbox.refund(request))
    }))
  ).pipe(Layer.provide(SandboxGateway))
  return { layer, refunds: Ref.get(refunds) }
})

const REFUNDED_MESSAGE = (amount: string) => ({
  type: "DEPOSIT_REFUNDED",
  title: "Deposit refunded",
  message: `Your deposit of ${amount} was paid from an account that is not in your name, so it was not credited: ` +
    "the payment has been returned to the payer."
})

layer(TestDatabase)("deposits under JURISDICTION=BR", (it) => {
  it.scoped("PIX only: CREDIT_CARD and CRYPTO are 422 on both paths, declared in the OpenAPI document; nothing is charged", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(options("BR", { gateway: gateway.layer }))
      const player = yield* verifiedPlayer(client, "br-methods", nextCpf())
      for (const path of ["/api/payment/deposit/initiate", "/api/deposits/initiate"]) {
        for (const method of ["CREDIT_CARD", "CRYPTO"]) {
          const refused = yield* client.post(path, { amountCents: 5_000, method }, player.auth)
          expect(refused.status, `${path} ${method}`).toBe(422)
          expect(refused.body).toEqual({ statusCode: 422, message: "Payment method not allowed in this jurisdiction" })
        }
        expect((yield* client.post(path, { amountCents: 5_000, method: "PIX" }, player.auth)).status).toBe(201)
      }
      expect((yield* gateway.charges).map((c) => c.method)).toEqual(["PIX", "PIX"])
      const openApi = (yield* client.get("/api/docs-json")).body
      for (const path of ["/api/payment/deposit/initiate", "/api/deposits/initiate"]) {
        expect(JSON.stringify(openApi.paths[path].post.responses["422"]), path).toContain("#/components/schemas/PaymentMethodNotAllowed")
      }
      expect(openApi.components.schemas.PaymentMethodNotAllowed.properties.statusCode).toMatchObject({ enum: [422] })
      // The sandbox's pay endpoint documents its optional body.
      const pay = openApi.paths["/api/sandbox/charges/{externalId}/{action}"].post
      expect(pay.requestBody).toMatchObject({ required: false, content: { "application/json": { schema: { type: "object" } } } })
    }))

  it.scoped("the sandbox: paid by the holder (the default) is credited; by a third party's CPF, refunded once, never credited", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const sandbox = yield* recordingSandbox
      const client = yield* makeTestClient(options("BR", { gateway: sandbox.layer }))
      const holderCpf = nextCpf()
      const player = yield* verifiedPlayer(client, "br-sandbox", holderCpf)

      // No body: the owner pays. Also with the holder's CPF named, punctuated.
      const own = yield* initiateDeposit(client, player.auth, 5_000)
      const paid = yield* client.post(`/api/sandbox/charges/${own.externalId}/pay`, undefined, player.auth)
      expect(paid.body).toMatchObject({ event: "charge.paid", callbackStatus: 200, deposit: { status: "CONFIRMED" } })
      const named = yield* initiateDeposit(client, player.auth, 1_000)
      const paidNamed = yield* client.post(`/api/sandbox/charges/${named.externalId}/pay`, { payerCpf: formatted(holderCpf) }, player.auth)
      expect(paidNamed.body).toMatchObject({ deposit: { status: "CONFIRMED" } })
      expect(yield* balanceOf(client, player.auth)).toBe(6_000)

      // A third party pays: not credited, REFUNDED, the gateway asked once for the whole payment.
      const other = yield* initiateDeposit(client, player.auth, 2_500)
      const thirdParty = cpfOf("987654321")
      const refused = yield* client.post(`/api/sandbox/charges/${other.externalId}/pay`, { payerCpf: thirdParty }, player.auth)
      expect(refused.status).toBe(200)
      expect(refused.body).toMatchObject({ event: "charge.paid", callbackStatus: 200, deposit: { id: other.depositId, status: "REFUNDED" } })
      expect(yield* balanceOf(client, player.auth)).toBe(6_000)
      expect(yield* depositCredits(other.depositId)).toBe(0)
      expect(yield* sandbox.refunds).toEqual([
        { depositId: BigInt(other.depositId), externalId: other.externalId, amountCents: 2_500n }
      ])
      const notes = yield* notificationsOf(client, player.auth)
      expect(notes[0]).toEqual(REFUNDED_MESSAGE("R$ 25.00"))
      expect(notes.filter((n) => n.type === "DEPOSIT_REFUNDED")).toHaveLength(1)
      expect((yield* auditOf("DEPOSIT_THIRD_PARTY", other.depositId)).map((a) => a.metadata)).toEqual([
        { externalId: other.externalId, amount: 2_500, previousStatus: "PENDING", payer: "***.654.321-**" }
      ])
      expect((yield* auditOf("DEPOSIT_REFUNDED", other.depositId)).map((a) => a.metadata)).toEqual([
        { externalId: other.externalId, refundId: `re_sandbox_${other.depositId}`, amount: 2_500 }
      ])

      // Paid again (a new event): acknowledged, still REFUNDED, no second refund, nothing credited.
      const again = yield* client.post(`/api/sandbox/charges/${other.externalId}/pay`, { payerCpf: thirdParty }, player.auth)
      expect(again.body).toMatchObject({ callbackStatus: 200, deposit: { status: "REFUNDED" } })
      const byHolder = yield* client.post(`/api/sandbox/charges/${other.externalId}/pay`, undefined, player.auth)
      expect(byHolder.body).toMatchObject({ callbackStatus: 200, deposit: { status: "REFUNDED" } })
      expect(yield* sandbox.refunds).toHaveLength(1)
      expect(yield* balanceOf(client, player.auth)).toBe(6_000)

      // An invalid payerCpf is a 400 on its field; a body of another type, 415.
      const bad = yield* client.post(`/api/sandbox/charges/${own.externalId}/pay`, { payerCpf: "123" }, player.auth)
      expect(bad.status).toBe(400)
      expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual(["payerCpf"])
      const form = yield* client.request(`/api/sandbox/charges/${own.externalId}/pay`, {
        method: "POST",
        headers: { ...player.auth, "content-type": "text/plain" },
        body: "payerCpf=1"
      })
      expect(form.status).toBe(415)
      expect(yield* ledgerDiscrepancies).toEqual([])
    }))

  it.scoped("the callback: no payerDocument is a third party; a replayed event is a duplicate; no second refund", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(options("BR", { gateway: gateway.layer }))
      const holderCpf = nextCpf()
      const player = yield* verifiedPlayer(client, "br-callback", holderCpf)
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)

      const anonymous = yield* initiateDeposit(client, player.auth, 3_000)
      const event = { event: "charge.paid", data: { id: anonymous.externalId } }
      expect((yield* gatewayCall(client, event, { timestamp: now })).body).toEqual({ received: true })
      expect((yield* depositOf(client, player.auth, anonymous.depositId)).status).toBe("REFUNDED")
      // The same signed event again: a duplicate, nothing done.
      expect((yield* gatewayCall(client, event, { timestamp: now })).body).toEqual({ received: true, duplicate: true })
      // Sent anew (another timestamp), even naming the holder: acknowledged, nothing done.
      const renamed = { event: "charge.paid", data: { id: anonymous.externalId, payerDocument: holderCpf } }
      expect((yield* gatewayCall(client, renamed, { timestamp: now - 1 })).body).toEqual({ received: true })
      expect((yield* gateway.refunds).map((r) => r.depositId)).toEqual([BigInt(anonymous.depositId)])
      expect((yield* auditOf("DEPOSIT_THIRD_PARTY", anonymous.depositId)).map((a) => a.metadata.payer)).toEqual([null])

      // The holder's document, bare: credited.
      const own = yield* initiateDeposit(client, player.auth, 4_000)
      const ownEvent = { event: "charge.paid", data: { id: own.externalId, payerDocument: holderCpf } }
      expect((yield* gatewayCall(client, ownEvent, { timestamp: now })).status).toBe(200)
      expect((yield* depositOf(client, player.auth, own.depositId)).status).toBe("CONFIRMED")
      expect(yield* balanceOf(client, player.auth)).toBe(4_000)
      expect((yield* notificationsOf(client, player.auth)).map((n) => n.type)).toEqual(["DEPOSIT_CONFIRMED", "DEPOSIT_REFUNDED"])

      // A late payment by a third party (the deposit had expired): refunded, not credited as paid late.
      const late = yield* initiateDeposit(client, player.auth, 1_500)
      expect((yield* gatewayCall(client, { event: "charge.expired", data: { id: late.externalId } })).status).toBe(200)
      const lateEvent = { event: "charge.paid", data: { id: late.externalId, payerDocument: cpfOf("111222333") } }
      expect((yield* gatewayCall(client, lateEvent, { timestamp: now })).status).toBe(200)
      expect((yield* depositOf(client, player.auth, late.depositId)).status).toBe("REFUNDED")
      expect((yield* auditOf("DEPOSIT_THIRD_PARTY", late.depositId)).map((a) => a.metadata.previousStatus)).toEqual(["EXPIRED"])
      expect(yield* auditOf("DEPOSIT_PAID_LATE", late.depositId)).toEqual([])
      expect(yield* balanceOf(client, player.auth)).toBe(4_000)
      expect(yield* ledgerDiscrepancies).toEqual([])
    }))

  it.scoped("a failed refund leaves REFUND_PENDING (not credited, not told); a later charge.paid and the refund job ask again", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(options("BR", { gateway: gateway.layer }))
      const player = yield* verifiedPlayer(client, "br-refund-down", nextCpf())
      const deposits = yield* client.service(Deposits)
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const deposit = yield* initiateDeposit(client, player.auth, 2_000)
      const paid = (at: number) =>
        gatewayCall(client, { event: "charge.paid", data: { id: deposit.externalId, payerDocument: cpfOf("555666777") } }, { timestamp: at })

      yield* gateway.failRefunds("gateway down")
      // The event is taken (200): the refund is ours to retry, not the gateway's to redeliver.
      expect((yield* paid(now)).status).toBe(200)
      expect((yield* depositOf(client, player.auth, deposit.depositId)).status).toBe("REFUND_PENDING")
      expect(yield* notificationsOf(client, player.auth)).toEqual([])
      expect(yield* deposits.retryRefunds()).toBe(0)
      // An admin sees it among the REFUND_PENDING deposits.
      const admin = yield* signIn(client, "root")
      const listed = (yield* client.get("/api/admin/deposits?status=REFUND_PENDING", admin.auth)).body.deposits
      expect(listed.map((d: { id: string }) => d.id)).toEqual([deposit.depositId])
      // A later charge.paid (sent anew) asks again; still down.
      expect((yield* paid(now - 1)).status).toBe(200)
      expect(yield* gateway.refunds).toHaveLength(3)

      yield* gateway.failRefunds(undefined)
      expect(yield* deposits.retryRefunds()).toBe(1)
      expect(yield* deposits.retryRefunds()).toBe(0)
      expect((yield* depositOf(client, player.auth, deposit.depositId)).status).toBe("REFUNDED")
      expect(yield* notificationsOf(client, player.auth)).toEqual([REFUNDED_MESSAGE("R$ 20.00")])
      expect((yield* gateway.refunds).every((r) => r.depositId === BigInt(deposit.depositId))).toBe(true)
      expect(yield* gateway.refunds).toHaveLength(4)
      expect(yield* balanceOf(client, player.auth)).toBe(0)
      expect(yield* depositCredits(deposit.depositId)).toBe(0)
      expect(yield* ledgerDiscrepancies).toEqual([])
    }))
})

layer(TestDatabase)("deposits under JURISDICTION=NONE", (it) => {
  it.scoped("every method is allowed and the payer is not looked at: a third party's payment is credited", () =>
    Effect.gen(function*() {
      const gateway = yield* makeTestGateway()
      const client = yield* makeTestClient(options("NONE", { gateway: gateway.layer }))
      const player = yield* signIn(client, "none-depositor")
      expect((yield* client.post("/api/payment/deposit/initiate", { amountCents: 5_000, method: "CREDIT_CARD" }, player.auth)).status)
        .toBe(201)
      expect((yield* client.post("/api/deposits/initiate", { amountCents: 5_000, method: "CRYPTO" }, player.auth)).status).toBe(201)
      const deposit = yield* initiateDeposit(client, player.auth, 3_000)
      const event = { event: "charge.paid", data: { id: deposit.externalId, payerDocument: cpfOf("987654321") } }
      expect((yield* gatewayCall(client, event)).status).toBe(200)
      expect((yield* depositOf(client, player.auth, deposit.depositId)).status).toBe("CONFIRMED")
      expect(yield* balanceOf(client, player.auth)).toBe(3_000)
      expect(yield* gateway.refunds).toEqual([])
    }))

  it.scoped("the sandbox pays without a body, or with a payerCpf, and credits", () =>
    Effect.gen(function*() {
      const sandbox = yield* recordingSandbox
      const client = yield* makeTestClient(options("NONE", { gateway: sandbox.layer }))
      const player = yield* signIn(client, "none-sandbox")
      const a = yield* initiateDeposit(client, player.auth, 1_000)
      const b = yield* initiateDeposit(client, player.auth, 1_000)
      expect((yield* client.post(`/api/sandbox/charges/${a.externalId}/pay`, undefined, player.auth)).body)
        .toMatchObject({ deposit: { status: "CONFIRMED" } })
      expect((yield* client.post(`/api/sandbox/charges/${b.externalId}/pay`, { payerCpf: cpfOf("987654321") }, player.auth)).body)
        .toMatchObject({ deposit: { status: "CONFIRMED" } })
      expect(yield* balanceOf(client, player.auth)).toBe(2_000)
      expect(yield* sandbox.refunds).toEqual([])
    }))
})
