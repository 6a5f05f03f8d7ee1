/** Handlers of the sandbox gateway's controls (docs/rules.md#sandbox-gateway, docs/rules.md#pix-key-sandbox). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { PixKeyOwners } from "../../services/money/PixKeyOwners"
import { SandboxCharges } from "../../services/money/SandboxCharges"
import { Api } from "../Api"
import { makeAdminStepUp } from "../admin/AdminStepUp"
import { CurrentUser } from "../identity/Authentication"

export const SandboxLive = HttpApiBuilder.group(Api, "sandbox", (handlers) =>
  Effect.gen(function*() {
    const sandbox = yield* SandboxCharges
    const stepUp = yield* makeAdminStepUp
    const pixKeyOwners = yield* PixKeyOwners
    return handlers
      .handle("charge", ({ headers, path }) =>
        Effect.flatMap(CurrentUser, ({ user }) => sandbox.settle(user, path.externalId, path.action, stepUp(headers))))
      .handle("pixKey", ({ payload }) => pixKeyOwners.registerInSandbox(payload, payload.ownerCpf))
  }))
