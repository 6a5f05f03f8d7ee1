/** Handlers of the upgrade endpoints. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Upgrades } from "../services/Upgrades"
import { Api } from "./Api"
import { CurrentUser } from "./Authentication"

export const UpgradesLive = HttpApiBuilder.group(Api, "upgrades", (handlers) =>
  Effect.gen(function*() {
    const upgrades = yield* Upgrades
    return handlers
      .handle("probability", ({ urlParams }) => upgrades.probability(urlParams.fromItemId, urlParams.toItemId))
      .handle("upgrade", ({ payload }) => Effect.flatMap(CurrentUser, ({ user }) => upgrades.upgrade(user.id, payload)))
      .handle("verify", ({ path }) => Effect.flatMap(CurrentUser, ({ user }) => upgrades.verify(user, path.id)))
      .handle("history", ({ urlParams }) => Effect.flatMap(CurrentUser, ({ user }) => upgrades.history(user.id, urlParams)))
  }))
