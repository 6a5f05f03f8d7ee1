/**
 * Two-factor authentication (docs/rules.md#two-factor-authentication).
 *
 * `generate` keeps a new secret under `2fa-setup:<userId>` for 300 s; `enable` checks a code against it,
 * stores the secret encrypted on the user with the SHA-256 digests of 10 backup codes. After that a code
 * is accepted when it is a TOTP of the stored secret (one 30 s step of tolerance each way) that was not
 * accepted before for the same step (`2fa-used:<userId>:<step>`), or when it is an unused backup code,
 * which is removed in the same conditional UPDATE that finds it, so a code cannot be used twice even
 * by parallel requests. Both `generate` and `enable` need the session's sign-in to be younger than 10
 * minutes (ReauthenticationRequired, 403). All time comes from the app Clock.
 *
 * Wrong codes count per user across every check (verify, disable, withdrawals, administrators'
 * step-up; docs/rules.md#two-factor-lockout): the 5th wrong code within 15 minutes locks every 2FA-protected
 * action of the user for 15 minutes (RateLimited, 429 with Retry-After), audited 2FA_LOCKED, with a SECURITY_ALERT.
 * A right code does not wipe earlier wrong ones. The entries keep instants of the app Clock; their
 * store time to live only cleans up.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { authenticator } from "otplib"
import QRCode from "qrcode"
import { AppConfig } from "../../layers/AppConfig"
import { KeyValue } from "../../layers/stores/KeyValue"
import { RateLimited } from "../../schema/platform/Errors"
import {
  InvalidTwoFactorCode,
  ReauthenticationRequired,
  TwoFactorAlreadyEnabled,
  TwoFactorNotEnabled,
  TwoFactorSetupExpired
} from "../../schema/identity/TwoFactor"
import { Audit } from "../admin/Audit"
import { Notifications } from "../platform/Notifications"
import * as SecretCipher from "./SecretCipher"
import { firstOf, inTransaction, rowCountOf } from "../platform/SqlRows"

const SETUP_TTL_MS = 300_000
const BACKUP_CODE_COUNT = 10
/**
 * A SECURITY_ALERT goes out when this many backup codes or fewer remain after a use
 * (docs/rules.md#low-backup-codes).
 */
const LOW_BACKUP_CODES = 3
const STEP_MS = 30_000
/** Bytes of a new secret (shown as base32, docs/rules.md#two-factor-setup). */
const SECRET_BYTES = 20
/** How recent the session's sign-in must be to enable 2FA (docs/rules.md#two-factor-reauthentication). */
export const REAUTHENTICATION_MS = 10 * 60_000

/** Wrong codes that lock (docs/rules.md#two-factor-lockout), within FAILURE_WINDOW_MS; the lock lasts LOCK_MS. */
export const MAX_FAILURES = 5
export const FAILURE_WINDOW_MS = 15 * 60_000
export const LOCK_MS = 15 * 60_000

const setupKey = (userId: bigint) => `2fa-setup:${userId}`
const usedKey = (userId: bigint, step: number) => `2fa-used:${userId}:${step}`
/** Members `<instant>:<random>` for a check in flight, `<instant>:<random>:wrong` for a wrong code. */
const attemptsKey = (userId: bigint) => `2fa-attempts:${userId}`
/** The instant the lock ends. */
const lockedKey = (userId: bigint) => `2fa-locked:${userId}`

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** 8 uppercase hex characters each, all different (a duplicate would be spent twice by one use). */
const newBackupCodes = (): Array<string> => {
  const codes = new Set<string>()
  while (codes.size < BACKUP_CODE_COUNT) codes.add(randomBytes(4).toString("hex").toUpperCase())
  return [...codes]
}

/**
 * otplib at the app Clock's time. A clone, so the shared `authenticator` is never mutated; our values
 * set as instance options, which take precedence over anything set on the shared one.
 */
const totpAt = (now: number) => {
  const totp = authenticator.clone()
  totp.options = { window: 1, epoch: now }
  return totp
}

/** The time step a 6-digit code is the TOTP of, within one step of now. */
const totpStep = (secret: string, code: string) =>
  Effect.map(Clock.currentTimeMillis, (now) => {
    if (!/^\d{6}$/.test(code)) return Option.none<number>()
    const delta = totpAt(now).checkDelta(code, secret)
    return delta === null ? Option.none<number>() : Option.some(Math.floor(now / STEP_MS) + delta)
  })

const State = Schema.Struct({
  twoFactorEnabled: Schema.Boolean,
  twoFactorSecret: Schema.NullOr(Schema.String)
})

const RemainingRow = Schema.Struct({ remaining: Schema.Number })

