/** Handlers of raffle administration (docs/rules.md#raffle-creation). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Raffles } from "../../services/raffles/Raffles"
import { Api } from "../Api"
import { AdminAuthentication, CurrentUser } from "../identity/Authentication"
import { makeAdminStepUp } from "./AdminStepUp"
import { AppConfig } from "../../layers/AppConfig"
import { TwoFactor } from "../../services/identity/TwoFactor"
import { buildOnly } from "../platform/RequestContext"

export const AdminRafflesLive = HttpApiBuilder.group(Api, "adminRaffles", Effect.fnUntraced(function*(handlers) {
  const raffles = yield* Raffles
  const stepUp = yield* makeAdminStepUp
  return handlers.handle("create", ({ headers, payload }) =>
    Effect.zipRight(stepUp(headers), Effect.flatMap(CurrentUser, ({ user }) => raffles.create(user.id, payload))))
})).pipe(buildOnly([AppConfig, AdminAuthentication, TwoFactor, Raffles]))
