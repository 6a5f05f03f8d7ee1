/**
 * Signatures of the payment gateway's callbacks (docs/rules.md#gateway-callback): lowercase hex
 * HMAC-SHA256, keyed with the shared webhook secret, of the JSON body, or of `timestamp + "." + body` when
 * the gateway sends `x-webhook-timestamp` (docs/rules.md#gateway-callback-timestamp). Verified over the raw
 * bytes received and, failing that, over the compact re-serialization of the parsed JSON (a gateway that
 * signs `JSON.stringify(body)` but sends it pretty-printed); compared in constant time. An event's id
 * (docs/rules.md#gateway-event-ids) is the SHA-256 of what its signature covers, the body in its compact form.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto"

export const signGatewayBody = (secret: string, body: string): string =>
  createHmac("sha256", secret).update(body, "utf8").digest("hex")

/** What a signature covers: the body, or `timestamp.body` when the callback carries a timestamp. */
const signedContent = (body: string, timestamp: string | undefined) =>
  timestamp === undefined ? body : `${timestamp}.${body}`

/** The signature a gateway sends with `body` and, if it sends one, `x-webhook-timestamp`. */
export const signGatewayEvent = (secret: string, body: string, timestamp: string | undefined): string =>
  signGatewayBody(secret, signedContent(body, timestamp))

const matches = (expectedHex: string, received: string) => {
  const expected = Buffer.from(expectedHex, "utf8")
  const actual = Buffer.from(received.trim().toLowerCase(), "utf8")
  return expected.length === actual.length && timingSafeEqual(expected, actual)
}

const compactForm = (raw: string): string | undefined => {
  try {
    return JSON.stringify(JSON.parse(raw))
  } catch {
    return undefined
  }
}

export const verifyGatewaySignature = (
  secret: string,
  raw: string,
  signature: string | undefined,
  timestamp?: string
): boolean => {
  if (signature === undefined || signature.trim() === "") return false
  if (matches(signGatewayEvent(secret, raw, timestamp), signature)) return true
  const compact = compactForm(raw)
  return compact !== undefined && compact !== raw && matches(signGatewayEvent(secret, compact, timestamp), signature)
}

/**
 * The event's id: SHA-256 (hex) of what its signature covers, with the body in its compact form, so the
 * same signed content sent again, however its JSON is spaced, is the same event.
 */
export const gatewayEventId = (raw: string, timestamp: string | undefined): string =>
  createHash("sha256").update(signedContent(compactForm(raw) ?? raw, timestamp), "utf8").digest("hex")

/** `x-webhook-timestamp`: whole seconds since the epoch, in decimal digits. */
const TIMESTAMP_SHAPE = /^\d{1,12}$/

/** The header's value when it looks like a timestamp, else undefined. */
export const timestampOf = (header: string): string | undefined => {
  const value = header.trim()
  return TIMESTAMP_SHAPE.test(value) ? value : undefined
}

/** How far a callback's timestamp may be from our clock, either way. */
export const TIMESTAMP_TOLERANCE_SECONDS = 300

/** Seconds between the timestamp and `nowMs` (positive: in the past). */
export const timestampAge = (timestamp: string, nowMs: number): number => Math.floor(nowMs / 1000) - Number(timestamp)

/** Within 5 minutes of our clock, either way (docs/rules.md#gateway-callback-timestamp). */
export const isTimestampFresh = (timestamp: string, nowMs: number): boolean =>
  Math.abs(timestampAge(timestamp, nowMs)) <= TIMESTAMP_TOLERANCE_SECONDS
