/**
 * Players known by CPF under JURISDICTION=BR (docs/rules.md#identity-verification, docs/rules.md#compliance-status,
 * docs/rules.md#identity-key) through the public API, on the embedded sandbox KYC provider.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Option, Redacted, TestClock } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { isAdultOn } from "../../src/services/identity/Identities"
import { cpfOf, formatted } from "../support/Cpf"
import { signIn } from "../support/SignIn"
import { makeTestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

/** 2026-11-26 12:00 UTC: 09:00 in São Paulo. */
const NOON_UTC = Date.parse("2026-11-26T12:00:00Z")
const BR = { config: { jurisdiction: "BR" as const } }

layer(TestDatabase)("identity (JURISDICTION=BR)", (it) => {
  it.scoped("a valid CPF, with or without punctuation, is verified and shown masked; then it cannot change", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const client = yield* makeTestClient(BR)
      const { auth } = yield* signIn(client, "cpf-holder")
      const before = yield* client.get("/api/users/me/compliance", auth)
      expect(before.body).toMatchObject({ jurisdiction: "BR", identity: { status: "UNVERIFIED" } })

      const cpf = cpfOf("123456789")
      expect(cpf).toBe("12345678909")
      const verified = yield* client.post(
        "/api/users/me/identity",
        { cpf: formatted(cpf), fullName: "Maria da Silva", birthDate: "1990-05-17" },
        auth
      )
      expect(verified.status).toBe(200)
      expect(verified.body).toEqual({ status: "VERIFIED", cpf: "***.456.789-**", fullName: "Maria da Silva", birthDate: "1990-05-17" })
      expect((yield* client.get("/api/users/me/compliance", auth)).body).toMatchObject({
        jurisdiction: "BR",
        identity: { status: "VERIFIED", cpf: "***.456.789-**", fullName: "Maria da Silva", birthDate: "1990-05-17" }
      })

      // Stored encrypted and hashed: neither column holds the digits.
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ cpfHash: string; cpfEncrypted: string; cpfMasked: string }>`
        SELECT cpf_hash, cpf_encrypted, cpf_masked FROM user_identities`
      expect(row!.cpfHash).toMatch(/^[0-9a-f]{64}$/)
      expect(row!.cpfEncrypted).toMatch(/^v1\./)
      expect(JSON.stringify(row)).not.toContain("456789")
      expect(row!.cpfMasked).toBe("***.456.789-**")

      // Once verified, the user cannot change it (bare digits this time, another name).
      const again = yield* client.post("/api/users/me/identity", { cpf: cpfOf("529982247"), fullName: "Other Name", birthDate: "1991-01-01" }, auth)
      expect(again.status).toBe(409)
      expect(again.body).toEqual({ statusCode: 409, message: "Identity already verified" })
    }))

  it.scoped("an invalid CPF (length, check digits, all one digit) is 400 with errors[{field: 'cpf'}]", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const client = yield* makeTestClient(BR)
      const { auth } = yield* signIn(client, "bad-cpf")
      for (const cpf of ["1234567890", "123.456.789-00", "111.111.111-11", "00000000000", "123456789091", "abc.def.ghi-jk"]) {
        const response = yield* client.post("/api/users/me/identity", { cpf, fullName: "Maria da Silva", birthDate: "1990-05-17" }, auth)
        expect(response.status, cpf).toBe(400)
        expect(response.body.statusCode).toBe(400)
        expect(response.body.errors.map((e: { field: string }) => e.field), cpf).toEqual(["cpf"])
      }
      const badDate = yield* client.post("/api/users/me/identity", { cpf: cpfOf("123456789"), fullName: "Maria da Silva", birthDate: "1990-02-30" }, auth)
      expect(badDate.status).toBe(400)
      expect(badDate.body.errors.map((e: { field: string }) => e.field)).toEqual(["birthDate"])
    }))

  it.scoped("under 18 on today's date in America/Sao_Paulo is 403 UNDERAGE; the 18th birthday there is enough", () =>
    Effect.gen(function*() {
      // 02:30 UTC on the 26th is still the 25th (23:30) in São Paulo.
      yield* TestClock.setTime(Date.parse("2026-11-26T02:30:00Z"))
      const client = yield* makeTestClient(BR)
      const { auth } = yield* signIn(client, "young-player")
      const request = { cpf: cpfOf("987654321"), fullName: "Joao Pereira", birthDate: "2008-11-26" }
      const young = yield* client.post("/api/users/me/identity", request, auth)
      expect(young.status).toBe(403)
      expect(young.body).toEqual({ statusCode: 403, error: "UNDERAGE", message: "Players must be 18 or older" })
      expect((yield* client.get("/api/users/me/compliance", auth)).body.identity).toEqual({ status: "UNVERIFIED" })
      // Midnight in São Paulo: 18 today.
      yield* TestClock.setTime(Date.parse("2026-11-26T03:00:00Z"))
      expect((yield* client.post("/api/users/me/identity", request, auth)).status).toBe(200)
    }))

  it.scoped("the provider refuses an irregular CPF (sandbox: first digits 000): 422 IDENTITY_REFUSED, nothing stored", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const client = yield* makeTestClient(BR)
      const { auth } = yield* signIn(client, "irregular")
      const refused = yield* client.post("/api/users/me/identity", { cpf: cpfOf("000123456"), fullName: "Ana Costa", birthDate: "1980-01-01" }, auth)
      expect(refused.status).toBe(422)
      expect(refused.body).toEqual({ statusCode: 422, error: "IDENTITY_REFUSED", message: "The identity could not be verified" })
      expect((yield* client.get("/api/users/me/compliance", auth)).body.identity).toEqual({ status: "UNVERIFIED" })
    }))

  it.scoped("a CPF verified on another account is 409 CPF already registered; two accounts at once: exactly one wins", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const client = yield* makeTestClient({
        config: { jurisdiction: "BR", rateLimits: { ...testConfig.rateLimits, auth: { count: 100, windowMs: 60_000 } } }
      })
      const first = yield* signIn(client, "first-holder")
      const second = yield* signIn(client, "second-holder")
      const request = { cpf: cpfOf("111444777"), fullName: "Carla Souza", birthDate: "1985-03-03" }
      expect((yield* client.post("/api/users/me/identity", request, first.auth)).status).toBe(200)
      const taken = yield* client.post("/api/users/me/identity", { ...request, cpf: formatted(request.cpf) }, second.auth)
      expect(taken.status).toBe(409)
      expect(taken.body).toEqual({ statusCode: 409, message: "CPF already registered" })

      // The race: several accounts send the same new CPF at once.
      const racers = yield* Effect.forEach(["racer-1", "racer-2", "racer-3", "racer-4"], (name) => signIn(client, name))
      const race = { cpf: cpfOf("390533447"), fullName: "Rita Lima", birthDate: "1975-07-07" }
      const answers = yield* Effect.forEach(racers, ({ auth }) => client.post("/api/users/me/identity", race, auth), {
        concurrency: "unbounded"
      })
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409])
      for (const answer of answers.filter((a) => a.status === 409)) {
        expect(answer.body).toEqual({ statusCode: 409, message: "CPF already registered" })
      }
      const sql = yield* SqlClient.SqlClient
      const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM user_identities WHERE full_name = 'Rita Lima'`
      expect(count!.n).toBe(1)
    }))

  it.scoped("the KYC provider failing (5xx after its retries) is 503 with Retry-After, nothing stored (D20)", () =>
    Effect.gen(function*() {
      const url = yield* Effect.acquireRelease(
        Effect.async<{ url: string; close: () => void }>((resume) => {
          const server = createServer((request, response) => {
            request.resume()
            request.on("end", () => response.writeHead(500, { "content-type": "application/json" }).end("{}"))
          })
          server.listen(0, "127.0.0.1", () =>
            resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() })))
        }),
        (server) => Effect.sync(server.close)
      )
      yield* TestClock.setTime(NOON_UTC)
      const client = yield* makeTestClient({
        config: { jurisdiction: "BR", kyc: { url: Option.some(url.url), key: Option.some(Redacted.make("kyc-key")) } }
      })
      const { auth } = yield* signIn(client, "provider-down")
      // The client's retries wait on the clock: let the test clock run while the request is in flight.
      const fiber = yield* Effect.fork(
        client.post("/api/users/me/identity", { cpf: cpfOf("135792468"), fullName: "Maria da Silva", birthDate: "1990-05-17" }, auth)
      )
      for (let i = 0; i < 20; i++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
        yield* TestClock.adjust("1 second")
      }
      const response = yield* fiber
      expect(response.status).toBe(503)
      expect(response.body).toEqual({ statusCode: 503, message: "Service unavailable: identity provider" })
      expect(response.headers.get("retry-after")).not.toBeNull()
      expect((yield* client.get("/api/users/me/compliance", auth)).body.identity).toEqual({ status: "UNVERIFIED" })
    }))

  it.scoped("the CPF is never logged and administrators see no more of it than the mask", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const lines: Array<string> = []
      const capture = Logger.zip(Logger.logfmtLogger, Logger.jsonLogger).pipe(Logger.map(([text, json]) => {
        lines.push(text, json)
      }))
      const client = yield* makeTestClient({
        config: { jurisdiction: "BR", adminIdpIds: ["root"] },
        accessLog: true,
        logging: Layer.merge(Logger.replace(Logger.defaultLogger, capture), Logger.minimumLogLevel(LogLevel.All))
      })
      const player = yield* signIn(client, "logged-cpf")
      const root = yield* signIn(client, "root")
      const cpf = cpfOf("246813579")
      expect((yield* client.post("/api/users/me/identity", { cpf: formatted(cpf), fullName: "Paulo Reis", birthDate: "1970-10-10" }, player.auth)).status)
        .toBe(200)
      expect((yield* client.post("/api/users/me/identity", { cpf: cpfOf("000987654"), fullName: "Paulo Reis", birthDate: "1970-10-10" }, root.auth)).status)
        .toBe(422)
      const admin = yield* client.get("/api/admin/users?search=logged-cpf", root.auth)
      expect(admin.status).toBe(200)
      expect(JSON.stringify(admin.body)).not.toContain(cpf.slice(3, 9))
      expect(lines.length).toBeGreaterThan(0)
      for (const digits of [cpf, formatted(cpf), cpf.slice(0, 9), cpfOf("000987654")]) {
        expect(lines.filter((line) => line.includes(digits)), digits).toEqual([])
      }
    }))
})

describe("the age rule (docs/rules.md#identity-verification)", () => {
  it("18 on the 18th birthday; born on 29 February: on 1 March (an 18th birthday never falls in a leap year)", () => {
    expect(isAdultOn("2008-11-26", "2026-11-25")).toBe(false)
    expect(isAdultOn("2008-11-26", "2026-11-26")).toBe(true)
    expect(isAdultOn("2008-02-29", "2026-02-28")).toBe(false)
    expect(isAdultOn("2008-02-29", "2026-03-01")).toBe(true)
    expect(isAdultOn("2008-03-01", "2026-02-28")).toBe(false)
    expect(isAdultOn("1950-01-01", "2026-11-26")).toBe(true)
  })
})

layer(TestDatabase)("identity (JURISDICTION=NONE)", (it) => {
  it.scoped("the compliance status is shown; verification is not offered (404)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const client = yield* makeTestClient({ config: { jurisdiction: testConfig.jurisdiction } })
      const { auth } = yield* signIn(client, "no-jurisdiction")
      expect((yield* client.get("/api/users/me/compliance", auth)).body).toMatchObject({ jurisdiction: "NONE", identity: { status: "UNVERIFIED" } })
      const response = yield* client.post("/api/users/me/identity", { cpf: cpfOf("123456789"), fullName: "Maria da Silva", birthDate: "1990-05-17" }, auth)
      expect(response.status).toBe(404)
      expect(response.body).toEqual({ statusCode: 404, message: "Identity verification not found" })
      expect((yield* client.get("/api/users/me/compliance")).status).toBe(401)
    }))
})
