/** Handlers of case battles (D13). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Battles } from "../services/Battles"
import { Api } from "./Api"
import { CurrentUser } from "./Authentication"

export const BattlesLive = HttpApiBuilder.group(Api, "battles", (handlers) =>
  Effect.gen(function*() {
    const battles = yield* Battles
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentUser, ({ user }) => battles.create(user.id, payload)))
      .handle("list", ({ urlParams }) => battles.list(urlParams))
      .handle("get", ({ path }) => battles.get(path.id))
      .handle("join", ({ path }) => Effect.flatMap(CurrentUser, ({ user }) => battles.join(user.id, path.id)))
      .handle("leave", ({ path }) => Effect.flatMap(CurrentUser, ({ user }) => battles.leave(user.id, path.id)))
      .handle("settlements", ({ path }) => battles.settlements(path.id))
  }))
