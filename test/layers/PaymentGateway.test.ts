import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Queue, Redacted, TestClock } from "effect"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { AppConfig } from "../../src/layers/AppConfig"
import { brCode, crc16 } from "../../src/layers/gateway/PixBrCode"
import { GatewayFromConfig } from "../../src/layers/gateway/GatewayFromConfig"
import { HttpGateway } from "../../src/layers/gateway/HttpGateway"
import { SandboxCallback, type SandboxEvent } from "../../src/layers/gateway/SandboxCallback"
import { SandboxGateway } from "../../src/layers/gateway/SandboxGateway"
import { ChargeAlreadyPaid, GatewayError, PaymentGateway, PayoutRefused } from "../../src/layers/PaymentGateway"
import { testConfig } from "../support/TestApp"

/** Splits an EMV payload into its top-level fields. */
const fields = (payload: string) => {
  const out: Record<string, string> = {}
  for (let i = 0; i < payload.length;) {
    const id = payload.slice(i, i + 2)
    const length = Number(payload.slice(i + 2, i + 4))
    out[id] = payload.slice(i + 4, i + 4 + length)
    i += 4 + length
  }
  return out
}

describe("PIX BR Code", () => {
  it("CRC16-CCITT matches the standard check value and the Central Bank's example", () => {
    expect(crc16("123456789")).toBe("29B1")
    // The static example of the BR Code manual, whose published CRC is 1D3D.
    const example = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-426655440000" +
      "5204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***6304"
    expect(crc16(example)).toBe("1D3D")
  })

  it("a charge's payload has the amount, currency, merchant and txid, and a CRC over the rest", () => {
    const payload = brCode({
      location: "pay.example/charges/ch_1",
      amountCents: 12345n,
      merchantName: "Game Plataforma São João",
      merchantCity: "São Paulo",
      txid: "ch_abc-123"
    })
    const parsed = fields(payload)
    expect(parsed).toMatchObject({
      "00": "01",
      "01": "12",
      "52": "0000",
      "53": "986",
      "54": "123.45",
      "58": "BR",
      "59": "GAME PLATAFORMA SAO JOAO",
      "60": "SAO PAULO",
      "62": "0508chabc123"
    })
    expect(fields(parsed["26"]!)).toEqual({ "00": "br.gov.bcb.pix", "25": "pay.example/charges/ch_1" })
    expect(payload.slice(-4)).toBe(crc16(payload.slice(0, -4)))
    expect(fields(brCode({ location: "x", amountCents: 5n, merchantName: "a", merchantCity: "b", txid: "c" }))["54"])
      .toBe("0.05")
  })
})

/**
 * Our callback as the sandbox reaches it, for the sandbox alone: every event it is sent goes into
 * `sent`; it answers the statuses of `answers` in turn, then 200.
 */
const recordingCallback = (answers: ReadonlyArray<number> = []) =>
  Effect.gen(function*() {
    const sent = yield* Queue.unbounded<SandboxEvent>()
    const left = [...answers]
    const layer = Layer.succeed(SandboxCallback, {
      send: (event) => Effect.zipRight(Queue.offer(sent, event), Effect.sync(() => ({ status: left.shift() ?? 200, body: "" })))
    })
    return { sent, layer }
  })

/** The sandbox gateway over `callback`, with `cryptoDelaySeconds`, alive until the test's scope closes. */
const sandbox = (callback: Layer.Layer<SandboxCallback>, cryptoDelaySeconds = 0) =>
  Effect.map(
    Layer.build(SandboxGateway.pipe(Layer.provide([
      callback,
      Layer.succeed(AppConfig, {
        ...testConfig,
        gateway: { ...testConfig.gateway, depositTtlMinutes: 30, sandboxCryptoDelaySeconds: cryptoDelaySeconds }
      })
    ]))),
    Context.get(PaymentGateway)
  )

/** Lets the sandbox's scheduled payments run as far as they can without the clock moving. */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))