export class TwoFactor extends Effect.Service<TwoFactor>()("app/TwoFactor", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const transaction = inTransaction(sql)
    const kv = yield* KeyValue
    const config = yield* AppConfig
    const audit = yield* Audit
    const notifications = yield* Notifications
    const key = config.secrets.twoFactorKey

    // Callers pass the signed-in user, so an absent row is a bug, not a client error.
    const readState = (userId: bigint) =>
      Effect.flatMap(
        firstOf(State, sql`SELECT two_factor_enabled, two_factor_secret FROM users WHERE id = ${userId}`),
        (state) => state === undefined ? Effect.dieMessage(`TwoFactor: user ${userId} does not exist`) : Effect.succeed(state)
      )

    /** The encrypted secret of a user with 2FA on (docs/rules.md#two-factor-codes). */
    const enabledSecret = Effect.fnUntraced(function*(userId: bigint) {
      const state = yield* readState(userId)
      if (!state.twoFactorEnabled || state.twoFactorSecret === null) return yield* new TwoFactorNotEnabled()
      return state.twoFactorSecret
    })

    /** First acceptance of this step's TOTP wins; a replay counts as a wrong code (docs/rules.md#totp-replay). */
    const claimStep = (userId: bigint, step: number) => kv.setIfAbsent(usedKey(userId, step), "1", 3 * STEP_MS)

    /** Removes the backup code's digest if the user has it; the number left, or none when not found. */
    const spendBackupCode = Effect.fnUntraced(function*(userId: bigint, code: string) {
      const digest = sha256(code.toUpperCase())
      const now = new Date(yield* Clock.currentTimeMillis)
      return yield* transaction(spendBackupCodeInTransaction(userId, digest, now))
    })

    /** What `spendBackupCode` runs in its transaction: the digest removed, and its audit. */
    const spendBackupCodeInTransaction = Effect.fnUntraced(function*(userId: bigint, digest: string, now: Date) {
      const spent = yield* firstOf(RemainingRow, sql`
          UPDATE users
          SET two_factor_backup_codes = array_remove(two_factor_backup_codes, ${digest}::text), updated_at = ${now}
          WHERE id = ${userId} AND two_factor_enabled AND ${digest}::text = ANY (two_factor_backup_codes)
          RETURNING cardinality(two_factor_backup_codes)::int AS remaining`)
      if (spent === undefined) return Option.none<number>()
      const remainingCodes = spent.remaining
      yield* audit.record({ userId, action: "2FA_BACKUP_CODE_USED", metadata: { remainingCodes } })
      return Option.some(remainingCodes)
    })

    const warnLowCodes = (userId: bigint, remaining: number) =>
      notifications.notify(userId, {
        type: "SECURITY_ALERT",
        title: "Backup codes running low",
        message: remaining === 0
          ? "You have no 2FA backup codes left. Disable and enable 2FA again to get new ones."
          : `You have ${remaining} 2FA backup code${remaining === 1 ? "" : "s"} left. ` +
            "Disable and enable 2FA again to get new ones."
      })

    const lockedUntil = (userId: bigint) =>
      Effect.map(
        kv.get(lockedKey(userId)),
        (value) => Option.getOrElse(Option.filter(Option.map(value, Number), Number.isFinite), () => 0)
      )

    /**
     * The attempts of the last FAILURE_WINDOW_MS, one per check: `wrong` once answered with a wrong
     * code, else still in flight. Drops older members.
     */
    const recentAttempts = Effect.fnUntraced(function*(userId: bigint, now: number) {
      const attempts = new Map<string, { readonly at: number; readonly wrong: boolean }>()
      for (const member of yield* kv.setMembers(attemptsKey(userId))) {
        const [at = "", id = "", wrong] = member.split(":")
        if (Number(at) <= now - FAILURE_WINDOW_MS) yield* kv.setRemove(attemptsKey(userId), member)
        else if (wrong !== undefined || !attempts.has(id)) attempts.set(id, { at: Number(at), wrong: wrong !== undefined })
      }
      return [...attempts.values()].sort((x, y) => x.at - y.at)
    })

    const lockOut = Effect.fnUntraced(function*(userId: bigint, now: number, failures: number) {
      const until = now + LOCK_MS
      // Of two wrong codes that both reach the limit, one locks, audits and alerts. (A lock that
      // ended by the clock but is still stored is replaced.) The wrong codes stay: they leave the
      // window as the lock ends (LOCK_MS = FAILURE_WINDOW_MS).
      if (!(yield* kv.setIfAbsent(lockedKey(userId), String(until), LOCK_MS))) {
        if ((yield* lockedUntil(userId)) > now) return
        yield* kv.set(lockedKey(userId), String(until), LOCK_MS)
      }
      yield* audit.record({
        userId,
        action: "2FA_LOCKED",
        entityType: "User",
        entityId: userId,
        metadata: { failures, lockedUntil: new Date(until).toISOString() }
      })
      yield* notifications.notify(userId, {
        type: "SECURITY_ALERT",
        title: "Two-factor checks locked",
        message: `${failures} wrong 2FA codes in ${FAILURE_WINDOW_MS / 60_000} minutes: withdrawals and other ` +
          `actions that need a code are locked until ${new Date(until).toISOString()}. If this was not you, ` +
          "sign out of all sessions."
      })
    })

    const tooMany = (retryAfterMs: number) => new RateLimited({ retryAfterSeconds: Math.ceil(retryAfterMs / 1000) })

    /**
     * Runs a code check (true: the code was accepted) unless the user is locked out, counting it when
     * the code was wrong. Each check first records itself as an attempt (an atomic set insert), and
     * proceeds only when at most MAX_FAILURES attempts (wrong codes and checks in flight) are recent:
     * so parallel guesses cannot get past the count. A wrong code stays as such; an accepted code,
     * or a check that failed for another reason, removes its attempt. The 5th wrong code locks.
     */
    const guarded = Effect.fnUntraced(function*<E>(userId: bigint, check: Effect.Effect<boolean, E>) {
      const now = yield* Clock.currentTimeMillis
      const until = yield* lockedUntil(userId)
      if (until > now) return yield* tooMany(until - now)
      const attempt = `${now}:${randomBytes(6).toString("hex")}`
      const attempts = attemptsKey(userId)
      yield* kv.setAdd(attempts, attempt)
      yield* kv.touch(attempts, FAILURE_WINDOW_MS)
      const before = yield* recentAttempts(userId, now)
      // Over the count, or locked by a check that finished meanwhile: this one is not checked.
      const lockedNow = yield* lockedUntil(userId)
      if (before.length > MAX_FAILURES || lockedNow > now) {
        yield* kv.setRemove(attempts, attempt)
        return yield* tooMany(lockedNow > now ? lockedNow - now : before[0]!.at + FAILURE_WINDOW_MS - now)
      }
      const accepted = yield* check.pipe(Effect.onError(() => Effect.ignore(kv.setRemove(attempts, attempt))))
      if (!accepted) yield* kv.setAdd(attempts, `${attempt}:wrong`) // added before the removal: never under-counted
      yield* kv.setRemove(attempts, attempt)
      if (accepted) return true
      const failures = (yield* recentAttempts(userId, now)).filter((a) => a.wrong).length
      if (failures >= MAX_FAILURES) yield* lockOut(userId, now, failures)
      return false
    })

    /** A TOTP or backup code, for a user with 2FA on (docs/rules.md#two-factor-codes). */
    const accept = Effect.fnUntraced(function*(userId: bigint, encryptedSecret: string, rawCode: string, options: { readonly warnLow: boolean }) {
      const code = rawCode.trim()
      const secret = yield* SecretCipher.decrypt(key, encryptedSecret)
      const step = yield* totpStep(secret, code)
      if (Option.isSome(step)) return yield* claimStep(userId, step.value)
      const remaining = yield* spendBackupCode(userId, code)
      if (Option.isNone(remaining)) return false
      if (options.warnLow && remaining.value <= LOW_BACKUP_CODES) yield* warnLowCodes(userId, remaining.value)
      return true
    })

    /**
     * Enabling 2FA needs a sign-in younger than REAUTHENTICATION_MS (docs/rules.md#two-factor-reauthentication):
     * `signedInAt` is when the request's session was signed in.
     */
    const requireRecentSignIn = (signedInAt: Date) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        now - signedInAt.getTime() < REAUTHENTICATION_MS ? Effect.void : Effect.fail(new ReauthenticationRequired()))

    const generate = Effect.fn("TwoFactor.generate")(function*(
      user: { readonly id: bigint; readonly username: string },
      signedInAt: Date
    ) {
      yield* requireRecentSignIn(signedInAt)
      const state = yield* readState(user.id)
      if (state.twoFactorEnabled) return yield* new TwoFactorAlreadyEnabled()
      const secret = authenticator.generateSecret(SECRET_BYTES)
      const otpauthUrl = authenticator.keyuri(user.username, config.serviceName, secret)
      const qrCode = yield* Effect.promise(() => QRCode.toDataURL(otpauthUrl))
      // Encrypted in the store too: Redis is no place for a plain secret, even for 5 minutes.
      yield* kv.set(setupKey(user.id), yield* SecretCipher.encrypt(key, secret), SETUP_TTL_MS)
      return { secret, qrCode, otpauthUrl }
    })

    const enable = Effect.fn("TwoFactor.enable")(function*(user: { readonly id: bigint }, rawCode: string, signedInAt: Date) {
      yield* requireRecentSignIn(signedInAt)
      const state = yield* readState(user.id)
      if (state.twoFactorEnabled) return yield* new TwoFactorAlreadyEnabled()
      const pending = yield* kv.get(setupKey(user.id))
      if (Option.isNone(pending)) return yield* new TwoFactorSetupExpired()
      const secret = yield* SecretCipher.decrypt(key, pending.value)
      const step = yield* totpStep(secret, rawCode.trim())
      if (Option.isNone(step) || !(yield* claimStep(user.id, step.value))) return yield* new InvalidTwoFactorCode({ message: "Invalid code" })

      const backupCodes = newBackupCodes()
      const encrypted = yield* SecretCipher.encrypt(key, secret)
      const now = new Date(yield* Clock.currentTimeMillis)
      // Conditional on "not enabled yet", so of two parallel enables only one stores its codes.
      const saved = yield* transaction(enableInTransaction(user, encrypted, backupCodes, now))
      if (!saved) return yield* new TwoFactorAlreadyEnabled()
      yield* kv.delete(setupKey(user.id))
      return { backupCodes }
    })

    /** What `enable` runs in its transaction: whether 2FA was turned on (false: it already was), and its audit. */
    const enableInTransaction = Effect.fnUntraced(function*(
      user: { readonly id: bigint },
      encrypted: string,
      backupCodes: ReadonlyArray<string>,
      now: Date
    ) {
      const enabled = yield* rowCountOf(sql`
        UPDATE users
        SET two_factor_secret = ${encrypted}, two_factor_enabled = true,
            two_factor_backup_codes = ${backupCodes.map(sha256)}::text[], updated_at = ${now}
        WHERE id = ${user.id} AND NOT two_factor_enabled
        RETURNING id`)
      if (enabled === 0) return false
      yield* audit.record({ userId: user.id, action: "2FA_ENABLED" })
      return true
    })

    /**
     * True when the code is accepted; false for a wrong one (200 `{valid: false}`,
     * docs/rules.md#two-factor-verify).
     */
    const verify = Effect.fn("TwoFactor.verify")(function*(user: { readonly id: bigint }, code: string) {
      const secret = yield* enabledSecret(user.id)
      return yield* guarded(user.id, accept(user.id, secret, code, { warnLow: true }))
    })

    const disable = Effect.fn("TwoFactor.disable")(function*(user: { readonly id: bigint }, code: string) {
      const secret = yield* enabledSecret(user.id)
      // The codes are about to be cleared: warning that few are left would only confuse.
      if (!(yield* guarded(user.id, accept(user.id, secret, code, { warnLow: false })))) {
        return yield* new InvalidTwoFactorCode()
      }
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* transaction(disableInTransaction(user, now))
    })

    /** What `disable` runs in its transaction: 2FA off (if it still was on), and its audit. */
    const disableInTransaction = Effect.fnUntraced(function*(user: { readonly id: bigint }, now: Date) {
      const disabled = yield* rowCountOf(sql`
        UPDATE users
        SET two_factor_secret = NULL, two_factor_enabled = false, two_factor_backup_codes = '{}', updated_at = ${now}
        WHERE id = ${user.id} AND two_factor_enabled
        RETURNING id`)
      // A parallel disable that got here first has written the audit row already.
      if (disabled > 0) yield* audit.record({ userId: user.id, action: "2FA_DISABLED" })
    })

    /** A code for a sensitive operation (withdrawals that need one, administrators' money actions). */
    const requireCode = Effect.fn("TwoFactor.require")(function*(userId: bigint, code: string | undefined) {
      const secret = yield* enabledSecret(userId)
      // No code is no guess: refused, not counted.
      if (code === undefined || !(yield* guarded(userId, accept(userId, secret, code, { warnLow: true })))) return yield* new InvalidTwoFactorCode()
    })

    /** Whether the user has 2FA on, read from the database (a session's copy of the user may be stale). */
    const isEnabled = Effect.fn("TwoFactor.isEnabled")(function*(userId: bigint) {
      const state = yield* readState(userId)
      return state.twoFactorEnabled && state.twoFactorSecret !== null
    })

    return { generate, enable, verify, disable, require: requireCode, isEnabled } as const
  }),
  dependencies: [Audit.Default, Notifications.Default]
}) {}
