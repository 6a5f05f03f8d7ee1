/** Two-factor setup through the public API (docs/rules.md#two-factor-authentication). */
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import { authenticator } from "otplib"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const codeNow = (secret: string) =>
  Effect.map(Clock.currentTimeMillis, (ms) => authenticator.clone({ epoch: ms }).generate(secret))

const generate = (client: TestClient, auth: Record<string, string>) =>
  Effect.map(client.post("/api/auth/2fa/generate", undefined, auth), (r) => r.body as { secret: string; qrCode: string; otpauthUrl: string })

layer(TestDatabase)("two-factor through the API", (it) => {
  it.scoped("generate, enable, verify, disable: the whole setup table", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { serviceName: "GamePlatform" } })
      yield* TestClock.setTime(1_800_000_000_000)
      const { auth } = yield* signIn(client, "two-factor-user")

      const setup = yield* generate(client, auth)
      expect(setup.secret).toMatch(/^[A-Z2-7]{32}$/)
      expect(setup.qrCode).toMatch(/^data:image\/png;base64,/)
      expect(setup.otpauthUrl).toMatch(/^otpauth:\/\/totp\/GamePlatform:two-factor-user\?secret=/)
      expect(setup.otpauthUrl).toContain("issuer=GamePlatform")

      const wrong = yield* client.post("/api/auth/2fa/enable", { code: "000000" }, auth)
      expect(wrong.body).toEqual({ statusCode: 400, message: "Invalid code" })
      const enabled = yield* client.post("/api/auth/2fa/enable", { code: yield* codeNow(setup.secret) }, auth)
      expect(enabled.status).toBe(200)
      expect(enabled.body.backupCodes).toHaveLength(10)
      for (const code of enabled.body.backupCodes) expect(code).toMatch(/^[0-9A-F]{8}$/)
      expect(enabled.body.message).toEqual(expect.any(String))
      expect((yield* client.get("/api/auth/me", auth)).body.twoFactorEnabled).toBe(true)

      // The code that enabled cannot be replayed; the next step's code is good.
      expect((yield* client.post("/api/auth/2fa/verify", { code: yield* codeNow(setup.secret) }, auth)).body).toEqual({
        valid: false
      })
      yield* TestClock.adjust(30_000)
      expect((yield* client.post("/api/auth/2fa/verify", { code: yield* codeNow(setup.secret) }, auth)).body).toEqual({
        valid: true
      })

      const badDisable = yield* client.post("/api/auth/2fa/disable", { code: "12345678" }, auth)
      expect(badDisable.body).toEqual({ statusCode: 400, message: "Invalid 2FA code" })
      const disabled = yield* client.post("/api/auth/2fa/disable", { code: enabled.body.backupCodes[0].toLowerCase() }, auth)
      expect(disabled.body).toEqual({ message: "2FA disabled" })
      expect((yield* client.get("/api/auth/me", auth)).body.twoFactorEnabled).toBe(false)

      for (const path of ["/api/auth/2fa/verify", "/api/auth/2fa/disable"]) {
        const response = yield* client.post(path, { code: "123456" }, auth)
        expect(response.body).toEqual({ statusCode: 400, message: "2FA not enabled" })
      }
    }))

  it.scoped("enable without a setup, or after its 300 seconds, asks for a new QR code", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const { auth } = yield* signIn(client, "late-user")
      const none = yield* client.post("/api/auth/2fa/enable", { code: "123456" }, auth)
      expect(none.body).toEqual({ statusCode: 400, message: "Setup expired. Generate new QR code." })
      const setup = yield* generate(client, auth)
      yield* TestClock.adjust(300_001)
      const late = yield* client.post("/api/auth/2fa/enable", { code: yield* codeNow(setup.secret) }, auth)
      expect(late.body).toEqual({ statusCode: 400, message: "Setup expired. Generate new QR code." })
    }))

  it.scoped("enabling needs a sign-in younger than 10 minutes: else 403 REAUTHENTICATION_REQUIRED; a fresh sign-in may", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      yield* TestClock.setTime(1_800_000_000_000)
      const reauthenticate = {
        statusCode: 403,
        error: "REAUTHENTICATION_REQUIRED",
        message: "Sign in again to change two-factor settings"
      }
      const stolen = yield* signIn(client, "reauth-user")
      yield* TestClock.adjust(10 * 60_000 + 1_000)
      // The session still works for everything else.
      expect((yield* client.get("/api/auth/me", stolen.auth)).status).toBe(200)
      const generateLate = yield* client.post("/api/auth/2fa/generate", undefined, stolen.auth)
      expect({ status: generateLate.status, body: generateLate.body }).toEqual({ status: 403, body: reauthenticate })
      const enableLate = yield* client.post("/api/auth/2fa/enable", { code: "123456" }, stolen.auth)
      expect({ status: enableLate.status, body: enableLate.body }).toEqual({ status: 403, body: reauthenticate })

      // Set up in time, enabled too late: the sign-in aged past 10 minutes in between.
      const fresh = yield* signIn(client, "reauth-user")
      yield* TestClock.adjust(9 * 60_000)
      const setup = yield* generate(client, fresh.auth)
      expect(setup.secret).toMatch(/^[A-Z2-7]{32}$/)
      yield* TestClock.adjust(60_000)
      const tooLate = yield* client.post("/api/auth/2fa/enable", { code: yield* codeNow(setup.secret) }, fresh.auth)
      expect({ status: tooLate.status, body: tooLate.body }).toEqual({ status: 403, body: reauthenticate })
      expect((yield* client.get("/api/auth/me", fresh.auth)).body.twoFactorEnabled).toBe(false)

      // A new sign-in: generate and enable as usual.
      const again = yield* signIn(client, "reauth-user")
      yield* TestClock.adjust(9 * 60_000 + 59_000)
      const secret = (yield* generate(client, again.auth)).secret
      const enabled = yield* client.post("/api/auth/2fa/enable", { code: yield* codeNow(secret) }, again.auth)
      expect(enabled.status).toBe(200)
      expect(enabled.body.backupCodes).toHaveLength(10)
      // 2FA is now on for the user, whichever of their sessions asks.
      expect((yield* client.get("/api/auth/me", stolen.auth)).body.twoFactorEnabled).toBe(true)
    }))

  it.scoped("a missing or overlong code is a validation error", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const { auth } = yield* signIn(client, "sloppy-user")
      const missing = yield* client.post("/api/auth/2fa/verify", {}, auth)
      expect(missing.status).toBe(400)
      expect(missing.body.errors).toEqual([{ field: "code", message: expect.any(String) }])
      expect((yield* client.post("/api/auth/2fa/enable", { code: "9".repeat(65) }, auth)).body.errors[0].field).toBe("code")
    }))
})
