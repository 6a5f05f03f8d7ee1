/**
 * The payment gateway's PIX key directory (docs/rules.md#pix-key-owner, D22), an outside system behind a Layer:
 * who owns a PIX key. Under JURISDICTION=BR a withdrawal goes only to a key its account holder owns.
 * Implementations: the embedded sandbox (while the sandbox gateway is in use) and the HTTP adapter of
 * docs/providers.md on the gateway's own API (PAYMENT_GATEWAY_URL, PAYMENT_GATEWAY_KEY); both read the
 * directory's answer with `interpretPixKeyLookup`, so they answer alike.
 */
import { Context, Data, type Effect } from "effect"

export interface PixKeyLookup {
  /** EMAIL, CPF, CNPJ, PHONE or RANDOM. */
  readonly pixKeyType: string
  /** The key as stored (docs/rules.md#pix-keys: normalized). */
  readonly pixKey: string
  /** The CPF digits of the account holder the lookup is made for (the directory's "payer"). */
  readonly payerDocument: string
}

export type PixKeyOwner =
  /** The owner's document: a CPF's 11 digits or a CNPJ's 14. */
  | { readonly _tag: "Owner"; readonly document: string }
  /** The directory knows no such key. */
  | { readonly _tag: "NotFound" }

/** The directory could not be reached, timed out, failed on its side or answered off-contract (D20: 503). */
export class PixKeyDirectoryUnavailable extends Data.TaggedError("PixKeyDirectoryUnavailable")<{ readonly message: string }> {}

interface PixKeyDirectoryShape {
  readonly lookup: (request: PixKeyLookup) => Effect.Effect<PixKeyOwner, PixKeyDirectoryUnavailable>
  /**
   * The sandbox's registration of a key to an owner (`POST /sandbox/pix-keys`, docs/rules.md#pix-key-sandbox);
   * undefined for a real directory.
   */
  readonly register?: (key: { readonly pixKeyType: string; readonly pixKey: string }, ownerCpf: string) => Effect.Effect<void>
}

export class PixKeyDirectory extends Context.Tag("app/PixKeyDirectory")<PixKeyDirectory, PixKeyDirectoryShape>() {}

/**
 * The directory's answer to `POST /pix-keys/lookup` (docs/providers.md), read: 200 `{ownerDocument}` with 11 or 14
 * digits is the owner; 404 is no such key; anything else (other statuses, a body outside the contract) is
 * `undefined`: unavailable.
 */
export const interpretPixKeyLookup = (status: number, body: unknown): PixKeyOwner | undefined => {
  if (status === 404) return { _tag: "NotFound" }
  if (status !== 200 || typeof body !== "object" || body === null) return undefined
  const { ownerDocument } = body as { ownerDocument?: unknown }
  return typeof ownerDocument === "string" && /^(\d{11}|\d{14})$/.test(ownerDocument)
    ? { _tag: "Owner", document: ownerDocument }
    : undefined
}
