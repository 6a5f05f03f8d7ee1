import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Cause, Effect, Either, Exit, Layer, TestClock } from "effect"
import { AppConfig } from "../../src/layers/AppConfig"
import { Randomness } from "../../src/layers/Randomness"
import { Ledger } from "../../src/services/money/Ledger"
import { Users } from "../../src/services/identity/Users"
import { testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const Services = Layer.mergeAll(Ledger.Default, Users.Default).pipe(
  Layer.provide(Layer.merge(Randomness.seeded("ledger"), Layer.succeed(AppConfig, testConfig))),
  Layer.provideMerge(TestDatabase)
)

let seq = 0
const newUser = Effect.flatMap(Users, (users) => users.create({ idpId: `ledger-${++seq}`, username: `player${seq}` }))

const sumOf = (userId: bigint) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ total: string; rows: string }>`
      SELECT COALESCE(SUM(amount_cents), 0)::text AS total, COUNT(*)::text AS rows
      FROM transactions WHERE user_id = ${userId}`).pipe(Effect.map(([row]) => ({ total: BigInt(row!.total), rows: Number(row!.rows) })))

/**
 * How a movement ended: "posted", the tag of its typed failure, or the defect. The refusal is asserted as
 * itself: the CHECK on users turns an unguarded overdraft into a defect, which must fail the expectation,
 * not only the test.
 */
const outcomeOf = <A, E extends { readonly _tag: string }>(exit: Exit.Exit<A, E>) =>
  Exit.isSuccess(exit) ? "posted" : Cause.isFailType(exit.cause) ? exit.cause.error._tag : Cause.pretty(exit.cause)

