/**
 * Every operation of the OpenAPI document, fed malformed input: odd path ids, bodies that are not
 * JSON or not objects, fields of the wrong type or out of range, nonsense query parameters, no or
 * unknown sessions; and (docs/rules.md#errors-and-hostile-input) other spellings of each path, huge and deeply
 * nested bodies, content types other than JSON, and bodies that arrive slowly or break off. Whatever the input,
 * the answer is a 4xx (or a success) in the house error shape (docs/rules.md#error-body), never a 5xx.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { fundedPlayer } from "../support/GameFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestResponse, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

type Schema = {
  readonly $ref?: string
  readonly type?: string | ReadonlyArray<string>
  readonly properties?: Record<string, Schema>
  readonly items?: Schema
  readonly enum?: ReadonlyArray<unknown>
  readonly pattern?: string
  readonly minimum?: number
  readonly anyOf?: ReadonlyArray<Schema>
}

/** Streams never end, sign-out and unbanning would undo this test's own sessions and admin rights. */
const skipped = new Set([
  "get /api/realtime",
  "get /api/live-drops/stream",
  "post /api/auth/logout",
  "post /api/auth/logout-all"
])

const PATH_IDS = ["abc", "0", "-1", "1.5", "99999999999999999999999", "9999999999999999999", "9223372036854775807", "%20", "%00", "9999999"]

/** A value of another type than the schema's, and extreme values of its own type. */
const wrongValuesFor = (schema: Schema): ReadonlyArray<unknown> => {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case "string":
      return [12345, null, "", "x".repeat(10_000), "-1", "1e400", "9999999999999999999"]
    case "number":
    case "integer":
      return ["x", null, -1, 0, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2]
    case "boolean":
      return ["yes", 1]
    case "array":
      return [{}, "x", [null], Array.from({ length: 1_000 }, () => "x")]
    default:
      return ["x", 1, [], null]
  }
}

const bodiesFor = (schema: Schema | undefined): ReadonlyArray<string> => {
  const fixed = ["not json", "{", "[]", "null", "\"text\"", "{}", JSON.stringify({ unexpected: true })]
  const properties = schema?.properties ?? {}
  const perField = Object.entries(properties).flatMap(([name, property]) =>
    wrongValuesFor(property).map((value) => JSON.stringify({ [name]: value }))
  )
  return [...fixed, ...perField]
}

/** Values a schema accepts at its edges, or just past them: where arithmetic and the database can break. */
const EDGE_NUMBERS = [0, -1, 0.5, 2_147_483_648, Number.MAX_SAFE_INTEGER, 1e20]
const EDGE_STRINGS = ["", " ", "\u0000", "ü".repeat(300), "9223372036854775808", "'; DROP TABLE users; --"]

const QUERIES = [
  "?page=-1&limit=abc",
  "?page=0&limit=0",
  "?page=99999999999999999999&limit=1e9",
  "?status=NOPE&period=1y&type=nope&caseId=abc&category=x&sortBy=x&limit=1000",
  "?type=opening",
  "?page=1.5&limit=-5&minPrice=abc&maxPrice=-1",
  "?search=%00&status=%00&category=%00&q=%00"
]

