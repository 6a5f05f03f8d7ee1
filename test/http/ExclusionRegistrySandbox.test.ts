/**
 * The sandbox self-exclusion registry's list (docs/rules.md#exclusion-registry-sandbox, D23): `POST` and `DELETE
 * /sandbox/exclusion-registry {cpf}` list and unlist a CPF in the sandbox twin the registry port answers from; any
 * signed-in user, as `POST /sandbox/pix-keys`; a bad CPF is 400 with field errors; 404 when the twin is not in use.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { ExclusionRegistry } from "../../src/layers/ExclusionRegistry"
import { cpfOf, formatted } from "../support/Cpf"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const PATH = "/api/sandbox/exclusion-registry"

const send = (client: TestClient, method: "POST" | "DELETE", body: unknown, headers: Record<string, string> = {}) =>
  client.request(PATH, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })

layer(TestDatabase)("sandbox self-exclusion registry", (it) => {
  it.scoped("POST lists a CPF (201, masked), the registry port then answers listed; DELETE unlists it (200); both repeatable", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { jurisdiction: "BR" } })
      const player = yield* signIn(client, "registry-keeper")
      const registry = yield* client.service(ExclusionRegistry)
      const cpf = cpfOf("123456789")
      const other = cpfOf("987654321")
      expect(yield* registry.isListed(cpf)).toBe(false)

      const listed = yield* send(client, "POST", { cpf: formatted(cpf) }, player.auth)
      expect(listed.status).toBe(201)
      expect(listed.body).toEqual({ cpf: "***.456.789-**", listed: true })
      expect(yield* registry.isListed(cpf)).toBe(true)
      expect(yield* registry.isListed(other)).toBe(false)
      // Listing again changes nothing; a bare CPF is the same CPF.
      const again = yield* send(client, "POST", { cpf }, player.auth)
      expect(again.status).toBe(201)
      expect(again.body).toEqual({ cpf: "***.456.789-**", listed: true })
      expect(yield* registry.isListed(cpf)).toBe(true)

      const unlisted = yield* send(client, "DELETE", { cpf }, player.auth)
      expect(unlisted.status).toBe(200)
      expect(unlisted.body).toEqual({ cpf: "***.456.789-**", listed: false })
      expect(yield* registry.isListed(cpf)).toBe(false)
      // A CPF never listed: unlisting is fine.
      const never = yield* send(client, "DELETE", { cpf: formatted(other) }, player.auth)
      expect(never.status).toBe(200)
      expect(never.body).toEqual({ cpf: "***.654.321-**", listed: false })
      // The CPF's digits appear in no answer.
      expect(JSON.stringify([listed.body, again.body, unlisted.body, never.body])).not.toContain(cpf.slice(0, 9))
    }))

  it.scoped("a bad or missing CPF is 400 with errors on cpf; without a session 401", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const player = yield* signIn(client, "registry-typo")
      const registry = yield* client.service(ExclusionRegistry)
      for (const method of ["POST", "DELETE"] as const) {
        for (const body of [{ cpf: "123" }, { cpf: "123.456.789-00" }, { cpf: "111.111.111-11" }, { cpf: 12345678909 }, {}]) {
          const refused = yield* send(client, method, body, player.auth)
          expect(refused.status, `${method} ${JSON.stringify(body)}`).toBe(400)
          expect(refused.body.statusCode).toBe(400)
          expect(refused.body.errors.map((e: { field: string }) => e.field), `${method} ${JSON.stringify(body)}`).toEqual(["cpf"])
        }
        const notJson = yield* send(client, method, "{", player.auth)
        expect(notJson.status).toBe(400)
        expect((yield* send(client, method, { cpf: cpfOf("123456789") })).status).toBe(401)
      }
      expect(yield* registry.isListed(cpfOf("123456789"))).toBe(false)
    }))

  it.scoped("404 while the twin is not in use: a real registry configured (EXCLUSION_REGISTRY_URL), or SANDBOX off", () =>
    Effect.gen(function*() {
      for (
        const config of [
          { exclusionRegistry: { url: Option.some("https://registry.example.com"), key: Option.some(Redacted.make("k")) } },
          { sandbox: false }
        ]
      ) {
        const client = yield* makeTestClient({ config })
        const player = yield* signIn(client, "registry-real")
        for (const method of ["POST", "DELETE"] as const) {
          const response = yield* send(client, method, { cpf: cpfOf("123456789") }, player.auth)
          expect(response.status, `${method} ${JSON.stringify(config)}`).toBe(404)
          expect(response.body).toEqual({ statusCode: 404, message: "The sandbox self-exclusion registry is not in use" })
        }
      }
    }))

  it.scoped("both operations are in the OpenAPI document with their answers", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const document = (yield* client.get("/api/docs-json")).body
      const operations = document.paths[PATH]
      expect(operations.post.responses["201"]).toBeDefined()
      expect(operations.post.responses["404"]).toBeDefined()
      expect(operations.delete.responses["200"]).toBeDefined()
      expect(operations.delete.responses["404"]).toBeDefined()
      expect(operations.delete.requestBody).toBeDefined()
    }))
})
