/** Handlers of the upgrade endpoints. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { UpgradeResult } from "../../schema/games/Upgrade"
import { Upgrades } from "../../services/games/Upgrades"
import { Api } from "../Api"
import { Authentication, CurrentUser } from "../identity/Authentication"
import { idempotent } from "../platform/Idempotent"
import { Idempotency } from "../../services/platform/Idempotency"
import { Identities } from "../../services/identity/Identities"
import { buildOnly } from "../platform/RequestContext"

export const UpgradesLive = HttpApiBuilder.group(Api, "upgrades", Effect.fnUntraced(function*(handlers) {
  const upgrades = yield* Upgrades
  return handlers
    .handle("probability", ({ urlParams }) => upgrades.probability(urlParams.fromItemId, urlParams.toItemId))
    .handle("upgrade", ({ headers, payload }) =>
      Effect.flatMap(CurrentUser, ({ user }) =>
        idempotent(
          { userId: user.id, headers, operation: "upgrades.upgrade", input: { payload }, response: UpgradeResult },
          upgrades.upgrade(user, payload)
        )))
    .handle("verify", ({ path }) => Effect.flatMap(CurrentUser, ({ user }) => upgrades.verify(user, path.id)))
    .handle("history", ({ urlParams }) => Effect.flatMap(CurrentUser, ({ user }) => upgrades.history(user.id, urlParams)))
})).pipe(buildOnly([Authentication, Identities, Idempotency, Upgrades]))