layer(TestDatabase)("bad input", (it) => {
  it.scoped("no operation answers a 5xx, whatever the path ids, body or query", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({
        config: {
          adminIdpIds: ["root"],
          trustProxy: 1,
          rateLimits: {
            ...testConfig.rateLimits,
            global: { count: 1_000_000, windowMs: 60_000 },
            caseOpen: { count: 1_000_000, windowMs: 60_000 },
            withdrawal: { count: 1_000_000, windowMs: 60_000 },
            twoFactorVerify: { count: 1_000_000, windowMs: 60_000 },
            twoFactorDisable: { count: 1_000_000, windowMs: 60_000 },
            auth: { count: 1_000_000, windowMs: 60_000 }
          }
        }
      })
      // An administrator with money, so that requests get past authorization and balance checks.
      const root = yield* fundedPlayer(client, "root", 1_000_000)
      const adminToken = { authorization: "Bearer test-admin-token" }
      const document = (yield* client.get("/api/docs-json")).body
      const schemas: Record<string, Schema> = document.components.schemas
      const resolve = (schema: Schema | undefined): Schema | undefined =>
        schema?.$ref === undefined ? schema : schemas[schema.$ref.split("/").pop()!]

      const failures: Array<{ request: string; status: number; body: unknown }> = []
      let requests = 0
      const statuses: Record<number, number> = {}
      const check = (request: string, response: TestResponse) => {
        requests++
        statuses[response.status] = (statuses[response.status] ?? 0) + 1
        const envelope = typeof response.body === "object" && response.body !== null && "statusCode" in response.body
        if (response.status >= 500 || (response.status >= 400 && !envelope)) {
          failures.push({ request, status: response.status, body: response.body })
        }
      }

      /** A body the schema accepts (or nearly): the first enum value, "1" for ids, the minimum, a day ahead. */
      const plausible = (schema: Schema | undefined, depth = 0): unknown => {
        const resolved = resolve(schema)
        if (resolved === undefined || depth > 4) return "x"
        if (resolved.anyOf !== undefined) return plausible(resolved.anyOf[0], depth + 1)
        if (resolved.enum !== undefined) return resolved.enum[0]
        const type = Array.isArray(resolved.type) ? resolved.type[0] : resolved.type
        if (type === "string") {
          if (resolved.pattern?.includes("[1-9]") === true) return "1"
          return resolved.pattern === undefined ? "x" : "x1"
        }
        if (type === "number" || type === "integer") return resolved.minimum ?? 1
        if (type === "boolean") return true
        if (type === "array") return [plausible(resolved.items, depth + 1)]
        if (resolved.properties !== undefined) {
          return Object.fromEntries(Object.entries(resolved.properties).map(([name, p]) => [name, plausible(p, depth + 1)]))
        }
        return new Date(Date.now() + 86_400_000).toISOString()
      }

      for (const [template, operations] of Object.entries<Record<string, any>>(document.paths)) {
        for (const [method, operation] of Object.entries<any>(operations)) {
          if (skipped.has(`${method} ${template}`)) continue
          const headers = template.startsWith("/api/webhooks") ? adminToken : root.auth
          const send = (path: string, body?: string) =>
            client.request(path, {
              method: method.toUpperCase(),
              headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
              body
            })
          const withIds = (id: string) => template.replace(/\{[^}]+\}/g, id)
          const hasIds = template.includes("{")

          if (hasIds) {
            for (const id of PATH_IDS) check(`${method} ${withIds(id)}`, yield* send(withIds(id)))
          }
          const target = withIds("9999999")
          if (operation.requestBody !== undefined) {
            const schema = resolve(operation.requestBody.content?.["application/json"]?.schema)
            for (const body of bodiesFor(schema)) check(`${method} ${target} ${body.slice(0, 80)}`, yield* send(target, body))
          }
          // A plausible body with one field at an edge, on an id that may exist: the handlers run.
          if (operation.requestBody !== undefined) {
            const schema = resolve(operation.requestBody.content?.["application/json"]?.schema)
            const base = plausible(schema) as Record<string, unknown>
            // Top-level fields, and the fields of nested objects (e.g. paymentDetails.pixKey).
            const leaves = Object.entries(base).flatMap(([name, value]) =>
              typeof value === "object" && value !== null && !Array.isArray(value)
                ? Object.entries(value).map(([inner, v]) => ({ value: v, set: (edge: unknown) => ({ ...base, [name]: { ...value, [inner]: edge } }) }))
                : [{ value, set: (edge: unknown) => ({ ...base, [name]: edge }) }]
            )
            for (const leaf of leaves) {
              const edges = typeof leaf.value === "number" ? EDGE_NUMBERS : typeof leaf.value === "string" ? EDGE_STRINGS : []
              for (const edge of edges) {
                const body = JSON.stringify(leaf.set(edge))
                check(`${method} ${withIds("1")} ${body.slice(0, 120)}`, yield* send(withIds("1"), body))
              }
            }
          }
          for (const query of QUERIES) check(`${method} ${target}${query}`, yield* send(`${target}${query}`))
          // Without credentials, and with a session id that does not exist.
          const anonymousHeaders: ReadonlyArray<Record<string, string>> = [{}, { authorization: "Bearer 0123456789abcdef0123456789abcdef" }]
          for (const anonymous of anonymousHeaders) {
            check(`${method} ${target} (no session)`, yield* client.request(target, { method: method.toUpperCase(), headers: anonymous }))
          }
        }
      }
      // Odd client headers on a signed-in request (addresses are trusted from X-Forwarded-For here).
      const oddHeaders: ReadonlyArray<Record<string, string>> = [
        { "x-forwarded-for": "not-an-address" },
        { "x-forwarded-for": "999.999.999.999" },
        { "x-forwarded-for": "1.2.3.4, 5.6.7.8" },
        { "x-forwarded-for": "::ffff:200.160.2.3" },
        { "x-forwarded-for": "[2001:db8::1]:443" },
        { "x-forwarded-for": "" },
        { "x-device-id": "d".repeat(8_000) },
        { "x-device-id": "" },
        { cookie: "sessionId=; sessionId=%ZZ; other=\u00e9" },
        { authorization: "Bearer" },
        { authorization: "Basic dXNlcjpwYXNz" }
      ]
      for (const headers of oddHeaders) {
        check(`get /api/auth/me ${JSON.stringify(headers).slice(0, 80)}`, yield* client.get("/api/auth/me", { ...root.auth, ...headers }))
      }
      // Hostile input (docs/rules.md#errors-and-hostile-input): spellings, sizes, nesting, content types and
      // slow bodies, on every operation. A new session: the odd device ids above bound the first one to a
      // device (docs/rules.md#device-binding).
      const signedIn = (yield* signIn(client, "root")).auth
      const spellings = (path: string) => [
        `${path}/`,
        path.toUpperCase(),
        path.replace("/api/", "//api//"),
        path.replace(/([a-z])/, (c) => `%${c.charCodeAt(0).toString(16)}`),
        `${path};jsessionid=1`,
        `${path}%ZZ`,
        `${path}/%00`,
        `${path}/..;/x`
      ]
      const huge = JSON.stringify({ padding: "x".repeat(1024 * 1024) })
      const deep = ["[".repeat(5000), "[".repeat(5000) + "]".repeat(5000), `{"a":${"{\"a\":".repeat(100)}1${"}".repeat(101)}`]
      const encoder = new TextEncoder()
      /** `{}` in three chunks 20 ms apart, or a body that breaks off after its first chunk. */
      const slowBody = (breaks: boolean) =>
        new ReadableStream<Uint8Array>({
          async start(controller) {
            controller.enqueue(encoder.encode("{"))
            await new Promise((r) => setTimeout(r, 20))
            if (breaks) return controller.error(new Error("client went away"))
            controller.enqueue(encoder.encode(" "))
            await new Promise((r) => setTimeout(r, 20))
            controller.enqueue(encoder.encode("}"))
            controller.close()
          }
        })
      const wrongTypes: ReadonlyArray<readonly [string | undefined, string | Uint8Array]> = [
        ["application/x-www-form-urlencoded", "a=1&b=2"],
        ["text/plain", "{}"],
        ["multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--x--"],
        ["application/xml", "<a/>"],
        ["application/json-patch+json", "[]"],
        [undefined, encoder.encode("{}")]
      ]
      let withBodies = 0
      for (const [template, operations] of Object.entries<Record<string, any>>(document.paths)) {
        for (const [method, operation] of Object.entries<any>(operations)) {
          if (skipped.has(`${method} ${template}`)) continue
          const headers = template.startsWith("/api/webhooks") ? adminToken : signedIn
          // Ids are 1; an action is one the path accepts, so the body is read (the sandbox's `pay` reads an optional one).
          const target = template.replace("{action}", "pay").replace(/\{[^}]+\}/g, "1")
          const send = (path: string, init: RequestInit = {}) =>
            client.request(path, { method: method.toUpperCase(), ...init, headers: { ...headers, ...init.headers } })
          for (const path of spellings(target)) check(`${method} ${path}`, yield* send(path))
          if (method === "get" || method === "delete") continue
          if (operation.requestBody !== undefined) withBodies++
          check(`${method} ${target} (1 MiB + JSON)`, yield* send(target, { headers: { "content-type": "application/json" }, body: huge }))
          for (const body of deep) {
            check(`${method} ${target} (deep ${body.slice(0, 10)})`, yield* send(target, { headers: { "content-type": "application/json" }, body }))
          }
          for (const [contentType, body] of wrongTypes) {
            check(
              `${method} ${target} (${contentType ?? "no content type"})`,
              yield* send(target, { headers: contentType === undefined ? {} : { "content-type": contentType }, body })
            )
          }
          for (const breaks of [false, true]) {
            check(
              `${method} ${target} (slow body${breaks ? ", broken off" : ""})`,
              yield* send(target, { headers: { "content-type": "application/json" }, body: slowBody(breaks), duplex: "half" } as RequestInit)
            )
          }
        }
      }
      // The step-up header of administrators' money actions, malformed.
      for (const code of ["x".repeat(100), "", "000000"]) {
        check(
          `post /api/admin/users/1/adjust-balance x-2fa-code=${code.slice(0, 10)}`,
          yield* client.post("/api/admin/users/1/adjust-balance", { amountCents: 1, reason: "x" }, { ...signedIn, "x-2fa-code": code })
        )
      }
      expect(requests).toBeGreaterThan(1_000)
      // Handlers were reached too, not only the decoding in front of them.
      expect(statuses[404]).toBeGreaterThan(50)
      expect(statuses[200]).toBeGreaterThan(50)
      expect(failures).toEqual([])
      // Every operation that reads a body refused the huge one (the others never read it).
      expect(statuses[413]).toBeGreaterThanOrEqual(withBodies)
      expect(statuses[415]).toBeGreaterThan(100)
    }), { timeout: 120_000 })
})
