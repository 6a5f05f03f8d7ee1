/**
 * Players' identities (docs/rules.md#jurisdiction-br, D22): verification of a CPF with the KYC provider, what
 * is shown of it, and the check every game or money action makes under BR.
 *
 * Storage (docs/rules.md#identity-key): the CPF encrypted with AES-256-GCM and its HMAC-SHA256, both under
 * keys derived from IDENTITY_KEY with HKDF; the hash is UNIQUE, so of two accounts verifying one CPF at once
 * exactly one row commits. The masked form is stored beside them, so showing an identity needs no key.
 * The CPF is never logged: no span or log line here carries it, and the KYC adapter logs no bodies.
 *
 * The gate (docs/rules.md#identity-required): a verified identity cannot be unverified, so each instance
 * remembers the users it has seen verified and answers them without a database round trip; only a user not
 * yet known verified costs one `SELECT` (and is refused, unless they verified since).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Redacted, Schema } from "effect"
import { createHmac, hkdfSync } from "node:crypto"
import { AppConfig } from "../../layers/AppConfig"
import { ExclusionRegistry } from "../../layers/ExclusionRegistry"
import { Kyc } from "../../layers/Kyc"
import { SelfExcluded } from "../../schema/identity/ResponsibleGaming"
import {
  CpfAlreadyRegistered,
  cpfDigits,
  IdentityAlreadyVerified,
  IdentityRefused,
  type IdentityRequest,
  IdentityRequired,
  maskCpf,
  Underage,
  type VerifiedIdentity
} from "../../schema/identity/Compliance"
import { NotFound, ServiceUnavailable } from "../../schema/platform/Errors"
import type { UserId } from "../../schema/platform/Ids"
import { execute, firstOf, rowCountOf } from "../platform/SqlRows"
import { decrypt, encrypt } from "./SecretCipher"

/** Players must be this old on the service's date in America/Sao_Paulo (docs/rules.md#identity-verification). */
const ADULT_AGE = 18
const VERIFIED_KEPT = 100_000

/** The service's date in Brazil's legal time zone, `YYYY-MM-DD`. */
const saoPauloDate = new Intl.DateTimeFormat("en-CA", {
  timeZone: "America/Sao_Paulo",
  year: "numeric",
  month: "2-digit",
  day: "2-digit"
})

/**
 * 18 or older on `today` (both `YYYY-MM-DD`): the 18th birthday has come. Born on 29 February: of age on
 * 1 March of a year that has no 29 February.
 */
export const isAdultOn = (birthDate: string, today: string): boolean => {
  const year = Number(birthDate.slice(0, 4)) + ADULT_AGE
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
  const monthDay = birthDate.slice(5) === "02-29" && !leap ? "03-01" : birthDate.slice(5)
  return today >= `${String(year).padStart(4, "0")}-${monthDay}`
}

/** The two keys derived from IDENTITY_KEY (HKDF-SHA256, one `info` label each). */
export const identityKeys = (master: Buffer) => ({
  encryption: Redacted.make(Buffer.from(hkdfSync("sha256", master, Buffer.alloc(0), "gp identity cpf encryption v1", 32))),
  hash: Buffer.from(hkdfSync("sha256", master, Buffer.alloc(0), "gp identity cpf hash v1", 32))
})

const IdentityRow = Schema.Struct({
  cpfMasked: Schema.String,
  fullName: Schema.String,
  birthDate: Schema.String
})

const HolderRow = Schema.Struct({ cpfEncrypted: Schema.String, cpfMasked: Schema.String })

