/**
 * Handlers of the sandbox gateway's controls (docs/rules.md#sandbox-gateway, docs/rules.md#pix-key-sandbox) and of the
 * sandbox self-exclusion registry's list (docs/rules.md#exclusion-registry-sandbox).
 */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, ParseResult, Schema } from "effect"
import { ExclusionRegistry } from "../../layers/ExclusionRegistry"
import { cpfDigits, maskCpf } from "../../schema/identity/Compliance"
import { type SandboxAction, SandboxNotInUse, SandboxPayment } from "../../schema/money/Deposit"
import { PixKeyOwners } from "../../services/money/PixKeyOwners"
import { SandboxCharges } from "../../services/money/SandboxCharges"
import { Api } from "../Api"
import { makeAdminStepUp } from "../admin/AdminStepUp"
import { Authentication, CurrentUser } from "../identity/Authentication"
import { validationErrorOf } from "../platform/ErrorEnvelope"
import { bodyProblem } from "../platform/RequestBody"
import { AppConfig } from "../../layers/AppConfig"
import { TwoFactor } from "../../services/identity/TwoFactor"
import { buildOnly } from "../platform/RequestContext"

/**
 * `pay`'s optional body `{payerCpf}` (docs/rules.md#sandbox-gateway): none at all is an empty payment request; read
 * only for `pay`, through the bounded reader of docs/rules.md#request-bodies.
 */
const payment = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  if ((yield* Effect.mapError(request.text, bodyProblem)).trim() === "") return {}
  const body = yield* Effect.mapError(request.json, bodyProblem)
  return yield* Schema.decodeUnknown(SandboxPayment)(body).pipe(
    Effect.mapError((error) => validationErrorOf(ParseResult.ArrayFormatter.formatErrorSync(error)))
  )
})

/**
 * `POST` / `DELETE /sandbox/exclusion-registry`: the sandbox registry lists or unlists the CPF; 404 while a real
 * registry is in use (EXCLUSION_REGISTRY_URL set) or none (SANDBOX off).
 */
const setListed = Effect.fnUntraced(function*(registry: ExclusionRegistry["Type"], cpf: string, listed: boolean) {
  const change = listed ? registry.list : registry.unlist
  if (change === undefined) {
    return yield* new SandboxNotInUse({ message: "The sandbox self-exclusion registry is not in use" })
  }
  const digits = cpfDigits(cpf)
  yield* change(digits)
  return { cpf: maskCpf(digits), listed }
})

/**
 * `POST /sandbox/charges/:externalId/:action`: the charge settled for the signed-in user, `pay` with its optional
 * body; `stepUp` is the administrator's step-up, asked only when the charge is another user's.
 */
const settleCharge = Effect.fnUntraced(function*<E, R>(
  sandbox: SandboxCharges,
  path: { readonly externalId: string; readonly action: SandboxAction },
  stepUp: Effect.Effect<void, E, R>
) {
  const { user } = yield* CurrentUser
  const { payerCpf } = path.action === "pay" ? yield* payment : {}
  return yield* sandbox.settle(user, path.externalId, path.action, stepUp, payerCpf)
})

export const SandboxLive = HttpApiBuilder.group(Api, "sandbox", Effect.fnUntraced(function*(handlers) {
  const sandbox = yield* SandboxCharges
  const stepUp = yield* makeAdminStepUp
  const pixKeyOwners = yield* PixKeyOwners
  const registry = yield* ExclusionRegistry
  return handlers.handle("charge", ({ headers, path }) => settleCharge(sandbox, path, stepUp(headers)))
    .handle("pixKey", ({ payload }) => pixKeyOwners.registerInSandbox(payload, payload.ownerCpf))
    .handle("listExcluded", ({ payload }) => setListed(registry, payload.cpf, true))
    .handle("unlistExcluded", ({ payload }) => setListed(registry, payload.cpf, false))
})).pipe(buildOnly([AppConfig, Authentication, TwoFactor, ExclusionRegistry, PixKeyOwners, SandboxCharges]))
