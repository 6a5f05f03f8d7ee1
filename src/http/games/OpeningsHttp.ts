/** Handlers of case openings, their verification and statistics. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { OpeningResult } from "../../schema/games/Game"
import { CaseOpenings } from "../../services/games/CaseOpenings"
import { GameStats } from "../../services/games/GameStats"
import { Api } from "../Api"
import { Authentication, CurrentUser } from "../identity/Authentication"
import { idempotent } from "../platform/Idempotent"
import { Idempotency } from "../../services/platform/Idempotency"
import { Identities } from "../../services/identity/Identities"
import { buildOnly } from "../platform/RequestContext"

export const OpeningsLive = HttpApiBuilder.group(Api, "openings", Effect.fnUntraced(function*(handlers) {
  const openings = yield* CaseOpenings
  const stats = yield* GameStats
  return handlers
    .handle("open", ({ headers, path }) =>
      Effect.flatMap(CurrentUser, ({ user }) =>
        idempotent(
          { userId: user.id, headers, operation: "cases.open", input: { path }, response: OpeningResult },
          openings.open(user, path.id)
        )))
    .handle("history", ({ urlParams }) =>
      Effect.flatMap(CurrentUser, ({ user }) => openings.history(user.id, urlParams)))
    .handle("verify", ({ path }) => Effect.flatMap(CurrentUser, ({ user }) => openings.verify(user, path.id)))
    .handle("caseStats", ({ path }) => stats.caseStats(path.id))
    .handle("userStats", () => Effect.flatMap(CurrentUser, ({ user }) => stats.userCaseStats(user.id)))
})).pipe(buildOnly([Authentication, Identities, Idempotency, CaseOpenings, GameStats]))
