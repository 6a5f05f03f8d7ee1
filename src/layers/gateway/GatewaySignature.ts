/**
 * Signatures of the payment gateway's callbacks (docs/rules.md#gateway-callback): lowercase hex
 * HMAC-SHA256 of the JSON body, keyed with the shared webhook secret. Verified over the raw bytes
 * received and, failing that, over the compact re-serialization of the parsed JSON (a gateway that
 * signs `JSON.stringify(body)` but sends it pretty-printed); compared in constant time.
 */
import { createHmac, timingSafeEqual } from "node:crypto"

export const signGatewayBody = (secret: string, body: string): string =>
  createHmac("sha256", secret).update(body, "utf8").digest("hex")

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

export const verifyGatewaySignature = (secret: string, raw: string, signature: string | undefined): boolean => {
  if (signature === undefined || signature.trim() === "") return false
  if (matches(signGatewayBody(secret, raw), signature)) return true
  const compact = compactForm(raw)
  return compact !== undefined && compact !== raw && matches(signGatewayBody(secret, compact), signature)
}
