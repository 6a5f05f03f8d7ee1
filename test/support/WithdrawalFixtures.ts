/**
 * Withdrawals for tests: request bodies, 2FA through the API, and the ledger checks every withdrawal
 * scenario ends with.
 */
import { expect } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import { authenticator } from "otplib"
import { Ledger } from "../../src/services/money/Ledger"
import type { TestClient } from "./TestApp"

export const withdrawal = (amountCents: unknown, details: { pixKeyType: string; pixKey: string } = { pixKeyType: "EMAIL", pixKey: "player@example.com" }, extra: Record<string, unknown> = {}) => ({
  amountCents,
  paymentMethod: "PIX",
  paymentDetails: details,
  ...extra
})

export const codeNow = (secret: string) =>
  Effect.map(Clock.currentTimeMillis, (ms) => authenticator.clone({ epoch: ms }).generate(secret))

/** Turns 2FA on through the API; returns the secret. Moves the clock to the next step, so a fresh code is not a replay. */
export const enableTwoFactor = (client: TestClient, auth: Record<string, string>) =>
  Effect.gen(function*() {
    const { secret } = (yield* client.post("/api/auth/2fa/generate", undefined, auth)).body as { secret: string }
    const enabled = yield* client.post("/api/auth/2fa/enable", { code: yield* codeNow(secret) }, auth)
    expect(enabled.status).toBe(200)
    yield* TestClock.adjust(30_000)
    return secret
  })

/**
 * Everything that must hold after any scenario: the ledger checks (Ledger.discrepancies,
 * docs/rules.md#ledger-checks), and per withdrawal exactly one WITHDRAWAL debit of its amount plus one
 * WITHDRAWAL_REFUND exactly when it is CANCELLED, REJECTED or FAILED; no withdrawal movement without its withdrawal.
 */
export const ledgerProblems = Effect.gen(function*() {
  const ledger = yield* Ledger
  const { discrepancies, withdrawals, orphans } = yield* Effect.all({
    discrepancies: ledger.discrepancies,
    withdrawals: ledger.withdrawalProblems,
    orphans: ledger.withdrawalOrphans
  })
  return { discrepancies, withdrawals, orphans: orphans.map(({ id }) => ({ id })) }
}).pipe(Effect.provide(Ledger.Default))

export const healthyLedger = { discrepancies: [], withdrawals: [], orphans: [] }
