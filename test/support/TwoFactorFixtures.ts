/**
 * Two-factor codes and records for the service tests of docs/rules.md#two-factor-authentication, on TestClock: the codes
 * an authenticator app would show at the test's time, a code none of them is, and what a user's checks left behind.
 */
import { SqlClient } from "@effect/sql"
import { Effect, TestClock } from "effect"
import { authenticator } from "otplib"

/** A TOTP step. */
export const STEP = 30_000
/** 10 s into a 30 s step, so ±1 step stays clear of the boundaries. */
export const T0 = Date.UTC(2026, 0, 15, 12, 0, 10)

/** The TOTP of `secret` at `ms`, as an authenticator app would show it. */
export const codeAt = (secret: string, ms: number) => authenticator.clone({ epoch: ms }).generate(secret)
/** The TOTP of `secret` now, or `stepOffset` steps from now. */
export const codeNow = (secret: string, stepOffset = 0) =>
  Effect.map(TestClock.currentTimeMillis, (ms) => codeAt(secret, ms + stepOffset * STEP))
/** A 6-digit code that is none of the codes accepted now. */
export const wrongCode = (secret: string) =>
  Effect.map(TestClock.currentTimeMillis, (ms) => {
    const valid = [-1, 0, 1].map((offset) => codeAt(secret, ms + offset * STEP))
    return ["000000", "111111", "222222", "333333"].find((code) => !valid.includes(code))!
  })

/** The user's audit entries, oldest first. */
export const auditOf = (id: bigint) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ action: string; metadata: Record<string, unknown> }>`
      SELECT action, metadata FROM audit_logs WHERE user_id = ${id} ORDER BY id`)

/** The user's security alerts, oldest first. */
export const alertsOf = (id: bigint) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ title: string; message: string }>`
      SELECT title, message FROM notifications WHERE user_id = ${id} AND type = 'SECURITY_ALERT' ORDER BY id`)
