/**
 * Hostile request bodies and slow clients (docs/rules.md#request-bodies, docs/rules.md#server-timeouts): size
 * limits (413), JSON only (415), nesting (400), the callback's signature header looked at before its body, and
 * the server's timeouts. In-process first, then over a real socket where what Node does (declared lengths,
 * chunked bodies, timeouts) matters.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { connect } from "node:net"
import { createHttpServer } from "../../src/http/platform/NodeServer"
import { BODY_LIMIT_BYTES, CALLBACK_BODY_LIMIT_BYTES, nestedDeeperThan } from "../../src/http/platform/RequestBody"
import { signGatewayBody } from "../../src/layers/gateway/GatewaySignature"
import { fundedPlayer, makeCase } from "../support/GameFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestResponse } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const json = { "content-type": "application/json" }
const tooLarge = { statusCode: 413, message: "Payload too large" }
const notJson = { statusCode: 415, message: "Content-Type must be application/json" }
const tooDeep = { statusCode: 400, message: "JSON nested deeper than 64 levels" }

/** A JSON object nesting exactly `levels` levels: the object is one, the arrays inside it the others. */
const nestedLevels = (levels: number) => `{"code":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`

/** A JSON string of exactly `bytes` bytes. */
const jsonOfSize = (bytes: number) => JSON.stringify({ code: "x".repeat(bytes - 11) })

/** A body that never ends: reading it would hang the test, so an answer proves it was not read. */
const endless = () =>
  new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) })

const sign = (body: string) => signGatewayBody("test-webhook-secret", body)

/** Sends raw bytes over one connection; resolves with everything the server sent until it closed or `waitMs` passed. */
const rawExchange = (base: string, chunks: ReadonlyArray<{ readonly data: string; readonly afterMs?: number }>, waitMs: number) =>
  Effect.promise(() =>
    new Promise<{ readonly text: string; readonly closed: boolean; readonly elapsedMs: number }>((resolve) => {
      const { hostname, port } = new URL(base)
      const started = Date.now()
      const socket = connect(Number(port), hostname)
      let text = ""
      let done = false
      const finish = (closed: boolean) => {
        if (done) return
        done = true
        socket.destroy()
        resolve({ text, closed, elapsedMs: Date.now() - started })
      }
      socket.on("data", (data) => (text += data.toString("latin1")))
      socket.on("close", () => finish(true))
      socket.on("error", () => finish(true))
      socket.on("connect", async () => {
        for (const chunk of chunks) {
          if (chunk.afterMs !== undefined) await new Promise((r) => setTimeout(r, chunk.afterMs))
          if (done || socket.destroyed) return
          socket.write(chunk.data)
        }
      })
      setTimeout(() => finish(false), waitMs)
    })
  )

const statusOf = (raw: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0)
const bodyOf = (raw: string) => raw.slice(raw.indexOf("\r\n\r\n") + 4)

