/**
 * Ledger.check (what `npm run cli -- ledger check` runs, docs/rules.md#ledger-checks) on what the service writes:
 * empty after deposits, a withdrawal, its cancellation and case openings made through the API (several in the
 * same millisecond), and naming the opening whose debit is missing or the debit whose opening is.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { Ledger } from "../../src/services/money/Ledger"
import { fundedPlayer, makeCase } from "../support/GameFixtures"
import { confirmedDeposit } from "../support/PaymentFixtures"
import { makeTestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { withdrawal } from "../support/WithdrawalFixtures"

const app = makeTestClient({
  config: {
    adminIdpIds: ["root"],
    rateLimits: { ...testConfig.rateLimits, global: { count: 10_000, windowMs: 60_000 }, caseOpen: { count: 100, windowMs: 60_000 } }
  }
})

const healthy = { balances: [], deposits: [], depositOrphans: [], withdrawals: [], withdrawalOrphans: [], openings: [] }

layer(TestDatabase)("ledger check", (it) => {
  it.scoped("is empty on what the service writes, and names an opening without its debit and a debit without its opening", () =>
    Effect.gen(function*() {
      const client = yield* app
      const sql = yield* SqlClient.SqlClient
      const check = Effect.flatMap(Ledger, (ledger) => ledger.check).pipe(Effect.provide(Ledger.Default))
      yield* TestClock.setTime(1_800_000_000_000)
      const player = yield* fundedPlayer(client, "checked-player", 10_000)
      yield* confirmedDeposit(client, player.auth, 2_000)
      const kept = yield* client.post("/api/withdrawals/request", withdrawal(1_500), player.auth)
      expect(kept.status).toBe(201)
      const cancelled = yield* client.post("/api/withdrawals/request", withdrawal(1_000), player.auth)
      expect(cancelled.status).toBe(201)
      expect((yield* client.post(`/api/withdrawals/${cancelled.body.id}/cancel`, undefined, player.auth)).status).toBe(200)
      const { kase } = yield* makeCase({ priceCents: 500n })
      // The clock stands still: three openings of the same case by the same player at the same instant.
      for (let i = 0; i < 3; i++) {
        expect((yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).status).toBe(200)
      }
      expect(yield* check).toEqual(healthy)

      // One opening loses its debit (and the balance is put back as if it never was); a debit loses its opening.
      const [debit] = yield* sql<{ id: string; amountCents: string }>`
        SELECT id::text AS id, amount_cents::text AS amount_cents FROM transactions
        WHERE type = 'CASE_OPEN' AND user_id = ${BigInt(player.id)} ORDER BY id LIMIT 1`
      yield* sql`DELETE FROM transactions WHERE id = ${BigInt(debit!.id)}`
      yield* sql`UPDATE users SET balance_cents = balance_cents - ${BigInt(debit!.amountCents)} WHERE id = ${BigInt(player.id)}`
      const openings = yield* sql<{ id: string }>`SELECT id::text AS id FROM case_openings ORDER BY id`
      const found = yield* check
      expect({ ...found, openings: [] }).toEqual(healthy)
      expect(found.openings).toEqual([{
        userId: player.id,
        caseId: String(kase.id),
        priceCents: 500n,
        at: new Date(1_800_000_000_000),
        openingIds: openings.map((o) => o.id).join(","),
        debitIds: expect.any(String)
      }])
      expect(found.openings[0]!.debitIds.split(",")).toHaveLength(2)

      const [stray] = yield* sql<{ id: string }>`
        INSERT INTO transactions (user_id, type, amount_cents, balance_after_cents, counterparty, reference_type, reference_id, created_at)
        VALUES (${BigInt(player.id)}, 'CASE_OPEN', -700, 0, 'HOUSE', 'CASE', ${kase.id}, ${new Date(1_800_000_060_000)})
        RETURNING id::text AS id`
      expect((yield* check).openings.at(-1)).toEqual({
        userId: player.id,
        caseId: String(kase.id),
        priceCents: 700n,
        at: new Date(1_800_000_060_000),
        openingIds: "",
        debitIds: stray!.id
      })
    }))
})
