/** Handlers of the compliance group (docs/rules.md#jurisdiction-br). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Identities } from "../../services/identity/Identities"
import { Api } from "../Api"
import { CurrentUser } from "./Authentication"

export const ComplianceLive = HttpApiBuilder.group(Api, "compliance", (handlers) =>
  Effect.gen(function*() {
    const identities = yield* Identities
    return handlers
      .handle("verifyIdentity", ({ payload }) =>
        Effect.flatMap(CurrentUser, ({ user }) => identities.verify(user.id, payload)))
      .handle("compliance", () => Effect.flatMap(CurrentUser, ({ user }) => identities.compliance(user.id)))
  }))
