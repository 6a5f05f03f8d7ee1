/**
 * The embedded sandbox's PIX key directory (docs/rules.md#pix-key-sandbox), used while the sandbox gateway is:
 * a CPF key belongs to that CPF; a key registered with `POST /sandbox/pix-keys` belongs to its registered owner;
 * any other key belongs to the payer the lookup is made for (the account holder). Registrations live in this
 * process only (a restart forgets them). `sandboxPixKeyAnswer` is the directory's side of docs/providers.md, so
 * the contract test serves it over HTTP to the real client.
 */
import { Effect, Layer } from "effect"
import { interpretPixKeyLookup, PixKeyDirectory, PixKeyDirectoryUnavailable } from "../PixKeyDirectory"

const keyOf = (pixKeyType: string, pixKey: string) => `${pixKeyType}:${pixKey}`

/**
 * The sandbox's answer to `POST /pix-keys/lookup` with `body`, given the registered owners (by `TYPE:key`): status
 * and JSON body, as the wire carries them.
 */
export const sandboxPixKeyAnswer = (
  body: unknown,
  registered: ReadonlyMap<string, string> = new Map()
): { readonly status: number; readonly body: unknown } => {
  const { payerDocument, pixKey, pixKeyType } = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>
  if (typeof pixKeyType !== "string" || typeof pixKey !== "string" || pixKey === "" ||
    typeof payerDocument !== "string" || !/^(\d{11}|\d{14})$/.test(payerDocument)) {
    return { status: 400, body: { message: "pixKeyType, pixKey and payerDocument (11 or 14 digits) are required" } }
  }
  const ownerDocument = pixKeyType === "CPF" ? pixKey : registered.get(keyOf(pixKeyType, pixKey)) ?? payerDocument
  return { status: 200, body: { pixKeyType, pixKey, ownerDocument } }
}

export const SandboxPixKeyDirectory = Layer.sync(PixKeyDirectory, () => {
  const registered = new Map<string, string>()
  return {
    lookup: (request) => {
      const answer = sandboxPixKeyAnswer(request, registered)
      const owner = interpretPixKeyLookup(answer.status, answer.body)
      return owner === undefined
        ? Effect.fail(new PixKeyDirectoryUnavailable({ message: "The PIX key directory is unavailable" }))
        : Effect.succeed(owner)
    },
    register: (key, ownerCpf) => Effect.sync(() => void registered.set(keyOf(key.pixKeyType, key.pixKey), ownerCpf))
  }
})
