/**
 * Two-factor authentication against the test database: setup, the rules for codes (TOTP window,
 * backup codes), replay protection, encryption, the low-codes alert (docs/rules.md#two-factor-authentication).
 * TestClock drives both the service's time and the codes the test computes.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Redacted, TestClock } from "effect"
import { createHash } from "node:crypto"
import { authenticator } from "otplib"
import QRCode from "qrcode"
import { AppConfig } from "../../src/layers/AppConfig"
import { Randomness } from "../../src/layers/Randomness"
import { KeyValue } from "../../src/layers/stores/KeyValue"
import { Stores } from "../../src/layers/stores/Stores"
import { Audit } from "../../src/services/admin/Audit"
import { Notifications } from "../../src/services/platform/Notifications"
import * as SecretCipher from "../../src/services/identity/SecretCipher"
import { TwoFactor } from "../../src/services/identity/TwoFactor"
import { Users } from "../../src/services/identity/Users"
import { testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { alertsOf, auditOf, codeNow, T0, wrongCode } from "../support/TwoFactorFixtures"

const Services = TwoFactor.DefaultWithoutDependencies.pipe(
  Layer.provideMerge(Layer.mergeAll(Users.Default, Audit.Default, Notifications.Default)),
  Layer.provideMerge(Layer.mergeAll(Stores.memory, Layer.succeed(AppConfig, testConfig), Randomness.seeded("two-factor"))),
  Layer.provideMerge(TestDatabase)
)

const key = testConfig.secrets.twoFactorKey

let seq = 0
const newUser = Effect.flatMap(Users, (users) => users.create({ idpId: `two-factor-${++seq}`, username: `player${seq}` }))

const now = TestClock.currentTimeMillis
/** The session's sign-in, for enrolment (docs/rules.md#two-factor-reauthentication): just now. */
const signedInNow = Effect.map(now, (ms) => new Date(ms))
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** generate + enable at the current time; returns the secret and the backup codes. */
const enabledUser = Effect.gen(function*() {
  const twoFactor = yield* TwoFactor
  const user = yield* newUser
  const { secret } = yield* twoFactor.generate(user, yield* signedInNow)
  const { backupCodes } = yield* twoFactor.enable(user, yield* codeNow(secret), yield* signedInNow)
  return { user, secret, backupCodes }
})

const userRow = (id: bigint) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ twoFactorSecret: string | null; twoFactorEnabled: boolean; twoFactorBackupCodes: Array<string> }>`
      SELECT two_factor_secret, two_factor_enabled, two_factor_backup_codes FROM users WHERE id = ${id}`
  ).pipe(Effect.map(([row]) => row!))