describe("sandbox gateway", () => {
  it.scoped("PIX charges: ch_ ids, a valid BR Code, a PNG QR and expiry after DEPOSIT_TTL_MINUTES; never paid by itself", () =>
    Effect.gen(function*() {
      const callback = yield* recordingCallback()
      yield* TestClock.setTime(Date.UTC(2026, 10, 22, 12))
      const gateway = yield* sandbox(callback.layer)
      const charge = yield* gateway.createCharge({ amountCents: 5000n, method: "PIX", reference: "deposit-1" })
      expect(charge.externalId).toMatch(/^ch_[0-9a-f]{24}$/)
      expect(fields(charge.qrCodeText)["54"]).toBe("50.00")
      expect(charge.qrCodeText.slice(-4)).toBe(crc16(charge.qrCodeText.slice(0, -4)))
      expect(charge.qrCode.startsWith("data:image/png;base64,")).toBe(true)
      expect(charge.expiresAt.toISOString()).toBe("2026-11-22T12:30:00.000Z")
      const other = yield* gateway.createCharge({ amountCents: 5000n, method: "PIX", reference: "deposit-2" })
      expect(other.externalId).not.toBe(charge.externalId)
      yield* TestClock.adjust("1 hour")
      yield* settle
      expect(yield* Queue.size(callback.sent)).toBe(0)
    }))

  it.scoped("CREDIT_CARD: paid at once, charge.paid sent until the callback accepts it", () =>
    Effect.gen(function*() {
      // Our callback does not know the charge until the deposit row is written: 404, then 503, then 200.
      const callback = yield* recordingCallback([404, 503])
      yield* TestClock.setTime(Date.UTC(2026, 10, 22, 12))
      const gateway = yield* sandbox(callback.layer, 600)
      const charge = yield* gateway.createCharge({ amountCents: 1035n, method: "CREDIT_CARD", reference: "deposit-3" })
      expect(charge).toMatchObject({ qrCode: "", qrCodeText: "", expiresAt: new Date(Date.UTC(2026, 10, 22, 12, 30)) })
      const paid = { event: "charge.paid", data: { id: charge.externalId } }
      expect(yield* Queue.take(callback.sent)).toEqual(paid)
      yield* TestClock.adjust("500 millis")
      expect(yield* Queue.take(callback.sent)).toEqual(paid)
      yield* TestClock.adjust("1 second")
      expect(yield* Queue.take(callback.sent)).toEqual(paid)
      // Accepted: nothing more is sent.
      yield* TestClock.adjust("1 hour")
      yield* settle
      expect(yield* Queue.size(callback.sent)).toBe(0)
    }))

  it.scoped("CRYPTO: paid SANDBOX_CRYPTO_DELAY_SECONDS after the charge, not before", () =>
    Effect.gen(function*() {
      const callback = yield* recordingCallback()
      const gateway = yield* sandbox(callback.layer, 600)
      const charge = yield* gateway.createCharge({ amountCents: 1010n, method: "CRYPTO", reference: "deposit-4" })
      expect(charge).toMatchObject({ qrCode: "", qrCodeText: "" })
      yield* TestClock.adjust("599 seconds")
      yield* settle
      expect(yield* Queue.size(callback.sent)).toBe(0)
      yield* TestClock.adjust("1 second")
      expect(yield* Queue.take(callback.sent)).toEqual({ event: "charge.paid", data: { id: charge.externalId } })
    }))

  it.scoped("a cancelled charge is never paid; a payment the callback never accepts stops when the charge expires", () =>
    Effect.gen(function*() {
      const callback = yield* recordingCallback(Array.from({ length: 1_000 }, () => 404))
      const gateway = yield* sandbox(callback.layer, 600)
      const cancelled = yield* gateway.createCharge({ amountCents: 1010n, method: "CRYPTO", reference: "deposit-5" })
      yield* gateway.cancelCharge(cancelled.externalId)
      yield* gateway.cancelCharge(cancelled.externalId)
      yield* TestClock.adjust("601 seconds")
      yield* settle
      expect(yield* Queue.size(callback.sent)).toBe(0)

      const refused = yield* gateway.createCharge({ amountCents: 1035n, method: "CREDIT_CARD", reference: "deposit-6" })
      // Deliveries from 0.5 s apart, doubling up to 30 s, for the 30 minutes the charge lives.
      for (let second = 0; second < 40 * 60; second += 10) {
        yield* settle
        yield* TestClock.adjust("10 seconds")
      }
      yield* settle
      const deliveries = yield* Queue.takeAll(callback.sent)
      expect([...deliveries].every((event) => event.data.id === refused.externalId)).toBe(true)
      expect(deliveries.length).toBeGreaterThan(50)
      expect(deliveries.length).toBeLessThan(70)
      yield* TestClock.adjust("1 hour")
      yield* settle
      expect(yield* Queue.size(callback.sent)).toBe(0)
    }))
})

