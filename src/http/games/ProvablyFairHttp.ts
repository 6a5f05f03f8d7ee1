/** Handlers of the fairness state and the generic verification (docs/rules.md#fairness). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import type { BattleRollId } from "../../schema/battles/Battle"
import type { IdString } from "../../schema/platform/Ids"
import { Battles } from "../../services/battles/Battles"
import { CaseOpenings } from "../../services/games/CaseOpenings"
import { ProvablyFair } from "../../services/games/ProvablyFair"
import { Upgrades } from "../../services/games/Upgrades"
import { Api } from "../Api"
import { Authentication, CurrentUser } from "../identity/Authentication"
import { buildOnly } from "../platform/RequestContext"

/** `GET /provably-fair/verify/:id`: the signed-in user's roll of `type`, verified by the service that made it. */
const verify = Effect.fnUntraced(function*(
  openings: CaseOpenings,
  upgrades: Upgrades,
  battles: Battles,
  id: typeof IdString.Type,
  type: "opening" | "upgrade" | "battle-roll"
) {
  const { user } = yield* CurrentUser
  switch (type) {
    case "opening":
      return yield* openings.verify(user, id)
    case "upgrade":
      return yield* upgrades.verify(user, BigInt(id))
    case "battle-roll":
      return yield* battles.verifyRoll(user, BigInt(id) as BattleRollId)
  }
})

export const ProvablyFairLive = HttpApiBuilder.group(Api, "provablyFair", Effect.fnUntraced(function*(handlers) {
  const fairness = yield* ProvablyFair
  const openings = yield* CaseOpenings
  const upgrades = yield* Upgrades
  const battles = yield* Battles
  return handlers
    .handle("clientSeed", () => Effect.flatMap(CurrentUser, ({ user }) => fairness.state(user.id)))
    .handle("setClientSeed", ({ payload }) =>
      Effect.flatMap(CurrentUser, ({ user }) => fairness.setClientSeed(user.id, payload.clientSeed)))
    .handle("verify", ({ path, urlParams }) => verify(openings, upgrades, battles, path.id, urlParams.type))
})).pipe(buildOnly([Authentication, ProvablyFair, CaseOpenings, Battles, Upgrades]))