layer(Services)("TwoFactor", (it) => {
  it.effect("disabled -> generate: a base32 secret of 20 bytes, its otpauth URL and QR code, kept 300 s", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const user = yield* newUser
      const generated = yield* twoFactor.generate(user, yield* signedInNow)

      expect(generated.secret).toMatch(/^[A-Z2-7]{32}$/)
      expect(Buffer.from(authenticator.decode(generated.secret), "hex")).toHaveLength(20)
      const url = new URL(generated.otpauthUrl)
      expect(url.protocol).toBe("otpauth:")
      expect(url.host).toBe("totp")
      expect(decodeURIComponent(url.pathname)).toBe(`/GamePlatform:${user.username}`)
      expect(url.searchParams.get("issuer")).toBe("GamePlatform")
      expect(url.searchParams.get("secret")).toBe(generated.secret)
      expect(generated.qrCode).toBe(yield* Effect.promise(() => QRCode.toDataURL(generated.otpauthUrl)))
      expect(generated.qrCode.startsWith("data:image/png;base64,")).toBe(true)

      // Kept encrypted in the store; nothing on the user yet.
      const stored = yield* (yield* KeyValue).get(`2fa-setup:${user.id}`)
      expect(Option.isSome(stored)).toBe(true)
      const storedValue = Option.getOrThrow(stored)
      expect(storedValue).not.toContain(generated.secret)
      expect(yield* SecretCipher.decrypt(key, storedValue)).toBe(generated.secret)
      expect(yield* userRow(user.id)).toEqual({ twoFactorSecret: null, twoFactorEnabled: false, twoFactorBackupCodes: [] })

      // A second generate replaces the pending secret.
      const again = yield* twoFactor.generate(user, yield* signedInNow)
      expect(again.secret).not.toBe(generated.secret)
      expect(yield* Effect.flip(twoFactor.enable(user, yield* codeNow(generated.secret), yield* signedInNow))).toMatchObject({
        _tag: "InvalidTwoFactorCode",
        message: "Invalid code"
      })
      yield* twoFactor.enable(user, yield* codeNow(again.secret), yield* signedInNow)
    }))

  it.effect("setup pending -> enable with a valid code: encrypted secret, 10 hashed backup codes, setup removed, audit", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const { backupCodes, secret, user } = yield* enabledUser

      expect(backupCodes).toHaveLength(10)
      for (const code of backupCodes) expect(code).toMatch(/^[0-9A-F]{8}$/)
      expect(new Set(backupCodes).size).toBe(10)

      const row = yield* userRow(user.id)
      expect(row.twoFactorEnabled).toBe(true)
      expect(row.twoFactorSecret).not.toBe(secret)
      expect(row.twoFactorSecret).not.toContain(secret)
      expect(row.twoFactorSecret).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/)
      expect(yield* SecretCipher.decrypt(key, row.twoFactorSecret!)).toBe(secret)
      expect(row.twoFactorBackupCodes).toEqual(backupCodes.map(sha256))

      expect(Option.isNone(yield* (yield* KeyValue).get(`2fa-setup:${user.id}`))).toBe(true)
      expect(yield* auditOf(user.id)).toEqual([{ action: "2FA_ENABLED", metadata: {} }])
      expect((yield* (yield* Users).findById(user.id)).twoFactorEnabled).toBe(true)
    }))

  it.effect("setup pending -> enable after 300 s, or with no setup: `Setup expired. Generate new QR code.`, still disabled", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const expired = yield* newUser
      const inTime = yield* newUser
      const never = yield* newUser
      const first = yield* twoFactor.generate(expired, yield* signedInNow)
      const second = yield* twoFactor.generate(inTime, yield* signedInNow)

      yield* TestClock.adjust("299 seconds")
      yield* twoFactor.enable(inTime, yield* codeNow(second.secret), yield* signedInNow)
      expect((yield* userRow(inTime.id)).twoFactorEnabled).toBe(true)

      yield* TestClock.adjust("1 second")
      const message = "Setup expired. Generate new QR code."
      expect(yield* Effect.flip(twoFactor.enable(expired, yield* codeNow(first.secret), yield* signedInNow))).toMatchObject({ _tag: "TwoFactorSetupExpired", message })
      expect(yield* Effect.flip(twoFactor.enable(never, "123456", yield* signedInNow))).toMatchObject({ _tag: "TwoFactorSetupExpired", message })
      expect(yield* userRow(expired.id)).toEqual({ twoFactorSecret: null, twoFactorEnabled: false, twoFactorBackupCodes: [] })
      expect(yield* auditOf(expired.id)).toEqual([])

      // Back to disabled: a new setup works.
      const retry = yield* twoFactor.generate(expired, yield* signedInNow)
      yield* twoFactor.enable(expired, yield* codeNow(retry.secret), yield* signedInNow)
      expect((yield* userRow(expired.id)).twoFactorEnabled).toBe(true)
    }))

  it.effect("enable with a wrong code: `Invalid code`, and the setup stays for another try", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const user = yield* newUser
      const { secret } = yield* twoFactor.generate(user, yield* signedInNow)
      for (const code of [yield* wrongCode(secret), yield* codeNow(secret, 2), yield* codeNow(secret, -2), "", "ABCDEF12"]) {
        expect(yield* Effect.flip(twoFactor.enable(user, code, yield* signedInNow))).toMatchObject({ _tag: "InvalidTwoFactorCode", message: "Invalid code" })
      }
      expect((yield* userRow(user.id)).twoFactorEnabled).toBe(false)
      yield* twoFactor.enable(user, yield* codeNow(secret, 1), yield* signedInNow)
      expect((yield* userRow(user.id)).twoFactorEnabled).toBe(true)
    }))

  it.effect("enabled: generate and enable fail with `2FA already enabled`, changing nothing", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const { secret, user } = yield* enabledUser
      const before = yield* userRow(user.id)
      yield* TestClock.adjust("1 minute")
      const failure = { _tag: "TwoFactorAlreadyEnabled", message: "2FA already enabled" }
      expect(yield* Effect.flip(twoFactor.generate(user, yield* signedInNow))).toMatchObject(failure)
      expect(yield* Effect.flip(twoFactor.enable(user, yield* codeNow(secret), yield* signedInNow))).toMatchObject(failure)
      expect(yield* userRow(user.id)).toEqual(before)
    }))

  it.effect("verify, disable and require without 2FA enabled (even with a setup pending): `2FA not enabled`", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const user = yield* newUser
      const failure = { _tag: "TwoFactorNotEnabled", message: "2FA not enabled" }
      expect(yield* Effect.flip(twoFactor.verify(user, "123456"))).toMatchObject(failure)
      const { secret } = yield* twoFactor.generate(user, yield* signedInNow)
      const code = yield* codeNow(secret)
      expect(yield* Effect.flip(twoFactor.verify(user, code))).toMatchObject(failure)
      expect(yield* Effect.flip(twoFactor.disable(user, code))).toMatchObject(failure)
      expect(yield* Effect.flip(twoFactor.require(user.id, code))).toMatchObject(failure)
      expect(yield* Effect.flip(twoFactor.require(user.id, undefined))).toMatchObject(failure)
      expect(yield* twoFactor.isEnabled(user.id)).toBe(false)
    }))

  it.effect("a TOTP is accepted one step before and after now, not two", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const { secret, user } = yield* enabledUser
      yield* TestClock.adjust("5 minutes")
      expect(yield* twoFactor.verify(user, yield* codeNow(secret, -2))).toBe(false)
      expect(yield* twoFactor.verify(user, yield* codeNow(secret, 2))).toBe(false)
      expect(yield* twoFactor.verify(user, yield* wrongCode(secret))).toBe(false)
      expect(yield* twoFactor.verify(user, yield* codeNow(secret, -1))).toBe(true)
      expect(yield* twoFactor.verify(user, yield* codeNow(secret, 0))).toBe(true)
      expect(yield* twoFactor.verify(user, yield* codeNow(secret, 1))).toBe(true)
      expect(yield* twoFactor.isEnabled(user.id)).toBe(true)
    }))

  it.effect("a TOTP accepted once is refused for the same step, everywhere; the next step's code is accepted", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const { secret, user } = yield* enabledUser
      // enable spent this step's code
      expect(yield* twoFactor.verify(user, yield* codeNow(secret))).toBe(false)

      yield* TestClock.adjust("30 seconds")
      const code = yield* codeNow(secret)
      expect(yield* twoFactor.verify(user, code)).toBe(true)
      expect(yield* twoFactor.verify(user, code)).toBe(false)
      expect(yield* Effect.flip(twoFactor.require(user.id, code))).toMatchObject({ _tag: "InvalidTwoFactorCode", message: "Invalid 2FA code" })
      expect(yield* Effect.flip(twoFactor.disable(user, code))).toMatchObject({ _tag: "InvalidTwoFactorCode", message: "Invalid 2FA code" })

      // Still inside the window one step later, and still spent. (The next step's code first: this
      // replay is the 5th wrong code, which locks: docs/rules.md#two-factor-lockout.)
      yield* TestClock.adjust("30 seconds")
      expect(yield* twoFactor.verify(user, yield* codeNow(secret))).toBe(true)
      expect(yield* twoFactor.verify(user, code)).toBe(false)
    }))

  it.effect("two parallel uses of one fresh TOTP: one wins", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const { secret, user } = yield* enabledUser
      yield* TestClock.adjust("30 seconds")
      const fresh = yield* codeNow(secret)
      const results = yield* Effect.all([twoFactor.verify(user, fresh), twoFactor.verify(user, fresh)], { concurrency: 2 })
      expect(results.filter((valid) => valid)).toHaveLength(1)
    }))

  it.effect("a backup code works once (any case); each use is audited with the codes left", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const { backupCodes, user } = yield* enabledUser
      const [first, second] = backupCodes as [string, string]
      expect(yield* twoFactor.verify(user, first)).toBe(true)
      expect(yield* twoFactor.verify(user, first)).toBe(false)
      expect(yield* twoFactor.verify(user, ` ${second.toLowerCase()} `)).toBe(true)
      expect(yield* twoFactor.verify(user, second)).toBe(false)

      expect((yield* userRow(user.id)).twoFactorBackupCodes).toEqual(backupCodes.slice(2).map(sha256))
      expect(yield* auditOf(user.id)).toEqual([
        { action: "2FA_ENABLED", metadata: {} },
        { action: "2FA_BACKUP_CODE_USED", metadata: { remainingCodes: 9 } },
        { action: "2FA_BACKUP_CODE_USED", metadata: { remainingCodes: 8 } }
      ])
      expect(yield* alertsOf(user.id)).toEqual([])
    }))

  it.effect("two parallel uses of one backup code: exactly one succeeds", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const { backupCodes, user } = yield* enabledUser
      const code = backupCodes[0]!
      const results = yield* Effect.all(
        [twoFactor.verify(user, code), twoFactor.verify(user, code), twoFactor.require(user.id, code).pipe(Effect.either)],
        { concurrency: "unbounded" }
      )
      const wins = [results[0], results[1], results[2]._tag === "Right"].filter((won) => won)
      expect(wins).toHaveLength(1)
      expect((yield* userRow(user.id)).twoFactorBackupCodes).toHaveLength(9)
      expect((yield* auditOf(user.id)).filter((row) => row.action === "2FA_BACKUP_CODE_USED")).toHaveLength(1)
    }))

  it.effect("a SECURITY_ALERT says how many backup codes are left once 3 or fewer remain", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const { backupCodes, user } = yield* enabledUser
      for (const code of backupCodes.slice(0, 6)) expect(yield* twoFactor.verify(user, code)).toBe(true)
      expect(yield* alertsOf(user.id)).toEqual([]) // 4 left

      expect(yield* twoFactor.verify(user, backupCodes[6]!)).toBe(true) // 3 left
      const alerts = yield* alertsOf(user.id)
      expect(alerts).toHaveLength(1)
      expect(alerts[0]!.message).toContain("3 2FA backup codes left")

      yield* twoFactor.require(user.id, backupCodes[7]!) // 2 left
      yield* twoFactor.verify(user, backupCodes[8]!) // 1 left
      yield* twoFactor.verify(user, backupCodes[9]!) // none left
      expect((yield* alertsOf(user.id)).map((alert) => alert.message)).toEqual([
        expect.stringContaining("3 2FA backup codes left"),
        expect.stringContaining("2 2FA backup codes left"),
        expect.stringContaining("1 2FA backup code left"),
        expect.stringContaining("no 2FA backup codes left")
      ])
    }))

  it.effect("enabled -> disable with a valid TOTP: secret and codes cleared, audit, and 2FA can be set up again", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const { secret, user } = yield* enabledUser
      yield* TestClock.adjust("30 seconds")
      expect(yield* Effect.flip(twoFactor.disable(user, yield* wrongCode(secret)))).toMatchObject({
        _tag: "InvalidTwoFactorCode",
        message: "Invalid 2FA code"
      })
      expect((yield* userRow(user.id)).twoFactorEnabled).toBe(true)

      yield* twoFactor.disable(user, yield* codeNow(secret))
      expect(yield* userRow(user.id)).toEqual({ twoFactorSecret: null, twoFactorEnabled: false, twoFactorBackupCodes: [] })
      expect((yield* auditOf(user.id)).map((row) => row.action)).toEqual(["2FA_ENABLED", "2FA_DISABLED"])
      expect(yield* Effect.flip(twoFactor.verify(user, yield* codeNow(secret, 1)))).toMatchObject({
        _tag: "TwoFactorNotEnabled",
        message: "2FA not enabled"
      })

      yield* TestClock.adjust("2 minutes")
      const again = yield* twoFactor.generate(user, yield* signedInNow)
      yield* twoFactor.enable(user, yield* codeNow(again.secret), yield* signedInNow)
      expect((yield* userRow(user.id)).twoFactorEnabled).toBe(true)
    }))

  it.effect("enabled -> disable with a backup code", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const { backupCodes, user } = yield* enabledUser
      yield* twoFactor.disable(user, backupCodes[3]!)
      expect(yield* userRow(user.id)).toEqual({ twoFactorSecret: null, twoFactorEnabled: false, twoFactorBackupCodes: [] })
      expect((yield* auditOf(user.id)).map((row) => row.action)).toEqual(["2FA_ENABLED", "2FA_BACKUP_CODE_USED", "2FA_DISABLED"])
    }))

  it.effect("require: a valid TOTP or backup code passes; a missing, wrong or spent one is `Invalid 2FA code`", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const { backupCodes, secret, user } = yield* enabledUser
      yield* TestClock.adjust("30 seconds")
      const invalid = { _tag: "InvalidTwoFactorCode", message: "Invalid 2FA code" }
      expect(yield* Effect.flip(twoFactor.require(user.id, undefined))).toMatchObject(invalid)
      expect(yield* Effect.flip(twoFactor.require(user.id, yield* wrongCode(secret)))).toMatchObject(invalid)
      expect(yield* Effect.flip(twoFactor.require(user.id, "0123ABCD"))).toMatchObject(invalid)
      const code = yield* codeNow(secret)
      yield* twoFactor.require(user.id, code)
      expect(yield* Effect.flip(twoFactor.require(user.id, code))).toMatchObject(invalid)
      yield* twoFactor.require(user.id, backupCodes[0]!)
      expect(yield* Effect.flip(twoFactor.require(user.id, backupCodes[0]!))).toMatchObject(invalid)
    }))

  it.effect("a tampered stored secret is a defect, not a wrong code", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const twoFactor = yield* TwoFactor
      const { secret, user } = yield* enabledUser
      const sql = yield* SqlClient.SqlClient
      const stored = (yield* userRow(user.id)).twoFactorSecret!
      // Flip one bit of the ciphertext (editing a base64 character could touch only padding bits).
      const [version, iv, tag, ciphertext] = stored.split(".")
      const bytes = Buffer.from(ciphertext!, "base64url")
      bytes[0] = bytes[0]! ^ 1
      const tampered = [version, iv, tag, bytes.toString("base64url")].join(".")
      yield* sql`UPDATE users SET two_factor_secret = ${tampered} WHERE id = ${user.id}`
      yield* TestClock.adjust("30 seconds")
      const exit = yield* Effect.exit(twoFactor.verify(user, yield* codeNow(secret)))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    }))
})