export class Identities extends Effect.Service<Identities>()("app/Identities", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const kyc = yield* Kyc
    const registry = yield* ExclusionRegistry
    const keys = Option.map(config.secrets.identityKey, (key) => identityKeys(Redacted.value(key)))
    /** Users this instance has seen verified; a verification is never undone. */
    const verified = new Set<UserId>()

    const remember = (userId: UserId) => {
      if (verified.size >= VERIFIED_KEPT) verified.clear()
      verified.add(userId)
    }

    /** The user's identity as shown (the CPF masked); undefined when none is verified. */
    const identityOf = (userId: UserId) =>
      Effect.map(
        firstOf(
          IdentityRow,
          sql`SELECT cpf_masked, full_name, to_char(birth_date, 'YYYY-MM-DD') AS birth_date
              FROM user_identities WHERE user_id = ${userId} AND status = 'VERIFIED'`
        ),
        (row): VerifiedIdentity | undefined =>
          row === undefined ? undefined : { status: "VERIFIED", cpf: row.cpfMasked, fullName: row.fullName, birthDate: row.birthDate }
      )

    /**
     * POST /users/me/identity (docs/rules.md#identity-verification): 409 when already verified, 403 under 18,
     * 409 when another account holds the CPF, 422 when the provider refuses, 503 when it is unavailable.
     */
    const verify = Effect.fn("Identities.verify")(function*(userId: UserId, request: IdentityRequest) {
      if (config.jurisdiction !== "BR") return yield* NotFound.of("Identity verification")
      const key = yield* Option.match(keys, {
        onNone: () => Effect.dieMessage("IDENTITY_KEY is not configured"),
        onSome: Effect.succeed
      })
      if ((yield* identityOf(userId)) !== undefined) return yield* new IdentityAlreadyVerified()
      const today = saoPauloDate.format(new Date(yield* Clock.currentTimeMillis))
      if (!isAdultOn(request.birthDate, today)) return yield* new Underage()
      const cpf = cpfDigits(request.cpf)
      const cpfHash = createHmac("sha256", key.hash).update(cpf).digest("hex")
      const taken = yield* rowCountOf(sql`SELECT 1 FROM user_identities WHERE cpf_hash = ${cpfHash}`)
      if (taken > 0) return yield* new CpfAlreadyRegistered()

      const result = yield* kyc.check({ cpf, fullName: request.fullName, birthDate: request.birthDate }).pipe(
        Effect.catchTag("KycUnavailable", () => new ServiceUnavailable({ message: "Service unavailable: identity provider" }))
      )
      if (result._tag === "Refused") {
        yield* Effect.logDebug(`Identity refused by the provider: ${result.reason}`).pipe(Effect.annotateLogs("userId", String(userId)))
        return yield* new IdentityRefused()
      }
      // docs/responsible-gaming.md#registry: a CPF in the centralized self-exclusion registry opens no account to play.
      // Asked only once the provider has tied the CPF to the name and birth date given: learning whether someone is
      // listed takes all three, not just a CPF.
      const listed = yield* registry.isListed(cpf).pipe(
        Effect.catchTag(
          "ExclusionRegistryUnavailable",
          () => new ServiceUnavailable({ message: "Service unavailable: self-exclusion registry" })
        )
      )
      if (listed) return yield* new SelfExcluded({ until: null })

      const now = new Date(yield* Clock.currentTimeMillis)
      const cpfEncrypted = yield* encrypt(key.encryption, cpf)
      const inserted = yield* rowCountOf(sql`
        INSERT INTO user_identities (user_id, cpf_hash, cpf_encrypted, cpf_masked, full_name, birth_date, status, verified_at)
        VALUES (${userId}, ${cpfHash}, ${cpfEncrypted}, ${maskCpf(cpf)}, ${request.fullName}, ${request.birthDate}::date,
                'VERIFIED', ${now})
        ON CONFLICT DO NOTHING
        RETURNING user_id`)
      if (inserted === 0) {
        // Another request committed first: this user's own (already verified) or another account with this CPF.
        return yield* (yield* identityOf(userId)) !== undefined ? new IdentityAlreadyVerified() : new CpfAlreadyRegistered()
      }
      remember(userId)
      // The registry was consulted just now: the day's check need not ask again (docs/responsible-gaming.md#registry).
      yield* execute(sql`
        INSERT INTO responsible_gaming (user_id, registry_checked_at, updated_at) VALUES (${userId}, ${now}, ${now})
        ON CONFLICT (user_id) DO UPDATE SET registry_checked_at = EXCLUDED.registry_checked_at, updated_at = EXCLUDED.updated_at`)
      return { status: "VERIFIED" as const, cpf: maskCpf(cpf), fullName: request.fullName, birthDate: request.birthDate }
    })

    /** GET /users/me/compliance (docs/rules.md#compliance-status), in every jurisdiction. */
    const compliance = Effect.fn("Identities.compliance")(function*(userId: UserId) {
      const identity = yield* identityOf(userId)
      return {
        jurisdiction: config.jurisdiction,
        identity: identity ?? { status: "UNVERIFIED" as const }
      }
    })

    /**
     * The gate of every game or money action (docs/rules.md#identity-required): under BR, 403
     * IDENTITY_REQUIRED until the user's identity is verified; under NONE nothing is checked.
     */
    const requireVerified = (userId: UserId): Effect.Effect<void, IdentityRequired | ServiceUnavailable> =>
      config.jurisdiction !== "BR" || verified.has(userId)
        ? Effect.void
        : Effect.flatMap(
          rowCountOf(sql`SELECT 1 FROM user_identities WHERE user_id = ${userId} AND status = 'VERIFIED'`),
          (found) => {
            if (found === 0) return Effect.fail(new IdentityRequired())
            remember(userId)
            return Effect.void
          }
        )

    /**
     * The verified holder's CPF, its 11 digits and masked form, for the PIX key owner check under BR
     * (docs/rules.md#pix-key-owner); undefined when no identity is verified. The digits are never logged.
     */
    const holderCpf = Effect.fnUntraced(function*(userId: UserId) {
      const row = yield* firstOf(
        HolderRow,
        sql`SELECT cpf_encrypted, cpf_masked FROM user_identities WHERE user_id = ${userId} AND status = 'VERIFIED'`
      )
      if (row === undefined) return undefined
      const key = yield* Option.match(keys, {
        onNone: () => Effect.dieMessage("IDENTITY_KEY is not configured"),
        onSome: Effect.succeed
      })
      return { digits: yield* decrypt(key.encryption, row.cpfEncrypted), masked: row.cpfMasked }
    })

    return { verify, compliance, requireVerified, identityOf, holderCpf } as const
  })
}) {}