describe("HTTP gateway adapter", () => {
  /** A gateway that answers 503 `failures` times, then succeeds; records every request. */
  const fakeGateway = (failures: number) =>
    Effect.acquireRelease(
      Effect.async<{ url: string; seen: Array<{ path: string; headers: IncomingMessage["headers"]; body: any }>; close: () => void }>(
        (resume) => {
          const seen: Array<{ path: string; headers: IncomingMessage["headers"]; body: any }> = []
          let left = failures
          const server = createServer((request, response) => {
            let text = ""
            request.on("data", (chunk) => (text += chunk))
            request.on("end", () => {
              seen.push({ path: request.url!, headers: request.headers, body: JSON.parse(text) })
              if (left-- > 0) return response.writeHead(503).end()
              if (request.url!.endsWith("/cancel")) return response.writeHead(request.url!.includes("paid") ? 409 : 204).end()
              response.writeHead(200, { "content-type": "application/json" })
              response.end(JSON.stringify(
                request.url === "/charges"
                  ? { id: "ch_real", qrCodeText: "000201", qrCode: "data:image/png;base64,AA==", expiresAt: "2026-11-22T12:30:00Z" }
                  : { id: "po_real" }
              ))
            })
          })
          server.listen(0, "127.0.0.1", () =>
            resume(Effect.succeed({
              url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
              seen,
              close: () => server.close()
            })))
        }
      ),
      (server) => Effect.sync(server.close)
    )

  /** The adapter, alive until the test's scope closes (its HTTP client is scoped). */
  const adapter = (url: string, key: string) =>
    Effect.map(Layer.build(HttpGateway(url, Redacted.make(key))), Context.get(PaymentGateway))

  it.live("retries a failed call with the same idempotency key, amounts in reais, the key as bearer", () =>
    Effect.gen(function*() {
      const server = yield* fakeGateway(2)
      const gateway = yield* adapter(server.url, "secret-key")
      const charge = yield* gateway.createCharge({ amountCents: 12345n, method: "PIX", reference: "deposit-7" })
      expect(charge).toMatchObject({ externalId: "ch_real", qrCodeText: "000201" })
      expect(charge.expiresAt.toISOString()).toBe("2026-11-22T12:30:00.000Z")
      expect(server.seen).toHaveLength(3)
      for (const request of server.seen) {
        expect(request.headers["idempotency-key"]).toBe("deposit-7")
        expect(request.headers.authorization).toBe("Bearer secret-key")
        expect(request.body).toEqual({ amount: 123.45, currency: "BRL", method: "PIX", reference: "deposit-7" })
      }
      const payout = yield* gateway.payout({ withdrawalId: 9n, amountCents: 1000n, pixKeyType: "EMAIL", pixKey: "a@b.co" })
      expect(payout).toEqual({ payoutId: "po_real" })
      expect(server.seen[3]!.headers["idempotency-key"]).toBe("withdrawal-9")
    }).pipe(Effect.scoped))

  it.live("cancels a charge; a charge the gateway reports paid (409) is ChargeAlreadyPaid", () =>
    Effect.gen(function*() {
      const server = yield* fakeGateway(1)
      const gateway = yield* adapter(server.url, "k")
      yield* gateway.cancelCharge("ch_open")
      expect(server.seen.map((r) => [r.path, r.headers["idempotency-key"]])).toEqual([
        ["/charges/ch_open/cancel", "cancel-ch_open"],
        ["/charges/ch_open/cancel", "cancel-ch_open"]
      ])
      expect(yield* Effect.flip(gateway.cancelCharge("ch_paid"))).toEqual(new ChargeAlreadyPaid({ externalId: "ch_paid" }))
    }).pipe(Effect.scoped))

  it.live("a gateway that keeps failing is a GatewayError after the retries", () =>
    Effect.gen(function*() {
      const server = yield* fakeGateway(100)
      const gateway = yield* adapter(server.url, "k")
      const error = yield* Effect.flip(gateway.payout({ withdrawalId: 1n, amountCents: 1000n, pixKeyType: "EMAIL", pixKey: "a@b.co" }))
      expect(error).toBeInstanceOf(GatewayError)
      expect(server.seen).toHaveLength(4)
    }).pipe(Effect.scoped))

  /** A gateway that answers each request with `answer(method, path)`: a status and a JSON body. */
  const scriptedGateway = (answer: (method: string, path: string) => readonly [number, unknown]) =>
    Effect.acquireRelease(
      Effect.async<{ url: string; close: () => void }>((resume) => {
        const server = createServer((request, response) => {
          request.resume()
          request.on("end", () => {
            const [status, body] = answer(request.method!, request.url!)
            response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
          })
        })
        server.listen(0, "127.0.0.1", () =>
          resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() })))
      }),
      (server) => Effect.sync(server.close)
    )

  const payout = { withdrawalId: 9n, amountCents: 1000n, pixKeyType: "EMAIL", pixKey: "a@b.co" }

  it.live("a payout refused with a 4xx is PayoutRefused with the gateway's message; 408, 409 and 429 leave the outcome unknown", () =>
    Effect.gen(function*() {
      for (const [status, body, expected] of [
        [422, { message: "PIX key not found" }, new PayoutRefused({ message: "PIX key not found" })],
        [400, "not json", new PayoutRefused({ message: "status 400" })],
        [409, { message: "in progress" }, new GatewayError({ message: "The payment gateway is unavailable" })],
        [429, {}, new GatewayError({ message: "The payment gateway is unavailable" })],
        [408, {}, new GatewayError({ message: "The payment gateway is unavailable" })]
      ] as const) {
        const server = yield* scriptedGateway(() => [status, body])
        const gateway = yield* adapter(server.url, "k")
        expect(yield* Effect.flip(gateway.payout(payout)), String(status)).toEqual(expected)
      }
    }).pipe(Effect.scoped))

  it.live("the payout status is asked by reference: paid, failed, processing, or unknown (404)", () =>
    Effect.gen(function*() {
      const asked: Array<string> = []
      const server = yield* scriptedGateway((method, path) => {
        asked.push(`${method} ${path}`)
        const id = path.split("-").pop()
        return id === "1"
          ? [200, { id: "po_1", status: "PAID" }]
          : id === "2"
          ? [200, { id: "po_2", status: "FAILED", failReason: "Account closed" }]
          : id === "3"
          ? [200, { id: "po_3", status: "PROCESSING" }]
          : [404, { message: "no such payout" }]
      })
      const gateway = yield* adapter(server.url, "k")
      expect(yield* gateway.payoutStatus(1n)).toEqual({ _tag: "Paid", payoutId: "po_1" })
      expect(yield* gateway.payoutStatus(2n)).toEqual({ _tag: "Failed", reason: "Account closed" })
      expect(yield* gateway.payoutStatus(3n)).toEqual({ _tag: "Processing" })
      expect(yield* gateway.payoutStatus(4n)).toEqual({ _tag: "Unknown" })
      expect(asked).toEqual(["GET /payouts/withdrawal-1", "GET /payouts/withdrawal-2", "GET /payouts/withdrawal-3", "GET /payouts/withdrawal-4"])
    }).pipe(Effect.scoped))
})

