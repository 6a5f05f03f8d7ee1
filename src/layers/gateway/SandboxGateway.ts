/**
 * The embedded sandbox gateway (docs/rules.md#sandbox-gateway), used when PAYMENT_GATEWAY_URL is absent:
 * charges with id `ch_<random>` expiring after DEPOSIT_TTL_MINUTES; payouts always succeed, and the status query knows
 * the payouts this process made; refunds always succeed, one per deposit (`re_sandbox_<depositId>`). Each method behaves as its real counterpart would (docs/rules.md#sandbox-gateway):
 *
 * - PIX: a real BR Code and its QR image; the charge waits for the payer, who pays it (or fails or
 *   expires it) through the sandbox endpoints.
 * - CREDIT_CARD: paid at once; CRYPTO: paid SANDBOX_CRYPTO_DELAY_SECONDS after it was created. Neither
 *   has a code to scan (empty qrCode and qrCodeText). The sandbox itself sends the signed charge.paid
 *   to our callback, like a real gateway's webhook: it retries (from 0.5 s, doubling, at most 30 s
 *   apart) until the callback accepts it (it answers 404 until the deposit row is written) or the charge
 *   expires. A scheduled payment lives in this process only: a restart forgets it (the deposit then
 *   expires, or is paid through the sandbox endpoints).
 *
 * Cancelling a charge stops its scheduled payment; a delivery already in flight finishes first, and
 * then the deposit is CONFIRMED, so its cancellation is refused.
 */
import { Clock, Duration, Effect, FiberMap, Layer, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import QRCode from "qrcode"
import { AppConfig } from "../AppConfig"
import { GatewayError, type PaymentMethod, PaymentGateway } from "../PaymentGateway"
import { brCode } from "./PixBrCode"
import { SandboxCallback } from "./SandboxCallback"

/** Between deliveries of a charge.paid the callback did not accept. */
const redelivery = Schedule.exponential(Duration.millis(500)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(30))))

export const SandboxGateway = Layer.scoped(
  PaymentGateway,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const callback = yield* SandboxCallback
    const host = new URL(config.publicUrl).host
    /** Payout ids by withdrawal: one payout per withdrawal, however often it is asked for (idempotent). */
    const payouts = new Map<bigint, string>()
    /** Refund ids by deposit: one refund per deposit, however often it is asked for (idempotent). */
    const refunds = new Map<bigint, string>()
    const ttl = Duration.minutes(config.gateway.depositTtlMinutes)
    /** Scheduled payments by charge id; interrupted when the layer closes. */
    const payments = yield* FiberMap.make<string>()

    /** After `delay`: charge.paid, delivered until our callback accepts it or the charge expires. */
    const payLater = (externalId: string, delay: Duration.Duration) =>
      Effect.sleep(delay).pipe(
        Effect.zipRight(
          callback.send({ event: "charge.paid", data: { id: externalId } }).pipe(
            // A delivery in flight is never cut off: cancellation waits for its answer.
            Effect.uninterruptible,
            Effect.filterOrFail(
              (sent) => sent.status >= 200 && sent.status < 300,
              (sent) => new GatewayError({ message: `the callback answered ${sent.status}` })
            ),
            Effect.retry(redelivery.pipe(Schedule.upTo(ttl)))
          )
        ),
        Effect.catchAll((error) => Effect.logWarning(`Sandbox gateway: charge ${externalId} was not confirmed: ${error.message}`))
      )

    const delayOf = (method: Exclude<PaymentMethod, "PIX">) =>
      method === "CRYPTO" ? Duration.seconds(config.gateway.sandboxCryptoDelaySeconds) : Duration.zero

    return {
      createCharge: Effect.fnUntraced(function*(request) {
        const externalId = `ch_${randomBytes(12).toString("hex")}`
        const now = yield* Clock.currentTimeMillis
        const expiresAt = new Date(now + Duration.toMillis(ttl))
        if (request.method !== "PIX") {
          yield* FiberMap.run(payments, externalId, payLater(externalId, delayOf(request.method)))
          return { externalId, qrCodeText: "", qrCode: "", expiresAt }
        }
        const qrCodeText = brCode({
          location: `${host}/sandbox/charges/${externalId}`,
          amountCents: request.amountCents,
          merchantName: config.serviceName,
          merchantCity: "SAO PAULO",
          txid: externalId.replace("_", "")
        })
        const qrCode = yield* Effect.tryPromise({
          try: () => QRCode.toDataURL(qrCodeText, { errorCorrectionLevel: "M" }),
          catch: () => new GatewayError({ message: "Could not draw the QR code" })
        })
        return { externalId, qrCodeText, qrCode, expiresAt }
      }),
      cancelCharge: (externalId) => FiberMap.remove(payments, externalId),
      payout: (request) =>
        Effect.sync(() => {
          const payoutId = `po_sandbox_${request.withdrawalId}`
          payouts.set(request.withdrawalId, payoutId)
          return { payoutId }
        }),
      payoutStatus: (withdrawalId) =>
        Effect.sync(() => {
          const payoutId = payouts.get(withdrawalId)
          return payoutId === undefined ? { _tag: "Unknown" as const } : { _tag: "Paid" as const, payoutId }
        }),
      refund: (request) =>
        Effect.sync(() => {
          const refundId = refunds.get(request.depositId) ?? `re_sandbox_${request.depositId}`
          refunds.set(request.depositId, refundId)
          return { refundId }
        })
    }
  })
)
