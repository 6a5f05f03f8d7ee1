/**
 * Withdrawals only to the account holder's own PIX keys under JURISDICTION=BR (docs/rules.md#pix-key-owner, D22):
 * the gateway's key directory (here the sandbox's, docs/rules.md#pix-key-sandbox) is asked before the money
 * transaction; a key of someone else is 422 KEY_NOT_OWNED and the directory down is 503, both moving nothing; the
 * owner's masked CPF is stored and shown to administrators. Under NONE nothing is asked.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted, TestClock } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import type { AppConfigShape } from "../../src/layers/AppConfig"
import { cpfOf, formatted } from "../support/Cpf"
import { balanceOf, fundedPlayer } from "../support/GameFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { healthyLedger, ledgerProblems, withdrawal } from "../support/WithdrawalFixtures"

const NOON_UTC = Date.parse("2026-11-26T12:00:00Z")

const app = (config: Partial<AppConfigShape>) =>
  makeTestClient({
    config: {
      adminIdpIds: ["root"],
      rateLimits: {
        ...testConfig.rateLimits,
        auth: { count: 1000, windowMs: 60_000 },
        withdrawal: { count: 1000, windowMs: 60_000 }
      },
      ...config
    }
  })

const verify = (client: TestClient, auth: Record<string, string>, cpf: string) =>
  Effect.gen(function*() {
    const verified = yield* client.post("/api/users/me/identity", { cpf: formatted(cpf), fullName: "Maria da Silva", birthDate: "1990-05-17" }, auth)
    expect(verified.status).toBe(200)
  })

const withdrawalCount = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM withdrawals WHERE user_id = ${userId}`, (rows) => rows[0]!.n))

const adminViewOf = (client: TestClient, id: string) =>
  Effect.gen(function*() {
    const root = yield* signIn(client, "root")
    const listed = yield* client.get("/api/admin/withdrawals?limit=100", root.auth)
    expect(listed.status).toBe(200)
    return listed.body.withdrawals.find((w: { id: string }) => w.id === id)
  })

const KEY_NOT_OWNED = {
  statusCode: 422,
  error: "KEY_NOT_OWNED",
  message: "The PIX key does not belong to the account holder"
}

layer(TestDatabase)("PIX key owner (JURISDICTION=BR)", (it) => {
  it.scoped("to the holder's own CPF key: 201, the owner's masked CPF stored and shown to administrators (masked only)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const client = yield* app({ jurisdiction: "BR" })
      const player = yield* fundedPlayer(client, "own-key", 50_000)
      const cpf = cpfOf("123456789")
      yield* verify(client, player.auth, cpf)

      const own = yield* client.post("/api/withdrawals/request", withdrawal(5_000, { pixKeyType: "CPF", pixKey: formatted(cpf) }), player.auth)
      expect(own.status).toBe(201)
      expect(yield* balanceOf(client, player.auth)).toBe(45_000)
      const view = yield* adminViewOf(client, own.body.id)
      expect(view.pixKeyOwnerCpf).toBe("***.456.789-**")
      // The player's own view shows no owner; the stored column holds the mask, never the digits.
      const mine = (yield* client.get("/api/withdrawals", player.auth)).body.withdrawals[0]
      expect(mine.pixKeyOwnerCpf).toBeUndefined()
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ owner: string }>`SELECT pix_key_owner_cpf_masked AS owner FROM withdrawals WHERE id = ${own.body.id}`
      expect(row!.owner).toBe("***.456.789-**")

      // A key the directory does not name another owner of (sandbox: the asker's), with an Idempotency-Key: the
      // lookup runs before the key's transaction; a repeat answers the stored response.
      const keyed = { ...player.auth, "idempotency-key": "own-email-1" }
      const email = yield* client.post("/api/withdrawals/request", withdrawal(2_000, { pixKeyType: "EMAIL", pixKey: "Maria@Example.com" }), keyed)
      expect(email.status).toBe(201)
      const again = yield* client.post("/api/withdrawals/request", withdrawal(2_000, { pixKeyType: "EMAIL", pixKey: "Maria@Example.com" }), keyed)
      expect(again.status).toBe(201)
      expect(again.body.id).toBe(email.body.id)
      expect((yield* adminViewOf(client, email.body.id)).pixKeyOwnerCpf).toBe("***.456.789-**")
      expect(yield* balanceOf(client, player.auth)).toBe(43_000)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("to a key registered to another CPF (POST /sandbox/pix-keys) or another person's CPF key: 422 KEY_NOT_OWNED, nothing moves", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const client = yield* app({ jurisdiction: "BR" })
      const player = yield* fundedPlayer(client, "other-key", 50_000)
      yield* verify(client, player.auth, cpfOf("222333444"))
      const someoneElse = cpfOf("555666777")

      const registered = yield* client.post(
        "/api/sandbox/pix-keys",
        { pixKeyType: "EMAIL", pixKey: "Brother@Example.com", ownerCpf: formatted(someoneElse) },
        player.auth
      )
      expect(registered.status).toBe(201)
      expect(registered.body).toEqual({ pixKeyType: "EMAIL", pixKey: "brother@example.com", ownerCpf: "***.666.777-**" })

      const before = yield* balanceOf(client, player.auth)
      for (
        const details of [
          { pixKeyType: "EMAIL", pixKey: "brother@example.com" },
          { pixKeyType: "CPF", pixKey: someoneElse }
        ]
      ) {
        const refused = yield* client.post("/api/withdrawals/request", withdrawal(5_000, details), player.auth)
        expect(refused.status, details.pixKeyType).toBe(422)
        expect(refused.body).toEqual(KEY_NOT_OWNED)
      }
      expect(yield* balanceOf(client, player.auth)).toBe(before)
      expect(yield* withdrawalCount(player.id)).toBe(0)
      const notifications = (yield* client.get("/api/notifications", player.auth)).body
      expect(JSON.stringify(notifications)).not.toContain("WITHDRAWAL_REQUESTED")
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))

  it.scoped("the sandbox registration: a CPF key cannot be registered (400), an invalid key or owner is 400", () =>
    Effect.gen(function*() {
      const client = yield* app({ jurisdiction: "BR" })
      const player = yield* signIn(client, "registrar")
      const cpfKey = yield* client.post("/api/sandbox/pix-keys", { pixKeyType: "CPF", pixKey: cpfOf("123456789"), ownerCpf: cpfOf("555666777") }, player.auth)
      expect(cpfKey.status).toBe(400)
      expect(cpfKey.body.errors.map((e: { field: string }) => e.field)).toEqual(["pixKeyType"])
      const badOwner = yield* client.post("/api/sandbox/pix-keys", { pixKeyType: "EMAIL", pixKey: "a@b.co", ownerCpf: "123" }, player.auth)
      expect(badOwner.status).toBe(400)
      expect(badOwner.body.errors.map((e: { field: string }) => e.field)).toEqual(["ownerCpf"])
      const badKey = yield* client.post("/api/sandbox/pix-keys", { pixKeyType: "EMAIL", pixKey: "not-an-email", ownerCpf: cpfOf("555666777") }, player.auth)
      expect(badKey.status).toBe(400)
      expect(badKey.body.errors).toEqual([{ field: "pixKey", message: "must be a valid e-mail address" }])
      expect((yield* client.post("/api/sandbox/pix-keys", { pixKeyType: "EMAIL", pixKey: "a@b.co", ownerCpf: cpfOf("555666777") })).status)
        .toBe(401)
    }))

  it.scoped("the directory unavailable (the gateway answering 500 after its retries): 503 with Retry-After, nothing moves", () =>
    Effect.gen(function*() {
      const gateway = yield* Effect.acquireRelease(
        Effect.async<{ url: string; hits: () => number; close: () => void }>((resume) => {
          let hits = 0
          const server = createServer((request, response) => {
            hits++
            request.resume()
            request.on("end", () => response.writeHead(500, { "content-type": "application/json" }).end("{}"))
          })
          server.listen(0, "127.0.0.1", () =>
            resume(Effect.succeed({
              url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
              hits: () => hits,
              close: () => server.close()
            })))
        }),
        (server) => Effect.sync(server.close)
      )
      yield* TestClock.setTime(NOON_UTC)
      // The payments themselves stay with the test gateway; the directory is the configured gateway's.
      const client = yield* app({
        jurisdiction: "BR",
        gateway: { ...testConfig.gateway, url: Option.some(gateway.url), key: Option.some(Redacted.make("gateway-key")) }
      })
      const player = yield* fundedPlayer(client, "directory-down", 50_000)
      const cpf = cpfOf("333444555")
      yield* verify(client, player.auth, cpf)
      // The client's retries wait on the clock: let the test clock run while the request is in flight.
      const fiber = yield* Effect.fork(
        client.post("/api/withdrawals/request", withdrawal(5_000, { pixKeyType: "CPF", pixKey: cpf }), { ...player.auth, "idempotency-key": "down-1" })
      )
      for (let i = 0; i < 20; i++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
        yield* TestClock.adjust("1 second")
      }
      const response = yield* fiber
      expect(response.status).toBe(503)
      expect(response.body).toEqual({ statusCode: 503, message: "Service unavailable: PIX key directory" })
      expect(response.headers.get("retry-after")).not.toBeNull()
      expect(gateway.hits()).toBe(3)
      expect(yield* balanceOf(client, player.auth)).toBe(50_000)
      expect(yield* withdrawalCount(player.id)).toBe(0)
      // Nothing was stored under the Idempotency-Key either: a retry runs again.
      const sql = yield* SqlClient.SqlClient
      expect((yield* sql`SELECT 1 FROM idempotency_keys WHERE key = 'down-1'`).length).toBe(0)
      // The sandbox registration is the sandbox's only.
      const sandbox = yield* client.post("/api/sandbox/pix-keys", { pixKeyType: "EMAIL", pixKey: "a@b.co", ownerCpf: cpfOf("555666777") }, player.auth)
      expect(sandbox.status).toBe(404)
      expect(sandbox.body).toEqual({ statusCode: 404, message: "The sandbox gateway is not in use" })
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))
})

layer(TestDatabase)("PIX key owner (JURISDICTION=NONE)", (it) => {
  it.scoped("the request endpoint declares 422 KEY_NOT_OWNED in the OpenAPI document; the sandbox endpoint is documented", () =>
    Effect.gen(function*() {
      const client = yield* app({})
      const document = (yield* client.get("/api/docs-json")).body
      expect(JSON.stringify(document.components.schemas.KeyNotOwned)).toContain("KEY_NOT_OWNED")
      expect(JSON.stringify(document.paths["/api/withdrawals/request"].post.responses["422"])).toContain("#/components/schemas/KeyNotOwned")
      expect(document.paths["/api/sandbox/pix-keys"].post.responses["201"]).toBeDefined()
    }))


  it.scoped("nothing is asked: a key registered to someone else is paid to, and no owner is stored or shown", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const client = yield* app({ jurisdiction: "NONE" })
      const player = yield* fundedPlayer(client, "no-jurisdiction", 50_000)
      const registered = yield* client.post(
        "/api/sandbox/pix-keys",
        { pixKeyType: "EMAIL", pixKey: "brother@example.com", ownerCpf: cpfOf("555666777") },
        player.auth
      )
      expect(registered.status).toBe(201)
      const requested = yield* client.post("/api/withdrawals/request", withdrawal(5_000, { pixKeyType: "EMAIL", pixKey: "brother@example.com" }), player.auth)
      expect(requested.status).toBe(201)
      expect(requested.body.status).toBe("PENDING")
      const view = yield* adminViewOf(client, requested.body.id)
      expect(view.status).toBe("PENDING")
      expect("pixKeyOwnerCpf" in view).toBe(false)
      expect(yield* balanceOf(client, player.auth)).toBe(45_000)
      expect(yield* ledgerProblems).toEqual(healthyLedger)
    }))
})