describe("refunds (docs/rules.md#deposit-third-party)", () => {
  it.live("the HTTP adapter: POST /charges/:id/refund, the whole payment in reais, reference and Idempotency-Key deposit-<id>, retried on 5xx", () =>
    Effect.gen(function*() {
      const seen: Array<{ method: string; path: string; key: string | undefined; body: unknown }> = []
      let failures = 1
      const server = yield* Effect.acquireRelease(
        Effect.async<{ url: string; close: () => void }>((resume) => {
          const http = createServer((request, response) => {
            let text = ""
            request.on("data", (chunk) => (text += chunk))
            request.on("end", () => {
              seen.push({
                method: request.method!,
                path: request.url!,
                key: request.headers["idempotency-key"] as string | undefined,
                body: JSON.parse(text)
              })
              if (failures-- > 0) return response.writeHead(503).end()
              if (request.url!.includes("ch_refused")) {
                return response.writeHead(422, { "content-type": "application/json" }).end(JSON.stringify({ message: "not paid" }))
              }
              response.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id: "re_real_1" }))
            })
          })
          http.listen(0, "127.0.0.1", () =>
            resume(Effect.succeed({ url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, close: () => http.close() })))
        }),
        (s) => Effect.sync(s.close)
      )
      const gateway = yield* Effect.map(Layer.build(HttpGateway(server.url, Redacted.make("k"))), Context.get(PaymentGateway))
      expect(yield* gateway.refund({ depositId: 42n, externalId: "ch_paid", amountCents: 2_550n })).toEqual({ refundId: "re_real_1" })
      expect(seen).toEqual(Array(2).fill({
        method: "POST",
        path: "/charges/ch_paid/refund",
        key: "deposit-42",
        body: { amount: 25.5, currency: "BRL", reference: "deposit-42" }
      }))
      // Anything but a 2xx {id} is a failure, left for the next try.
      expect(yield* Effect.flip(gateway.refund({ depositId: 43n, externalId: "ch_refused", amountCents: 500n })))
        .toEqual(new GatewayError({ message: "The payment gateway is unavailable" }))
    }).pipe(Effect.scoped))

  it.scoped("the sandbox: one refund per deposit, however often asked", () =>
    Effect.gen(function*() {
      const gateway = yield* sandbox((yield* recordingCallback()).layer)
      const request = { depositId: 7n, externalId: "ch_x", amountCents: 1_000n }
      expect(yield* gateway.refund(request)).toEqual({ refundId: "re_sandbox_7" })
      expect(yield* gateway.refund(request)).toEqual({ refundId: "re_sandbox_7" })
    }))
})

