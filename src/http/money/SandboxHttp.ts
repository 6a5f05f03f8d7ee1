/** Handlers of the sandbox gateway's controls (docs/rules.md#sandbox-gateway, docs/rules.md#pix-key-sandbox). */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, ParseResult, Schema } from "effect"
import { SandboxPayment } from "../../schema/money/Deposit"
import { PixKeyOwners } from "../../services/money/PixKeyOwners"
import { SandboxCharges } from "../../services/money/SandboxCharges"
import { Api } from "../Api"
import { makeAdminStepUp } from "../admin/AdminStepUp"
import { CurrentUser } from "../identity/Authentication"
import { validationErrorOf } from "../platform/ErrorEnvelope"
import { bodyProblem } from "../platform/RequestBody"

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

export const SandboxLive = HttpApiBuilder.group(Api, "sandbox", (handlers) =>
  Effect.gen(function*() {
    const sandbox = yield* SandboxCharges
    const stepUp = yield* makeAdminStepUp
    const pixKeyOwners = yield* PixKeyOwners
    return handlers.handle("charge", ({ headers, path }) =>
      Effect.gen(function*() {
        const { user } = yield* CurrentUser
        const { payerCpf } = path.action === "pay" ? yield* payment : {}
        return yield* sandbox.settle(user, path.externalId, path.action, stepUp(headers), payerCpf)
      }))
      .handle("pixKey", ({ payload }) => pixKeyOwners.registerInSandbox(payload, payload.ownerCpf))
  }))