layer(Layer.empty)("SecretCipher", (it) => {
  it.effect("round-trips, with a fresh IV each time", () =>
    Effect.gen(function*() {
      const a = yield* SecretCipher.encrypt(key, "JBSWY3DPEHPK3PXP")
      const b = yield* SecretCipher.encrypt(key, "JBSWY3DPEHPK3PXP")
      expect(a).not.toBe(b)
      expect(a.split(".")[1]).not.toBe(b.split(".")[1])
      expect(Buffer.from(a.split(".")[1]!, "base64url")).toHaveLength(12)
      expect(yield* SecretCipher.decrypt(key, a)).toBe("JBSWY3DPEHPK3PXP")
      expect(yield* SecretCipher.decrypt(key, b)).toBe("JBSWY3DPEHPK3PXP")
    }))

  it.effect("a tampered part, a truncated tag, another key or another format is a defect", () =>
    Effect.gen(function*() {
      const value = yield* SecretCipher.encrypt(key, "JBSWY3DPEHPK3PXP")
      const [version, iv, tag, ciphertext] = value.split(".") as [string, string, string, string]
      const flip = (part: string) => {
        const bytes = Buffer.from(part, "base64url")
        bytes[0] = bytes[0]! ^ 1
        return bytes.toString("base64url")
      }
      const bad = [
        [version, flip(iv), tag, ciphertext].join("."),
        [version, iv, flip(tag), ciphertext].join("."),
        [version, iv, tag, flip(ciphertext)].join("."),
        [version, iv, tag.slice(0, 8), ciphertext].join("."),
        ["v2", iv, tag, ciphertext].join("."),
        "JBSWY3DPEHPK3PXP"
      ]
      for (const tampered of bad) {
        const exit = yield* Effect.exit(SecretCipher.decrypt(key, tampered))
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause), tampered).toBe(true)
      }
      const otherKey = Redacted.make(Buffer.alloc(32, 8))
      const exit = yield* Effect.exit(SecretCipher.decrypt(otherKey, value))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    }))
})