describe("sandbox payouts", () => {
  it.scoped("pay once per withdrawal, and the status query knows them", () =>
    Effect.gen(function*() {
      const gateway = yield* sandbox((yield* recordingCallback()).layer)
      expect(yield* gateway.payoutStatus(5n)).toEqual({ _tag: "Unknown" })
      const paid = yield* gateway.payout({ withdrawalId: 5n, amountCents: 1000n, pixKeyType: "EMAIL", pixKey: "a@b.co" })
      expect(yield* gateway.payoutStatus(5n)).toEqual({ _tag: "Paid", payoutId: paid.payoutId })
    }))
})

describe("the gateway chosen by the configuration", () => {
  const chosen = (config: Partial<typeof testConfig>) =>
    Effect.flatMap(recordingCallback(), (callback) =>
      Layer.build(GatewayFromConfig).pipe(
        Effect.provide(Layer.merge(Layer.succeed(AppConfig, { ...testConfig, ...config }), callback.layer)),
        Effect.either
      ))

  it.scoped("the sandbox only with SANDBOX on and no PAYMENT_GATEWAY_URL; otherwise the real one or no start", () =>
    Effect.gen(function*() {
      expect((yield* chosen({ sandbox: true }))._tag).toBe("Right")
      const refused = yield* chosen({ sandbox: false })
      expect(refused._tag === "Left" && refused.left.message).toBe(
        "PAYMENT_GATEWAY_URL and PAYMENT_GATEWAY_KEY are required without SANDBOX=true"
      )
      const real = yield* chosen({
        sandbox: false,
        gateway: { ...testConfig.gateway, url: Option.some("https://gw.example.com"), key: Option.some(Redacted.make("k")) }
      })
      expect(real._tag).toBe("Right")
    }))
})
