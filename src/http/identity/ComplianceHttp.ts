/** Handlers of the compliance group (docs/rules.md#jurisdiction-br, docs/responsible-gaming.md). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Identities } from "../../services/identity/Identities"
import { ResponsibleGaming } from "../../services/identity/ResponsibleGaming"
import { Api } from "../Api"
import { Authentication, CurrentUser } from "./Authentication"
import { buildOnly } from "../platform/RequestContext"

export const ComplianceLive = HttpApiBuilder.group(Api, "compliance", Effect.fnUntraced(function*(handlers) {
  const identities = yield* Identities
  const responsibleGaming = yield* ResponsibleGaming
  return handlers
    .handle("verifyIdentity", ({ payload }) =>
      Effect.flatMap(CurrentUser, ({ user }) => identities.verify(user.id, payload)))
    .handle("compliance", () =>
      Effect.flatMap(CurrentUser, ({ user }) =>
        Effect.all({
          status: identities.compliance(user.id),
          exclusion: responsibleGaming.exclusionOf(user.id),
          limits: responsibleGaming.limitsOf(user.id)
        }).pipe(Effect.map(({ exclusion, limits, status }) => ({ ...status, exclusion, limits })))))
    .handle("limits", () => Effect.flatMap(CurrentUser, ({ user }) => responsibleGaming.limitsOf(user.id)))
    .handle("setLimits", ({ payload }) =>
      Effect.flatMap(CurrentUser, ({ user }) => responsibleGaming.setLimits(user.id, payload)))
    .handle("selfExclude", ({ payload }) =>
      Effect.flatMap(CurrentUser, ({ user }) => responsibleGaming.selfExclude(user.id, payload)))
})).pipe(buildOnly([Authentication, Identities, ResponsibleGaming]))
