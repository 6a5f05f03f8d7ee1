/**
 * The data-access policy (src/services/platform/SqlRows.ts, Failures.ts): publications wait for the
 * transaction they were made in, a transient conflict runs the transaction again a bounded number of
 * times, an outage is ServiceUnavailable and a bug a defect.
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { expect, it, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Ref } from "effect"
import { PleaseRetry, ServiceUnavailable } from "../../src/schema/platform/Errors"
import { afterCommit, inTransaction, orUnavailable } from "../../src/services/platform/SqlRows"
import { TestDatabase } from "../support/TestDatabase"

const sqlFailure = (code: string, message = "failed") => new SqlError({ cause: Object.assign(new Error(message), { code }) })

it.effect("a publication outside a transaction is made at once", () =>
  Effect.gen(function*() {
    const published = yield* Ref.make(0)
    yield* afterCommit(Ref.update(published, (n) => n + 1))
    expect(yield* Ref.get(published)).toBe(1)
  }))

it.effect("a publication that fails is logged, never the caller's failure", () =>
  Effect.gen(function*() {
    expect(Exit.isSuccess(yield* Effect.exit(afterCommit(Effect.fail(new ServiceUnavailable()))))).toBe(true)
  }))

// Real clock: retries wait between attempts.
layer(TestDatabase, { excludeTestServices: true })("transactions", (it) => {
  it.effect("publications made inside wait for the commit, in order, and are dropped on a rollback", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const published = yield* Ref.make<ReadonlyArray<string>>([])
      const publish = (what: string) => afterCommit(Ref.update(published, (all) => [...all, what]))
      const seenInside = yield* inTransaction(sql)(Effect.gen(function*() {
        yield* publish("balance")
        // A nested transaction's publications wait for the outermost commit too.
        yield* inTransaction(sql)(publish("drop"))
        return yield* Ref.get(published)
      }))
      expect(seenInside).toEqual([])
      expect(yield* Ref.get(published)).toEqual(["balance", "drop"])

      const failed = yield* Effect.exit(inTransaction(sql)(Effect.zipRight(publish("rolled back"), Effect.fail("no"))))
      expect(failed).toEqual(Exit.fail("no"))
      expect(yield* Ref.get(published)).toEqual(["balance", "drop"])
    }))

  it.effect("a deadlock or serialization failure runs the transaction again, at most 3 more times", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const attempts = yield* Ref.make(0)
      const failingTimes = (times: number, code: string) =>
        Effect.flatMap(Ref.updateAndGet(attempts, (n) => n + 1), (n) => n <= times ? Effect.fail(sqlFailure(code)) : Effect.succeed(n))
      expect(yield* inTransaction(sql)(failingTimes(2, "40P01"))).toBe(3)

      yield* Ref.set(attempts, 0)
      const exhausted = yield* Effect.exit(inTransaction(sql)(failingTimes(10, "40001")))
      expect(yield* Ref.get(attempts)).toBe(4)
      // Changed state, not an outage: 409 Please retry (docs/rules.md#please-retry).
      expect(exhausted).toEqual(Exit.fail(new PleaseRetry()))

      // Anything else runs once.
      yield* Ref.set(attempts, 0)
      const bug = yield* Effect.exit(inTransaction(sql)(failingTimes(10, "42601")))
      expect(yield* Ref.get(attempts)).toBe(1)
      expect(Exit.isFailure(bug) && Cause.isDie(bug.cause)).toBe(true)
    }))

  it.effect("an outage is ServiceUnavailable; a bug (bad SQL, a row that does not decode) is a defect", () =>
    Effect.gen(function*() {
      expect(yield* Effect.exit(orUnavailable(Effect.fail(sqlFailure("57P01", "terminating connection")))))
        .toEqual(Exit.fail(new ServiceUnavailable()))
      const sql = yield* SqlClient.SqlClient
      const badSql = yield* Effect.exit(orUnavailable(sql`SELEC 1`))
      expect(Exit.isFailure(badSql) && Cause.isDie(badSql.cause)).toBe(true)
    }))
})
