/** Handlers of case battles (docs/rules.md#battles). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Battles } from "../../services/battles/Battles"
import { Api } from "../Api"
import { Authentication, CurrentUser } from "../identity/Authentication"
import { Battle } from "./BattlesApi"
import { idempotent } from "../platform/Idempotent"
import { Idempotency } from "../../services/platform/Idempotency"
import { Identities } from "../../services/identity/Identities"
import { buildOnly } from "../platform/RequestContext"

export const BattlesLive = HttpApiBuilder.group(Api, "battles", Effect.fnUntraced(function*(handlers) {
  const battles = yield* Battles
  return handlers
    .handle("create", ({ headers, payload }) =>
      Effect.flatMap(CurrentUser, ({ user }) =>
        idempotent(
          { userId: user.id, headers, operation: "battles.create", input: { payload }, response: Battle },
          battles.create(user, payload)
        )))
    .handle("list", ({ urlParams }) => battles.list(urlParams))
    .handle("get", ({ path }) => battles.get(path.id))
    .handle("join", ({ headers, path }) =>
      Effect.flatMap(CurrentUser, ({ user }) =>
        idempotent(
          { userId: user.id, headers, operation: "battles.join", input: { path }, response: Battle },
          battles.join(user, path.id)
        )))
    .handle("leave", ({ path }) => Effect.flatMap(CurrentUser, ({ user }) => battles.leave(user.id, path.id)))
    .handle("settlements", ({ path }) => battles.settlements(path.id))
})).pipe(buildOnly([Authentication, Identities, Idempotency, Battles]))
