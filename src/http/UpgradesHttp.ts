/** Handlers of the upgrade endpoints. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { UpgradeResult } from "../schema/Upgrade"
import { Upgrades } from "../services/Upgrades"
import { Api } from "./Api"
import { CurrentUser } from "./Authentication"
import { idempotent } from "./Idempotent"

export const UpgradesLive = HttpApiBuilder.group(Api, "upgrades", (handlers) =>
  Effect.gen(function*() {
    const upgrades = yield* Upgrades
    return handlers
      .handle("probability", ({ urlParams }) => upgrades.probability(urlParams.fromItemId, urlParams.toItemId))
      .handle("upgrade", ({ headers, payload }) =>
        Effect.flatMap(CurrentUser, ({ user }) =>
          idempotent(
            { userId: user.id, headers, operation: "upgrades.upgrade", input: { payload }, response: UpgradeResult },
            upgrades.upgrade(user.id, payload)
          )))
      .handle("verify", ({ path }) => Effect.flatMap(CurrentUser, ({ user }) => upgrades.verify(user, path.id)))
      .handle("history", ({ urlParams }) => Effect.flatMap(CurrentUser, ({ user }) => upgrades.history(user.id, urlParams)))
  }))
