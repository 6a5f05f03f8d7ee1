/** Handlers of the sandbox gateway's controls (docs/rules.md#sandbox-gateway). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { SandboxCharges } from "../../services/money/SandboxCharges"
import { Api } from "../Api"
import { CurrentUser } from "../identity/Authentication"

export const SandboxLive = HttpApiBuilder.group(Api, "sandbox", (handlers) =>
  Effect.gen(function*() {
    const sandbox = yield* SandboxCharges
    return handlers.handle("charge", ({ path }) =>
      Effect.flatMap(CurrentUser, ({ user }) => sandbox.settle(user, path.externalId, path.action)))
  }))
