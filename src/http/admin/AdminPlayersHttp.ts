/** Handlers of the player page (docs/rules.md#player-page). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { AdminPlayers } from "../../services/admin/AdminPlayers"
import { Api } from "../Api"
import { AdminAuthentication, CurrentUser } from "../identity/Authentication"
import { makeAdminStepUp } from "./AdminStepUp"
import { AppConfig } from "../../layers/AppConfig"
import { TwoFactor } from "../../services/identity/TwoFactor"
import { buildOnly } from "../platform/RequestContext"

export const AdminPlayersLive = HttpApiBuilder.group(Api, "adminPlayers", Effect.fnUntraced(function*(handlers) {
  const players = yield* AdminPlayers
  const stepUp = yield* makeAdminStepUp

  return handlers
    .handle("player", ({ path }) => players.profile(path.id))
    .handle("transactions", ({ path, urlParams }) => players.transactions(path.id, urlParams))
    .handle("deposits", ({ path, urlParams }) => players.deposits(path.id, urlParams))
    .handle("withdrawals", ({ path, urlParams }) => players.withdrawals(path.id, urlParams))
    .handle("openings", ({ path, urlParams }) => players.openings(path.id, urlParams))
    .handle("audit", ({ path, urlParams }) => players.audit(path.id, urlParams))
    .handle("revokeSession", ({ headers, path }) =>
      stepUp(headers).pipe(
        Effect.zipRight(CurrentUser),
        Effect.flatMap(({ user: admin }) => players.revokeSession(admin.id, path.id, path.sessionId)),
        Effect.map((sessions) => ({ sessions }))
      ))
})).pipe(buildOnly([AppConfig, AdminAuthentication, TwoFactor, AdminPlayers]))
