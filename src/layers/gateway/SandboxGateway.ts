/**
 * The embedded sandbox gateway (D9), used when PAYMENT_GATEWAY_URL is absent: charges with id
 * `ch_<random>`, a real PIX BR Code and its QR image, expiring after DEPOSIT_TTL_MINUTES; payouts
 * always succeed, and the status query knows the payouts this process made. Paying, failing or expiring a charge is done through the sandbox endpoints, which
 * send the gateway's signed event to our own callback. The sandbox keeps no charge state: a charge
 * is cancelled when its deposit is CANCELLED, and the sandbox controls refuse to pay it then.
 */
import { Clock, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import QRCode from "qrcode"
import { AppConfig } from "../AppConfig"
import { GatewayError, PaymentGateway } from "../PaymentGateway"
import { brCode } from "./PixBrCode"

export const SandboxGateway = Layer.effect(
  PaymentGateway,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const host = new URL(config.publicUrl).host
    /** Payout ids by withdrawal: one payout per withdrawal, however often it is asked for (idempotent). */
    const payouts = new Map<bigint, string>()

    return {
      createCharge: (request) =>
        Effect.gen(function*() {
          const externalId = `ch_${randomBytes(12).toString("hex")}`
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
          const now = yield* Clock.currentTimeMillis
          return { externalId, qrCodeText, qrCode, expiresAt: new Date(now + config.gateway.depositTtlMinutes * 60_000) }
        }),
      cancelCharge: () => Effect.void,
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
        })
    }
  })
)