layer(Services)("Ledger", (it) => {
  it.effect("credits and debits move the balance and record each movement with its balance after", () =>
    Effect.gen(function*() {
      const ledger = yield* Ledger
      const user = yield* newUser
      const deposit = yield* ledger.credit({ userId: user.id, type: "DEPOSIT", amountCents: 5000n, reference: { type: "DEPOSIT", id: 7n } })
      expect(deposit.balanceAfterCents).toBe(5000n)
      const opening = yield* ledger.debit({ userId: user.id, type: "CASE_OPEN", amountCents: 1200n, reference: { type: "CASE", id: 3n } })
      expect(opening.balanceAfterCents).toBe(3800n)
      expect((yield* (yield* Users).findById(user.id)).balanceCents).toBe(3800n)

      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ type: string; amountCents: string; balanceAfterCents: string; counterparty: string; referenceType: string; referenceId: string }>`
        SELECT type, amount_cents, balance_after_cents, counterparty, reference_type, reference_id
        FROM transactions WHERE user_id = ${user.id} ORDER BY id`
      expect(rows).toEqual([
        { type: "DEPOSIT", amountCents: "5000", balanceAfterCents: "5000", counterparty: "EXTERNAL", referenceType: "DEPOSIT", referenceId: "7" },
        { type: "CASE_OPEN", amountCents: "-1200", balanceAfterCents: "3800", counterparty: "HOUSE", referenceType: "CASE", referenceId: "3" }
      ])
    }))

  it.effect("a debit the balance does not cover fails with InsufficientBalance and changes nothing", () =>
    Effect.gen(function*() {
      const ledger = yield* Ledger
      const user = yield* newUser
      yield* ledger.credit({ userId: user.id, type: "DEPOSIT", amountCents: 999n })
      const refused = yield* Effect.exit(ledger.debit({ userId: user.id, type: "CASE_OPEN", amountCents: 1000n }))
      expect(outcomeOf(refused)).toBe("InsufficientBalance")
      expect((yield* (yield* Users).findById(user.id)).balanceCents).toBe(999n)
      expect(yield* sumOf(user.id)).toEqual({ total: 999n, rows: 1 })
    }))

  it.effect("a debit step the balance does not cover moves nothing: the statement stands, without a row", () =>
    Effect.gen(function*() {
      const ledger = yield* Ledger
      const sql = yield* SqlClient.SqlClient
      const user = yield* newUser
      yield* ledger.credit({ userId: user.id, type: "DEPOSIT", amountCents: 999n })
      // As an opening writes it: the debit's steps in one statement, whose later steps need `moved`.
      const debitOf = (amountCents: bigint) =>
        Effect.either(sql<{ balanceCents: string | null; posted: number }>`
          WITH ${ledger.debitSteps({ userId: user.id, type: "CASE_OPEN", amountCents }, new Date(0), sql`TRUE`)}
          SELECT (SELECT balance_cents FROM moved)::text AS balance_cents, (SELECT count(*) FROM posted)::int AS posted`)
      expect(yield* debitOf(1000n)).toEqual(Either.right([{ balanceCents: null, posted: 0 }]))
      expect(yield* sumOf(user.id)).toEqual({ total: 999n, rows: 1 })
      expect(yield* debitOf(999n)).toEqual(Either.right([{ balanceCents: "0", posted: 1 }]))
      expect((yield* (yield* Users).findById(user.id)).balanceCents).toBe(0n)
    }))

  it.effect("an exact debit empties the account", () =>
    Effect.gen(function*() {
      const ledger = yield* Ledger
      const user = yield* newUser
      yield* ledger.credit({ userId: user.id, type: "DEPOSIT", amountCents: 1000n })
      const posted = yield* ledger.debit({ userId: user.id, type: "WITHDRAWAL", amountCents: 1000n })
      expect(posted.balanceAfterCents).toBe(0n)
    }))

  it.effect("a movement joins the caller's transaction and rolls back with it", () =>
    Effect.gen(function*() {
      const ledger = yield* Ledger
      const sql = yield* SqlClient.SqlClient
      const user = yield* newUser
      yield* ledger.credit({ userId: user.id, type: "DEPOSIT", amountCents: 2000n })
      const failed = yield* sql.withTransaction(
        Effect.gen(function*() {
          yield* ledger.debit({ userId: user.id, type: "CASE_OPEN", amountCents: 500n })
          return yield* Effect.fail("the opening failed after the debit" as const)
        })
      ).pipe(Effect.either)
      expect(Either.isLeft(failed)).toBe(true)
      expect((yield* (yield* Users).findById(user.id)).balanceCents).toBe(2000n)
      expect(yield* sumOf(user.id)).toEqual({ total: 2000n, rows: 1 })
    }))

  it.effect("administrator adjustments are signed, keep their reason, and cannot go below zero", () =>
    Effect.gen(function*() {
      const ledger = yield* Ledger
      const user = yield* newUser
      yield* ledger.adjust({ userId: user.id, amountCents: 300n, reason: "goodwill" })
      const down = yield* ledger.adjust({ userId: user.id, amountCents: -100n, reason: "correction" })
      expect(down.balanceAfterCents).toBe(200n)
      const refused = yield* Effect.exit(ledger.adjust({ userId: user.id, amountCents: -201n, reason: "too much" }))
      expect(outcomeOf(refused)).toBe("InsufficientBalance")
      const sql = yield* SqlClient.SqlClient
      const reasons = yield* sql<{ reason: string }>`SELECT reason FROM transactions WHERE user_id = ${user.id} ORDER BY id`
      expect(reasons.map((r) => r.reason)).toEqual(["goodwill", "correction"])
    }))

  it.effect("movements are stamped with the service clock", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-03-01T12:00:00Z"))
      const user = yield* newUser
      yield* (yield* Ledger).credit({ userId: user.id, type: "DEPOSIT", amountCents: 100n })
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ createdAt: Date }>`SELECT created_at FROM transactions WHERE user_id = ${user.id}`
      expect(row!.createdAt.toISOString()).toBe("2026-03-01T12:00:00.000Z")
    }))

  it.effect("the database itself refuses a negative balance and a movement against its type's sign", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const user = yield* newUser
      const overdraw = yield* Effect.either(sql`UPDATE users SET balance_cents = -1 WHERE id = ${user.id}`)
      expect(Either.isLeft(overdraw)).toBe(true)
      const wrongSign = yield* Effect.either(sql`
        INSERT INTO transactions (user_id, type, amount_cents, balance_after_cents, counterparty)
        VALUES (${user.id}, 'CASE_OPEN', 100, 100, 'HOUSE')`)
      expect(Either.isLeft(wrongSign)).toBe(true)
      const wrongCounterparty = yield* Effect.either(sql`
        INSERT INTO transactions (user_id, type, amount_cents, balance_after_cents, counterparty)
        VALUES (${user.id}, 'DEPOSIT', 100, 100, 'HOUSE')`)
      expect(Either.isLeft(wrongCounterparty)).toBe(true)
    }))

  it.effect("50 parallel debits against a balance that covers 10: exactly 10 succeed, balance 0", () =>
    Effect.gen(function*() {
      const ledger = yield* Ledger
      const user = yield* newUser
      yield* ledger.credit({ userId: user.id, type: "DEPOSIT", amountCents: 10n * 700n })
      const results = yield* Effect.forEach(
        Array.from({ length: 50 }, (_, i) => i),
        (i) => Effect.exit(ledger.debit({ userId: user.id, type: "CASE_OPEN", amountCents: 700n, reference: { type: "CASE", id: BigInt(i + 1) } })),
        { concurrency: "unbounded" }
      )
      const succeeded = results.filter(Exit.isSuccess)
      expect(succeeded).toHaveLength(10)
      expect(results.map(outcomeOf).filter((outcome) => outcome !== "posted")).toEqual(Array(40).fill("InsufficientBalance"))
      expect((yield* (yield* Users).findById(user.id)).balanceCents).toBe(0n)
      expect(yield* sumOf(user.id)).toEqual({ total: 0n, rows: 11 })
      // Each success saw a distinct balance on its way down to 0.
      expect(new Set(succeeded.map((r) => r.value.balanceAfterCents)).size).toBe(10)
      expect(yield* ledger.discrepancies).toEqual([])
    }))

  it.effect("parallel credits and debits on many accounts keep every balance equal to its movements", () =>
    Effect.gen(function*() {
      const ledger = yield* Ledger
      const users = yield* Effect.all(Array.from({ length: 5 }, () => newUser))
      yield* Effect.forEach(users, (u) => ledger.credit({ userId: u.id, type: "DEPOSIT", amountCents: 1000n }))
      yield* Effect.forEach(
        Array.from({ length: 100 }, (_, i) => i),
        (i) => {
          const user = users[i % users.length]!
          return i % 3 === 0
            ? Effect.asVoid(ledger.credit({ userId: user.id, type: "ITEM_SELL", amountCents: 250n, stakedAt: new Date(0) }))
            : Effect.ignore(ledger.debit({ userId: user.id, type: "BATTLE_ENTRY", amountCents: 150n }))
        },
        { concurrency: 20 }
      )
      expect(yield* ledger.discrepancies).toEqual([])
    }))

  it.effect("reconciliation reports a balance that does not match its movements", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const ledger = yield* Ledger
      const user = yield* newUser
      yield* ledger.credit({ userId: user.id, type: "DEPOSIT", amountCents: 500n })
      yield* sql`UPDATE users SET balance_cents = 600 WHERE id = ${user.id}`
      expect(yield* ledger.discrepancies).toEqual([{ userId: String(user.id), balanceCents: 600n, ledgerSumCents: 500n }])
      yield* sql`UPDATE users SET balance_cents = 500 WHERE id = ${user.id}`
    }))

  it.effect("reconciliation reports movements whose user does not exist, even when they add up to 0 (no key to users: sql/0031)", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const ledger = yield* Ledger
      const [gone, zero] = [yield* newUser, yield* newUser]
      yield* ledger.credit({ userId: gone.id, type: "DEPOSIT", amountCents: 300n })
      yield* ledger.credit({ userId: zero.id, type: "DEPOSIT", amountCents: 200n })
      yield* ledger.debit({ userId: zero.id, type: "CASE_OPEN", amountCents: 200n })
      // Only with triggers and keys switched off (as a restore may do) can a user go.
      yield* sql.withTransaction(Effect.zipRight(
        sql`SET LOCAL session_replication_role = replica`,
        sql`DELETE FROM users WHERE id IN (${gone.id}, ${zero.id})`
      ))
      expect(yield* ledger.discrepancies).toEqual([
        { userId: String(gone.id), balanceCents: null, ledgerSumCents: 300n },
        { userId: String(zero.id), balanceCents: null, ledgerSumCents: 0n }
      ])
      yield* sql`DELETE FROM transactions WHERE user_id IN (${gone.id}, ${zero.id})`
      expect(yield* ledger.discrepancies).toEqual([])
    }))
})
