/**
 * The 2FA lock-out (docs/rules.md#two-factor-lockout) on the stores the service runs with: Redis when REDIS_URL
 * is set (several instances share the count), else the in-memory twins. Wrong codes count per user across verify,
 * disable and require; the 5th within 15 minutes locks every check for 15 minutes.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { AppConfig } from "../../src/layers/AppConfig"
import { Randomness } from "../../src/layers/Randomness"
import { Audit } from "../../src/services/admin/Audit"
import { Notifications } from "../../src/services/platform/Notifications"
import { FAILURE_WINDOW_MS, LOCK_MS, MAX_FAILURES, TwoFactor } from "../../src/services/identity/TwoFactor"
import { Users } from "../../src/services/identity/Users"
import { testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { TestStores } from "../support/TestStores"
import { alertsOf, auditOf, codeAt, codeNow, STEP, T0, wrongCode } from "../support/TwoFactorFixtures"

const Services = TwoFactor.DefaultWithoutDependencies.pipe(
  Layer.provideMerge(Layer.mergeAll(Users.Default, Audit.Default, Notifications.Default)),
  Layer.provideMerge(Layer.mergeAll(TestStores, Layer.succeed(AppConfig, testConfig), Randomness.seeded("lockout"))),
  Layer.provideMerge(TestDatabase)
)


let seq = 0
const newUser = Effect.flatMap(Users, (users) => users.create({ idpId: `lockout-${++seq}`, username: `locked${seq}` }))

const now = TestClock.currentTimeMillis

const enabledUser = Effect.gen(function*() {
  const twoFactor = yield* TwoFactor
  const user = yield* newUser
  const signedInAt = new Date(yield* now)
  const { secret } = yield* twoFactor.generate(user, signedInAt)
  yield* twoFactor.enable(user, yield* codeNow(secret), signedInAt)
  return { user, secret }
})

const userRow = (id: bigint) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ twoFactorEnabled: boolean }>`SELECT two_factor_enabled FROM users WHERE id = ${id}`
  ).pipe(Effect.map(([row]) => row!))


layer(Services)("2FA lock-out", (it) => {
  it.effect("5 wrong codes in 15 minutes, across verify, disable and require, lock every check for 15 minutes", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const { secret, user } = yield* enabledUser
      yield* TestClock.adjust("30 seconds")
      const wrong = yield* wrongCode(secret)
      expect(yield* twoFactor.verify(user, wrong)).toBe(false)
      expect(yield* twoFactor.verify(user, wrong)).toBe(false)
      expect(yield* Effect.flip(twoFactor.disable(user, wrong))).toMatchObject({ message: "Invalid 2FA code" })
      // A right code in between does not wipe the wrong ones.
      expect(yield* twoFactor.verify(user, yield* codeNow(secret))).toBe(true)
      expect(yield* Effect.flip(twoFactor.require(user.id, "0123ABCD"))).toMatchObject({ message: "Invalid 2FA code" })
      yield* TestClock.adjust("1 minute")
      // The 5th is still answered as a wrong code; it locks.
      expect(yield* Effect.flip(twoFactor.require(user.id, wrong))).toMatchObject({ message: "Invalid 2FA code" })

      const locked = { _tag: "RateLimited", message: "Too many requests", retryAfterSeconds: 900 }
      yield* TestClock.adjust("30 seconds")
      const right = yield* codeNow(secret)
      expect(yield* Effect.flip(twoFactor.verify(user, right))).toMatchObject({ ...locked, retryAfterSeconds: 870 })
      expect(yield* Effect.flip(twoFactor.disable(user, right))).toMatchObject({ ...locked, retryAfterSeconds: 870 })
      expect(yield* Effect.flip(twoFactor.require(user.id, right))).toMatchObject({ ...locked, retryAfterSeconds: 870 })
      expect((yield* userRow(user.id)).twoFactorEnabled).toBe(true)
      const audits = (yield* auditOf(user.id)).filter((row) => row.action === "2FA_LOCKED")
      expect(audits).toEqual([{ action: "2FA_LOCKED", metadata: { failures: 5, lockedUntil: new Date(T0 + 30_000 + 60_000 + 900_000).toISOString() } }])
      const alerts = yield* alertsOf(user.id)
      expect(alerts).toEqual([{ title: "Two-factor checks locked", message: expect.stringContaining("5 wrong 2FA codes in 15 minutes") }])

      // 15 minutes after the 5th: open again, with a clean slate.
      yield* TestClock.adjust(LOCK_MS - 30_000)
      expect(yield* twoFactor.verify(user, yield* codeNow(secret))).toBe(true)
      for (let i = 0; i < MAX_FAILURES - 1; i++) expect(yield* twoFactor.verify(user, yield* wrongCode(secret))).toBe(false)
      expect((yield* auditOf(user.id)).filter((row) => row.action === "2FA_LOCKED")).toHaveLength(1)
    }))

  it.effect("wrong codes older than 15 minutes no longer count", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const { secret, user } = yield* enabledUser
      for (let i = 0; i < 4; i++) expect(yield* twoFactor.verify(user, yield* wrongCode(secret))).toBe(false)
      yield* TestClock.adjust(FAILURE_WINDOW_MS)
      for (let i = 0; i < 4; i++) expect(yield* twoFactor.verify(user, yield* wrongCode(secret))).toBe(false)
      expect(yield* twoFactor.verify(user, yield* codeNow(secret))).toBe(true)
      expect((yield* auditOf(user.id)).filter((row) => row.action === "2FA_LOCKED")).toEqual([])
    }))

  it.effect("parallel guesses: at most 5 are ever checked, the rest are refused, and the 5th wrong one locks", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const { secret, user } = yield* enabledUser
      yield* TestClock.adjust("30 seconds")
      const guesses = Array.from({ length: 40 }, (_, i) => String(100_000 + i * 7919).padStart(6, "0"))
        .filter((code) => ![-1, 0, 1].some((offset) => codeAt(secret, T0 + 30_000 + offset * STEP) === code))
      const results = yield* Effect.all(
        guesses.map((code) => Effect.either(twoFactor.verify(user, code))),
        { concurrency: "unbounded" }
      )
      const checked = results.filter((r) => r._tag === "Right")
      expect(checked.length).toBeLessThanOrEqual(MAX_FAILURES)
      expect(checked.every((r) => r._tag === "Right" && r.right === false)).toBe(true)
      expect(results.filter((r) => r._tag === "Left").every((r) => r._tag === "Left" && r.left._tag === "RateLimited")).toBe(true)
      // Guesses refused while others were in flight were not checked and do not count; one by one,
      // the rest of the 5 are checked, and then the user is locked.
      let more = 0
      while (true) {
        const next = yield* Effect.either(twoFactor.verify(user, yield* wrongCode(secret)))
        if (next._tag === "Left") {
          expect(next.left._tag).toBe("RateLimited")
          break
        }
        expect(next.right).toBe(false)
        more++
      }
      expect(checked.length + more).toBe(MAX_FAILURES)
      expect(yield* Effect.flip(twoFactor.verify(user, yield* codeNow(secret)))).toMatchObject({ _tag: "RateLimited" })
      expect((yield* auditOf(user.id)).filter((row) => row.action === "2FA_LOCKED")).toHaveLength(1)
    }))
})
