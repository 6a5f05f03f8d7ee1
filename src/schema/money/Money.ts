/** Money as people read it, the bounds of an amount, and the refusal when the payment gateway cannot be reached. */
import { Schema } from "effect"
import { message } from "../platform/Errors"

/** `R$ 1,234.56`: the notation of the service's messages (`R$ 100,000.00`). */
export const formatBrl = (cents: bigint): string => {
  const sign = cents < 0n ? "-" : ""
  const abs = cents < 0n ? -cents : cents
  const units = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  return `${sign}R$ ${units}.${(abs % 100n).toString().padStart(2, "0")}`
}

/** The message for an amount of a `what` outside `min`..`max`, e.g. `Minimum deposit is R$ 5.00`; else undefined. */
export const amountBoundsProblem = (what: string, min: bigint, max: bigint) => (amountCents: bigint): string | undefined =>
  amountCents < min
    ? `Minimum ${what} is ${formatBrl(min)}`
    : amountCents > max
    ? `Maximum ${what} is ${formatBrl(max)}`
    : undefined

/** The payment gateway could not create a charge; nothing was recorded (502). */
export class GatewayUnavailable extends Schema.TaggedError<GatewayUnavailable>()(
  "GatewayUnavailable",
  message("Payment gateway unavailable")
) {}
