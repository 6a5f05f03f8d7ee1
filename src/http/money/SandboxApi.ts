/**
 * The embedded sandbox gateway's controls (docs/rules.md#sandbox-gateway), for paying a deposit by hand on the embedded
 * defaults: each makes the sandbox send the matching signed event to our own callback over HTTP.
 * Only while the sandbox is the gateway (no PAYMENT_GATEWAY_URL); the deposit's owner or an admin. Also the
 * registration of a PIX key's owner in the sandbox's key directory (docs/rules.md#pix-key-sandbox), and the list of
 * the sandbox self-exclusion registry (docs/rules.md#exclusion-registry-sandbox).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { JSONSchema, Schema } from "effect"
import { Authentication } from "../identity/Authentication"
import { DepositView, SandboxAction, SandboxPayment } from "../../schema/money/Deposit"
import { Cpf } from "../../schema/identity/Compliance"
import { pixKeyProblem } from "../../schema/money/Withdrawal"
import * as HttpError from "../platform/HttpErrors"
import { PlainString } from "../../schema/platform/Text"
import { documented } from "../platform/OpenApiDocs"
import { STEP_UP, withStepUp } from "../admin/AdminStepUp"

/** `POST /sandbox/pix-keys` (docs/rules.md#pix-key-sandbox): a key of any type but CPF, and its owner's CPF. */
const SandboxPixKeyRegistration = Schema.Struct({
  pixKeyType: Schema.Literal("EMAIL", "CNPJ", "PHONE", "RANDOM").annotations({
    message: () => ({ message: "must be one of EMAIL, CNPJ, PHONE, RANDOM (a CPF key always belongs to that CPF)", override: true })
  }),
  pixKey: Schema.String.annotations({ message: () => "must be a string" }),
  ownerCpf: Cpf
}).pipe(
  Schema.filter((registration) => {
    const problem = pixKeyProblem(registration.pixKeyType, registration.pixKey)
    return problem === undefined ? true : { path: ["pixKey"], message: problem }
  })
).annotations({ parseOptions: { errors: "all" } })

/** `POST` and `DELETE /sandbox/exclusion-registry` (docs/rules.md#exclusion-registry-sandbox): the CPF to list or unlist. */
const SandboxRegistryEntry = Schema.Struct({ cpf: Cpf }).annotations({ parseOptions: { errors: "all" } })

/** The answer of both: the CPF masked, and whether it is listed now. */
const SandboxRegistryListing = Schema.Struct({
  cpf: Schema.String.annotations({ description: "Masked: ***.456.789-**", examples: ["***.456.789-**"] }),
  listed: Schema.Boolean
})

/**
 * The optional JSON body `{payerCpf}`, in the OpenAPI document: the handler reads it itself, since a declared
 * payload would make the body required (docs/rules.md#request-bodies: a request without a body needs no content type).
 */
const optionalPayerBody = (operation: Record<string, any>) => ({
  ...operation,
  requestBody: {
    required: false,
    content: { "application/json": { schema: JSONSchema.make(Schema.encodedSchema(SandboxPayment)) } }
  }
})

export class SandboxApi extends HttpApiGroup.make("sandbox")
  .annotate(OpenApi.Description, "The embedded sandbox gateway's controls, for paying deposits by hand in development.")
  .add(
    HttpApiEndpoint.post("charge", "/sandbox/charges/:externalId/:action")
      .setPath(Schema.Struct({ externalId: PlainString, action: SandboxAction }))
      .addSuccess(Schema.Struct({
        /** The gateway event sent: charge.paid, charge.failed or charge.expired. */
        event: Schema.String,
        /** The HTTP status our callback answered. */
        callbackStatus: Schema.Int,
        /** The deposit after the callback. */
        deposit: DepositView
      }))
      .addError(Schema.Union(HttpError.GatewayUnavailable, HttpError.ChargeCancelled, HttpError.SandboxNotInUse))
      .pipe(withStepUp)
      .annotate(OpenApi.Transform, optionalPayerBody)
      .pipe(documented("Settle a sandbox charge", "Sandbox only: pay, fail or expire the charge of one of your " +
        "deposits (any deposit for an admin). The sandbox signs the gateway event and POSTs it to " +
        "/api/webhooks/payment, the path a real gateway takes. `pay` takes an optional JSON body `{payerCpf}` " +
        "(11 digits, bare or punctuated): the payer's CPF, sent as the event's `data.payerDocument`; without it, " +
        "under JURISDICTION=BR, the deposit owner's verified CPF. Settling someone else's charge is an " +
        "administrator's step-up action: " + STEP_UP))
  )
  .add(
    HttpApiEndpoint.post("pixKey", "/sandbox/pix-keys").setPayload(SandboxPixKeyRegistration)
      .addSuccess(Schema.Struct({ pixKeyType: Schema.String, pixKey: Schema.String, ownerCpf: Schema.String }), { status: 201 })
      .addError(HttpError.SandboxNotInUse)
      .pipe(documented("Register a PIX key's owner in the sandbox directory", "Sandbox only: the sandbox's PIX key " +
        "directory names `ownerCpf` as the owner of the key from now on (in this process), so that a withdrawal to it " +
        "under JURISDICTION=BR is refused as another person's (422 KEY_NOT_OWNED) unless `ownerCpf` is the account " +
        "holder's. A CPF key always belongs to that CPF; an unregistered key belongs to whoever asks. Answers the key " +
        "as stored and the owner's masked CPF."))
  )
  .add(
    HttpApiEndpoint.post("listExcluded", "/sandbox/exclusion-registry").setPayload(SandboxRegistryEntry)
      .addSuccess(SandboxRegistryListing, { status: 201 })
      .addError(HttpError.SandboxNotInUse)
      .pipe(documented("List a CPF in the sandbox self-exclusion registry", "Sandbox only (SANDBOX on and no " +
        "EXCLUSION_REGISTRY_URL): the sandbox's centralized self-exclusion registry lists `cpf` (11 digits, bare or " +
        "punctuated) from now on (in this process), as a player who excluded themselves from every licensed operator. " +
        "Listing a listed CPF again changes nothing. Answers the masked CPF and `listed: true`."))
  )
  .add(
    HttpApiEndpoint.del("unlistExcluded", "/sandbox/exclusion-registry").setPayload(SandboxRegistryEntry)
      .addSuccess(SandboxRegistryListing)
      .addError(HttpError.SandboxNotInUse)
      .pipe(documented("Remove a CPF from the sandbox self-exclusion registry", "Sandbox only (SANDBOX on and no " +
        "EXCLUSION_REGISTRY_URL): the sandbox's registry no longer lists `cpf` (a CPF never listed is fine). Answers " +
        "the masked CPF and `listed: false`."))
  )
  .middleware(Authentication)
{}
