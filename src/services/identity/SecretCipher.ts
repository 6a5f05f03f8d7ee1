/**
 * AES-256-GCM for short secrets at rest (the two-factor secret, keyed by TWO_FACTOR_KEY:
 * docs/rules.md#two-factor-secret-storage).
 *
 * One string per value: `v1.<iv>.<tag>.<ciphertext>`, each part base64url, with a fresh random 12-byte
 * IV per encryption, so encrypting the same text twice gives different strings. A value that does not
 * decrypt (tampered, truncated, another key) is a defect: it can only mean corrupted data or a wrong key.
 */
import { Effect, Redacted } from "effect"
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"

const VERSION = "v1"
const IV_BYTES = 12
const TAG_BYTES = 16

export const encrypt = (key: Redacted.Redacted<Buffer>, plaintext: string): Effect.Effect<string> =>
  Effect.sync(() => {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv("aes-256-gcm", Redacted.value(key), iv)
    const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
    const parts = [iv, cipher.getAuthTag(), ciphertext].map((bytes) => bytes.toString("base64url"))
    return [VERSION, ...parts].join(".")
  })

export const decrypt = (key: Redacted.Redacted<Buffer>, value: string): Effect.Effect<string> =>
  Effect.try({
    try: () => {
      const [version, iv, tag, ciphertext, ...rest] = value.split(".")
      if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined || rest.length > 0) {
        throw new Error("unknown format")
      }
      const ivBytes = Buffer.from(iv, "base64url")
      const tagBytes = Buffer.from(tag, "base64url")
      // A short tag would weaken GCM's check; Node accepts down to 4 bytes unless told otherwise.
      if (ivBytes.length !== IV_BYTES || tagBytes.length !== TAG_BYTES) throw new Error("bad IV or tag length")
      const decipher = createDecipheriv("aes-256-gcm", Redacted.value(key), ivBytes, { authTagLength: TAG_BYTES })
      decipher.setAuthTag(tagBytes)
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8")
    },
    catch: (cause) => new Error(`SecretCipher: cannot decrypt a stored value: ${cause instanceof Error ? cause.message : cause}`)
  }).pipe(Effect.orDie)