layer(TestDatabase)("request bodies", (it) => {
  it.effect("nesting is measured without parsing, strings skipped", () =>
    Effect.sync(() => {
      expect(nestedDeeperThan("[".repeat(64) + "]".repeat(64), 64)).toBe(false)
      expect(nestedDeeperThan("[".repeat(65), 64)).toBe(true)
      expect(nestedDeeperThan(`{"a":"${"[".repeat(100)}"}`, 64)).toBe(false)
      expect(nestedDeeperThan(`{"a":"\\"${"{".repeat(10)}"}`, 2)).toBe(false)
      expect(nestedDeeperThan(`[{"a":[{"b":[]}]}]`, 4)).toBe(true)
    }))

  it.scoped("over 1 MiB is 413 whether or not the length is declared; 1 MiB itself is read", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const user = yield* signIn(client, "big-sender")
      const over = jsonOfSize(BODY_LIMIT_BYTES + 1)
      const declared = yield* client.post("/api/auth/2fa/verify", over, { ...user.auth, "content-length": String(over.length) })
      expect(declared.status).toBe(413)
      expect(declared.body).toEqual(tooLarge)
      const undeclared = yield* client.post("/api/auth/2fa/verify", over, user.auth)
      expect(undeclared.status).toBe(413)
      expect(undeclared.body).toEqual(tooLarge)
      const hundredMegabytes = yield* client.post("/api/auth/2fa/verify", "{}", { ...user.auth, "content-length": String(100 * 1024 * 1024) })
      expect(hundredMegabytes.body).toEqual(tooLarge)
      // At the limit the body is read and decoded: the code is too long, a validation error.
      const atLimit = yield* client.post("/api/auth/2fa/verify", jsonOfSize(BODY_LIMIT_BYTES), user.auth)
      expect(atLimit.status).toBe(400)
      expect(atLimit.body.errors).toEqual([{ field: "code", message: "must be at most 64 characters" }])
    }))

  it.scoped("the gateway callback: 64 KiB at most, and its signature header is checked before its body is read", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const over = JSON.stringify({ event: "charge.paid", data: { id: "ch_x", failReason: "x".repeat(CALLBACK_BODY_LIMIT_BYTES) } })
      const big = yield* client.post("/api/webhooks/payment", over, { "x-webhook-signature": sign(over) })
      expect(big.status).toBe(413)
      expect(big.body).toEqual(tooLarge)
      // The same spelled otherwise is the same endpoint, with the same limit.
      expect((yield* client.post("/api/Webhooks/payment/", over, { "x-webhook-signature": sign(over) })).status).toBe(413)
      expect((yield* client.post("/api/webhooks/payment", over, { "x-webhook-signature": sign(over), "content-length": String(over.length) })).status)
        .toBe(413)

      // No signature, or one that cannot be a signature: refused without reading the (endless) body.
      for (const signature of [undefined, "", "not-hex", "ab".repeat(31), "ab".repeat(33)]) {
        const answer = yield* client.request("/api/webhooks/payment", {
          method: "POST",
          headers: { ...json, ...(signature === undefined ? {} : { "x-webhook-signature": signature }) },
          body: endless(),
          duplex: "half"
        } as RequestInit)
        expect(answer.status, String(signature)).toBe(401)
        expect(answer.body).toEqual({ statusCode: 401, message: "Invalid webhook signature" })
      }
      // Signed but nested too deep: 400 before anything parses it.
      const deep = "[".repeat(5000) + "]".repeat(5000)
      const deepAnswer = yield* client.post("/api/webhooks/payment", deep, { "x-webhook-signature": sign(deep) })
      expect(deepAnswer.body).toEqual(tooDeep)
    }))

  it.scoped("an endpoint that needs a session does not read the body of a request without one", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const answer = yield* client.request("/api/auth/2fa/verify", {
        method: "POST",
        headers: json,
        body: endless(),
        duplex: "half"
      } as RequestInit)
      expect(answer.status).toBe(401)
    }))

  it.scoped("JSON nested deeper than 64 levels is 400; 5000 nested [ are too, never a 500", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { adminIdpIds: ["root"] } })
      const user = yield* signIn(client, "root")
      for (const body of ["[".repeat(5000), "[".repeat(5000) + "]".repeat(5000), `{"code":${"[".repeat(65)}${"]".repeat(65)}}`]) {
        const answer = yield* client.post("/api/auth/2fa/verify", body, user.auth)
        expect(answer.status).toBe(400)
        expect(answer.body).toEqual(tooDeep)
      }
      // 64 levels are parsed (and then refused by the payload's schema).
      const deepest = yield* client.post("/api/auth/2fa/verify", `{"code":${"[".repeat(63)}${"]".repeat(63)}}`, user.auth)
      expect(deepest.body).toMatchObject({ statusCode: 400, message: "Validation failed" })
      const nestedItems = yield* client.post("/api/admin/items", `{"name":${"{\"a\":".repeat(80)}1${"}".repeat(80)}}`, user.auth)
      expect(nestedItems.body).toEqual(tooDeep)
    }))

  it.scoped("exactly 65 levels are one too many on an endpoint; 64 are parsed", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const user = yield* signIn(client, "depth-edge")
      const sixtyFive = yield* client.post("/api/auth/2fa/verify", nestedLevels(65), user.auth)
      expect(sixtyFive.status).toBe(400)
      expect(sixtyFive.body).toEqual(tooDeep)
      const sixtyFour = yield* client.post("/api/auth/2fa/verify", nestedLevels(64), user.auth)
      expect(sixtyFour.body).toMatchObject({ statusCode: 400, message: "Validation failed" })
    }))

  it.scoped("exactly 65 levels are one too many on the gateway callback, signed; 64 are parsed", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const callback = (body: string) => client.post("/api/webhooks/payment", body, { "x-webhook-signature": sign(body) })
      const sixtyFive = yield* callback(nestedLevels(65))
      expect(sixtyFive.status).toBe(400)
      expect(sixtyFive.body).toEqual(tooDeep)
      const sixtyFour = yield* callback(nestedLevels(64))
      expect(sixtyFour.body).toMatchObject({ statusCode: 400, message: "Validation failed" })
    }))

  it.scoped("a body that is not JSON is 415: forms, text, JSON under another name; no body needs no type", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const user = yield* signIn(client, "form-poster")
      const send = (contentType: string, body: string) =>
        client.request("/api/auth/2fa/enable", { method: "POST", headers: { ...user.auth, "content-type": contentType }, body })
      const refused: Array<TestResponse> = [
        yield* send("application/x-www-form-urlencoded", "code=123456"),
        yield* send("multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"code\"\r\n\r\n123456\r\n--x--"),
        yield* send("text/plain", "{\"code\":\"123456\"}"),
        yield* send("application/jsonx", "{\"code\":\"123456\"}"),
        yield* send("application/problem+json", "{\"code\":\"123456\"}")
      ]
      for (const answer of refused) {
        expect(answer.status).toBe(415)
        expect(answer.body).toEqual(notJson)
      }
      // A declared body of another type is refused from its headers alone.
      const declared = yield* client.request("/api/auth/2fa/enable", {
        method: "POST",
        headers: { ...user.auth, "content-type": "text/plain", "content-length": "20" },
        body: endless(),
        duplex: "half"
      } as RequestInit)
      expect(declared.body).toEqual(notJson)

      expect((yield* send("application/json; charset=utf-8", "{\"code\":\"123456\"}")).body).toEqual({ statusCode: 400, message: "Setup expired. Generate new QR code." })
      expect((yield* send("Application/JSON", "{\"code\":\"123456\"}")).status).toBe(400)
      // An operation without a body needs no content type (and a bodyless form post is no body).
      expect((yield* client.request("/api/auth/2fa/generate", { method: "POST", headers: user.auth })).status).toBe(200)
      const empty = yield* client.request("/api/auth/2fa/generate", {
        method: "POST",
        headers: { ...user.auth, "content-type": "application/x-www-form-urlencoded" }
      })
      expect(empty.status).toBe(200)
    }))

  it.scoped("over a socket: a declared 100 MB body is refused from its headers and the connection closed", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const base = yield* client.listen()
      const before = process.memoryUsage().rss
      const exchange = yield* rawExchange(base, [{
        data: "POST /api/webhooks/payment HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
          `X-Webhook-Signature: ${"ab".repeat(32)}\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n{"event":`
      }], 5_000)
      expect(statusOf(exchange.text)).toBe(413)
      expect(JSON.parse(bodyOf(exchange.text))).toEqual(tooLarge)
      expect(exchange.text.toLowerCase()).toContain("connection: close")
      expect(exchange.closed).toBe(true)
      expect(exchange.elapsedMs).toBeLessThan(2_000)
      expect(process.memoryUsage().rss - before).toBeLessThan(50 * 1024 * 1024)

      // Ten at once, as in the report: answered at once, nothing buffered.
      const all = yield* Effect.all(Array.from({ length: 10 }, () =>
        rawExchange(base, [{
          data: "POST /api/webhooks/payment HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
            `X-Webhook-Signature: ${"ab".repeat(32)}\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`
        }], 5_000)), { concurrency: "unbounded" })
      expect(all.map((e) => statusOf(e.text))).toEqual(Array(10).fill(413))
    }))

  it.scoped("over a socket: a chunked body past the limit stops being read; a body without a content type is 415", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const base = yield* client.listen()
      const user = yield* signIn(client, "socket-user")
      const chunk = "x".repeat(64 * 1024)
      const chunked = yield* rawExchange(base, [
        {
          data: `POST /api/auth/2fa/verify HTTP/1.1\r\nHost: x\r\nAuthorization: ${user.auth.authorization}\r\n` +
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        },
        ...Array.from({ length: 40 }, () => ({ data: `${chunk.length.toString(16)}\r\n${chunk}\r\n` }))
      ], 5_000)
      // Cut off at 1 MiB: the server closes the connection (answering 413 when the client still listens).
      expect(chunked.closed).toBe(true)
      expect([0, 413]).toContain(statusOf(chunked.text))

      const untyped = yield* rawExchange(base, [{
        data: `POST /api/auth/2fa/verify HTTP/1.1\r\nHost: x\r\nAuthorization: ${user.auth.authorization}\r\n` +
          "Content-Length: 17\r\nConnection: close\r\n\r\n{\"code\":\"12345\"}"
      }], 5_000)
      expect(statusOf(untyped.text)).toBe(415)
      expect(JSON.parse(bodyOf(untyped.text))).toEqual(notJson)
    }))

  it.scoped("over a socket: a client that leaves in the middle of its body moves no money; the service goes on", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { adminIdpIds: ["root"] } })
      const base = yield* client.listen()
      const { kase } = yield* makeCase({ priceCents: 300n })
      const player = yield* fundedPlayer(client, "leaves-mid-body", 1000)
      const balance = Effect.map(client.get("/api/auth/me", player.auth), (r) => r.body.balanceCents)
      const request = { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }
      const whole = JSON.stringify(request)
      const left = yield* rawExchange(base, [{
        data: `POST /api/battles HTTP/1.1\r\nHost: x\r\nAuthorization: ${player.auth.authorization}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${whole.length}\r\n\r\n${whole.slice(0, 20)}`
      }], 500)
      expect(left.text).toBe("")
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 200)))
      expect(yield* balance).toBe(1000)
      expect((yield* client.post("/api/battles", request, player.auth)).status).toBe(201)
      expect(yield* balance).toBe(700)
    }))

  it.scoped("over a socket: slow headers and slow bodies are cut off by the server's timeouts; event streams are not", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const base = yield* client.listen(() => createHttpServer({ headersMs: 500, requestMs: 1_000, keepAliveMs: 300 }))
      const user = yield* signIn(client, "slow-client")

      // Headers that never finish: the connection is closed after the headers timeout.
      const slowHeaders = yield* rawExchange(base, [
        { data: "GET /api/health HTTP/1.1\r\nHost: x\r\n" },
        { data: "X-One: 1\r\n", afterMs: 200 },
        { data: "X-Two: 2\r\n", afterMs: 200 }
      ], 5_000)
      expect(slowHeaders.closed).toBe(true)
      expect(slowHeaders.elapsedMs).toBeLessThan(3_000)
      expect([0, 408]).toContain(statusOf(slowHeaders.text))

      // A body that trickles past the request timeout: 408 and closed.
      const slowBody = yield* rawExchange(base, [
        {
          data: `POST /api/auth/2fa/verify HTTP/1.1\r\nHost: x\r\nAuthorization: ${user.auth.authorization}\r\n` +
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        },
        ...Array.from({ length: 20 }, () => ({ data: " ", afterMs: 200 }))
      ], 6_000)
      expect(slowBody.closed).toBe(true)
      expect(slowBody.elapsedMs).toBeLessThan(4_000)
      expect(statusOf(slowBody.text)).toBe(408)

      // An idle kept-alive connection is closed after the keep-alive timeout.
      const idle = yield* rawExchange(base, [{ data: "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n" }], 5_000)
      expect(statusOf(idle.text)).toBe(200)
      expect(idle.closed).toBe(true)
      expect(idle.elapsedMs).toBeLessThan(2_000)

      // An event stream outlives every timeout.
      const stream = yield* rawExchange(base, [{
        data: `GET /api/realtime HTTP/1.1\r\nHost: x\r\nAuthorization: ${user.auth.authorization}\r\n\r\n`
      }], 2_500)
      expect(statusOf(stream.text)).toBe(200)
      expect(stream.text).toContain(": connected")
      expect(stream.closed).toBe(false)
    }), { timeout: 30_000 })
})
