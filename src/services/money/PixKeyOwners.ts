/**
 * Whose PIX key a withdrawal goes to (docs/rules.md#pix-key-owner, D22; Ordinance SPA/MF 615/2024): under
 * JURISDICTION=BR only to a key the gateway's key directory names the account holder (their verified CPF) as owner
 * of. The directory is asked by the request's handler before anything else runs (so never inside a database
 * transaction, not even an Idempotency-Key's), and the withdrawal stores the owner's masked CPF. Under NONE
 * nothing is asked. Also the sandbox directory's registration of keys (docs/rules.md#pix-key-sandbox).
 */
import { Effect } from "effect"
import { AppConfig } from "../../layers/AppConfig"
import { PixKeyDirectory } from "../../layers/PixKeyDirectory"
import { cpfDigits, IdentityRequired, maskCpf } from "../../schema/identity/Compliance"
import { SandboxNotInUse } from "../../schema/money/Deposit"
import { KeyNotOwned, normalizePixKey, type PixKeyType } from "../../schema/money/Withdrawal"
import { ServiceUnavailable } from "../../schema/platform/Errors"
import type { UserId } from "../../schema/platform/Ids"
import { Identities } from "../identity/Identities"

/** What a request stores of the key's owner: under BR the owner's masked CPF, under NONE nothing. */
export type KeyOwner = { readonly ownerCpfMasked: string } | undefined

export class PixKeyOwners extends Effect.Service<PixKeyOwners>()("app/PixKeyOwners", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    const directory = yield* PixKeyDirectory
    const identities = yield* Identities

    /**
     * Under BR: the key's owner per the directory must be the account holder, else 422 KEY_NOT_OWNED (a key the
     * directory does not know belongs to no one); the directory unavailable: 503. No verified identity: 403
     * IDENTITY_REQUIRED, as the gate answers. Takes the key as sent; the directory is asked with its stored form.
     */
    const check = Effect.fn("PixKeyOwners.check")(function*(
      userId: UserId,
      details: { readonly pixKeyType: PixKeyType; readonly pixKey: string }
    ) {
      if (config.jurisdiction !== "BR") return undefined as KeyOwner
      const holder = yield* identities.holderCpf(userId)
      if (holder === undefined) return yield* new IdentityRequired()
      const owner = yield* directory.lookup({
        pixKeyType: details.pixKeyType,
        pixKey: normalizePixKey(details.pixKeyType, details.pixKey),
        payerDocument: holder.digits
      }).pipe(
        Effect.catchTag("PixKeyDirectoryUnavailable", () => new ServiceUnavailable({ message: "Service unavailable: PIX key directory" }))
      )
      if (owner._tag !== "Owner" || owner.document !== holder.digits) {
        yield* Effect.logDebug(`Withdrawal refused: the PIX key (${details.pixKeyType}) ${owner._tag === "Owner" ? "belongs to someone else" : "is unknown to the directory"}`)
          .pipe(Effect.annotateLogs("userId", String(userId)))
        return yield* new KeyNotOwned()
      }
      return { ownerCpfMasked: maskCpf(owner.document) } as KeyOwner
    })

    /** `POST /sandbox/pix-keys`: the sandbox directory names `ownerCpf` as the key's owner; 404 while a real gateway is in use. */
    const registerInSandbox = Effect.fn("PixKeyOwners.registerInSandbox")(function*(
      details: { readonly pixKeyType: PixKeyType; readonly pixKey: string },
      ownerCpf: string
    ) {
      if (directory.register === undefined) return yield* new SandboxNotInUse()
      const pixKey = normalizePixKey(details.pixKeyType, details.pixKey)
      const owner = cpfDigits(ownerCpf)
      yield* directory.register({ pixKeyType: details.pixKeyType, pixKey }, owner)
      return { pixKeyType: details.pixKeyType, pixKey, ownerCpf: maskCpf(owner) }
    })

    return { check, registerInSandbox } as const
  }),
  dependencies: [Identities.Default]
}) {}
