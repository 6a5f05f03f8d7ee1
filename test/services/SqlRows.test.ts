/**
 * The data-access policy (src/services/platform/SqlRows.ts, Failures.ts): publications wait for the
 * transaction they were made in (and nobody waits for them), a transient conflict runs the transaction again a bounded number of
 * times, an outage is ServiceUnavailable and a bug a defect.
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { expect, it, layer } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Queue, Ref } from "effect"
import { PleaseRetry, ServiceUnavailable } from "../../src/schema/platform/Errors"
import { afterCommit, inTransaction, orUnavailable } from "../../src/services/platform/SqlRows"
import { TestDatabase } from "../support/TestDatabase"

const sqlFailure = (code: string, message = "failed") => new SqlError({ cause: Object.assign(new Error(message), { code }) })

it.effect("a publication outside a transaction starts at once, on its own fiber: the caller does not wait for it", () =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const gate = yield* Deferred.make<void>()
    const published = yield* Deferred.make<void>()
    yield* afterCommit(Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(gate)).pipe(
      Effect.zipRight(Deferred.succeed(published, undefined))
    ))
    yield* Deferred.await(started)
    expect(yield* Deferred.isDone(published)).toBe(false)
    yield* Deferred.succeed(gate, undefined)
    yield* Deferred.await(published)
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
      const published = yield* Queue.unbounded<string>()
      const publish = (what: string) => afterCommit(Queue.offer(published, what))
      const seenInside = yield* inTransaction(sql)(Effect.gen(function*() {
        yield* publish("balance")
        // A nested transaction's publications wait for the outermost commit too.
        yield* inTransaction(sql)(publish("drop"))
        yield* Effect.sleep("50 millis")
        return yield* Queue.size(published)
      }))
      expect(seenInside).toBe(0)
      expect([yield* Queue.take(published), yield* Queue.take(published)]).toEqual(["balance", "drop"])

      const failed = yield* Effect.exit(inTransaction(sql)(Effect.zipRight(publish("rolled back"), Effect.fail("no"))))
      expect(failed).toEqual(Exit.fail("no"))
      // Published in the order they are made: what follows the rollback comes next, nothing of the rollback.
      yield* publish("after")
      expect(yield* Queue.take(published)).toBe("after")
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
