/**
 * One account, every kind of money movement at once: case openings, single and bulk sales, upgrades
 * of the same entries, withdrawals, battle entries, raffle tickets, an administrator's adjustment and
 * duplicate gateway confirmations of a deposit, all in flight together. Whatever wins each race, the
 * balance never goes below zero, it equals the sum of its ledger rows (docs/rules.md#ledger-invariant), and
 * every success is recorded exactly once: one ledger row per opening, sale, withdrawal, entry and ticket purchase, one
 * credit for the deposit, and no inventory entry both sold and staked.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Ledger } from "../../src/services/money/Ledger"
import { fundedPlayer, grantItems, makeCase } from "../support/GameFixtures"
import { gatewayCall, initiateDeposit, paidEvent } from "../support/PaymentFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestResponse, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const lifted = { count: 1_000_000, windowMs: 60_000 }


type Kind = "open" | "sell" | "sellAll" | "upgrade" | "withdraw" | "battle" | "tickets" | "adjust" | "deposit"
/** What each debit below takes: a 500 case, a 3 000 withdrawal, a 500 battle of that case, two 300 tickets. */
const DEBIT_CENTS: Partial<Record<Kind, number>> = { open: 500, withdraw: 3_000, battle: 500, tickets: 600 }

// Lock waits are real time here: the per-user lock retries on the real clock.
layer(TestDatabase, { excludeTestServices: true })("every money movement at once", (it) => {
  it.scoped("no overdraft, nothing recorded twice, the balance equals its ledger", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({
        config: {
          adminIdpIds: ["root"],
          rateLimits: { ...testConfig.rateLimits, global: lifted, caseOpen: lifted, withdrawal: lifted, auth: lifted }
        }
      })
      const { items, kase } = yield* makeCase({ priceCents: 500n })
      // Far less money than everything would cost: debits race credits for it.
      const player = yield* fundedPlayer(client, "everything-at-once", 2_000)
      const admin = yield* signIn(client, "root")
      const entries = yield* grantItems(player.id, Array(3).fill(items.rare!.id))
      const raffle = yield* client.post(
        "/api/admin/raffles",
        { itemId: String(items.jackpot!.id), ticketPriceCents: 300, maxTickets: 1_000, endsAt: new Date(Date.now() + 86_400_000).toISOString() },
        admin.auth
      )
      expect(raffle.status).toBe(201)
      const deposit = yield* initiateDeposit(client, player.auth, 2_000)

      const calls: Array<readonly [Kind, Effect.Effect<TestResponse>]> = [
        ...Array.from({ length: 12 }, () => ["open", client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)] as const),
        // Entries 0-1 sold twice each, 1-2 staked twice each, and a bulk sale racing them all.
        ...entries.slice(0, 2).flatMap((id) =>
          Array.from({ length: 2 }, () => ["sell", client.post(`/api/inventory/${id}/sell`, undefined, player.auth)] as const)
        ),
        ...entries.slice(1).flatMap((id) =>
          Array.from({ length: 2 }, () =>
            ["upgrade", client.post("/api/upgrades", { fromItemId: String(items.rare!.id), toItemId: String(items.jackpot!.id), inventoryItemId: id }, player.auth)] as const)
        ),
        ["sellAll", client.post("/api/inventory/sell-all", undefined, player.auth)],
        ...Array.from({ length: 5 }, () =>
          ["withdraw", client.post("/api/withdrawals/request", { amountCents: 3_000, paymentMethod: "PIX", paymentDetails: { pixKeyType: "EMAIL", pixKey: "me@example.com" } }, player.auth)] as const
        ),
        ...Array.from({ length: 2 }, () =>
          ["battle", client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, player.auth)] as const
        ),
        ...Array.from({ length: 3 }, () => ["tickets", client.post(`/api/raffles/${raffle.body.id}/tickets`, { count: 2 }, player.auth)] as const),
        ["adjust", client.post(`/api/admin/users/${player.id}/adjust-balance`, { amountCents: 1_000, reason: "goodwill" }, admin.auth)],
        ...Array.from({ length: 3 }, () => ["deposit", gatewayCall(client, paidEvent(deposit.externalId))] as const)
      ]
      // Shuffled (the same way on every run), so that every kind competes with every other from the start.
      let seed = 42
      const shuffled = [...calls]
      for (let i = shuffled.length - 1; i > 0; i--) {
        seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
        const j = seed % (i + 1)
        ;[shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!]
      }
      const answers = yield* Effect.all(
        shuffled.map(([kind, request]) => Effect.map(request, (response) => ({ kind, response }))),
        { concurrency: "unbounded" }
      )

      const refusals = answers.filter(({ response }) => response.status >= 300)
      expect(refusals.filter(({ response }) => ![400, 409].includes(response.status))).toEqual([])
      const succeeded = (kind: Kind) => answers.filter((a) => a.kind === kind && a.response.status < 300).length
      expect(succeeded("adjust")).toBe(1)
      expect(succeeded("deposit")).toBe(3) // acknowledged every time, credited once (below)

      const sql = yield* SqlClient.SqlClient
      // The debits asked for 23 800 (those refused for another reason aside). The account got its funding (2 000),
      // the adjustment and the deposit (3 000), and its sales: 15 000 for the granted entries, but the bulk sale also
      // sells what the race won, a jackpot worth 50 000 among it once an upgrade or a drop came first. When the
      // debits asked for more than everything credited, the guard must have refused some for the balance.
      const refusedForBalance = refusals.filter(({ response }) => response.body.message === "Insufficient balance")
      expect(refusedForBalance.filter(({ kind }) => !(kind in DEBIT_CENTS))).toEqual([])
      const asked = [...answers.filter(({ response }) => response.status < 300), ...refusedForBalance]
        .reduce((sum, { kind }) => sum + (DEBIT_CENTS[kind] ?? 0), 0)
      const [{ credited }] = yield* sql<{ credited: number }>`
        SELECT coalesce(sum(amount_cents), 0)::int AS credited FROM transactions WHERE user_id = ${player.id} AND amount_cents > 0`
      if (asked > credited) {
        const outcome = answers.map(({ kind, response }) => `${kind} ${response.status} ${response.body?.message ?? ""}`)
        expect(refusedForBalance.length, JSON.stringify({ asked, credited, outcome })).toBeGreaterThan(0)
      }
      const rows = (type: string) =>
        Effect.map(
          sql<{ n: number }>`SELECT count(*)::int AS n FROM transactions WHERE user_id = ${player.id} AND type = ${type}`,
          (r) => r[0]!.n
        )
      expect(yield* rows("CASE_OPEN")).toBe(succeeded("open"))
      expect(yield* rows("WITHDRAWAL")).toBe(succeeded("withdraw"))
      expect(yield* rows("BATTLE_ENTRY")).toBe(succeeded("battle"))
      expect(yield* rows("RAFFLE_TICKET")).toBe(succeeded("tickets"))
      expect(yield* rows("DEPOSIT")).toBe(1)
      const [counted] = yield* sql<{ openings: number; withdrawals: number; battles: number; tickets: number }>`
        SELECT (SELECT count(*) FROM case_openings WHERE user_id = ${player.id})::int AS openings,
               (SELECT count(*) FROM withdrawals WHERE user_id = ${player.id})::int AS withdrawals,
               (SELECT count(*) FROM battles WHERE creator_id = ${player.id})::int AS battles,
               (SELECT coalesce(sum(last_ticket - first_ticket + 1), 0) FROM raffle_tickets WHERE user_id = ${player.id})::int AS tickets`
      expect(counted).toEqual({
        openings: succeeded("open"),
        withdrawals: succeeded("withdraw"),
        battles: succeeded("battle"),
        tickets: 2 * succeeded("tickets")
      })

      // Each granted entry ended exactly one way: still there, sold once, or staked once.
      const fates = yield* sql<{ id: string; status: string; sales: number; upgrades: number }>`
        SELECT e.id::text AS id, e.status,
               (SELECT count(*) FROM transactions t WHERE t.type = 'ITEM_SELL' AND t.reference_id = e.id)::int AS sales,
               (SELECT count(*) FROM upgrades u WHERE u.inventory_item_id = e.id)::int AS upgrades
        FROM inventory_items e WHERE e.id IN ${sql.in(entries)}`
      expect(fates).toHaveLength(entries.length)
      for (const fate of fates) {
        expect({ ...fate, id: undefined }).toEqual({
          id: undefined,
          status: fate.status,
          sales: fate.status === "SOLD" ? 1 : 0,
          upgrades: fate.status === "UPGRADED" ? 1 : 0
        })
      }

      const me = (yield* client.get("/api/auth/me", player.auth)).body
      expect(me.balanceCents).toBeGreaterThanOrEqual(0)
      expect(yield* (yield* Ledger).discrepancies).toEqual([])
    }).pipe(Effect.provide(Ledger.Default)), { timeout: 60_000 })
})
