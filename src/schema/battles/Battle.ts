/** Case battles (docs/rules.md#battles): ids, modes, statuses and the creation request. */
import { Schema } from "effect"
import { message } from "../platform/Errors"
import { RollProof } from "../games/Fairness"
import { ItemView } from "../games/Game"
import { CaseId, idFromString, UserId } from "../platform/Ids"

export const BattleId = idFromString("BattleId")
export type BattleId = typeof BattleId.Type

export const BattleRollId = idFromString("BattleRollId")
export type BattleRollId = typeof BattleRollId.Type

export const BattleMode = Schema.Literal("NORMAL", "CRAZY", "TEAM").annotations({
  message: () => ({ message: "must be one of NORMAL, CRAZY, TEAM", override: true })
})
export type BattleMode = typeof BattleMode.Type

export const BattleStatus = Schema.Literal("WAITING", "RUNNING", "FINISHED", "CANCELLED").annotations({
  message: () => ({ message: "must be one of WAITING, RUNNING, FINISHED, CANCELLED", override: true })
})
export type BattleStatus = typeof BattleStatus.Type

export const SettlementType = Schema.Literal("DROPPED", "REMOVED_TO_POOL", "ADDED_FROM_POOL")
export type SettlementType = typeof SettlementType.Type

const MAX_ROUNDS = 25

export const CreateBattleRequest = Schema.Struct({
  caseIds: Schema.Array(CaseId).pipe(
    Schema.minItems(1, { message: () => "must name 1 to 25 cases" }),
    Schema.maxItems(MAX_ROUNDS, { message: () => "must name 1 to 25 cases" })
  ),
  mode: BattleMode,
  maxPlayers: Schema.Literal(2, 3, 4).annotations({ message: () => ({ message: "must be 2, 3 or 4", override: true }) })
}).pipe(
  Schema.filter((request) =>
    request.mode !== "TEAM" || request.maxPlayers === 4 ||
    { path: ["maxPlayers"], message: "must be 4 for a TEAM battle (slots 1-2 against 3-4)" }
  )
).annotations({ identifier: "CreateBattleRequest", parseOptions: { errors: "all" } })
export type CreateBattleRequest = typeof CreateBattleRequest.Type

/** Joining a full or started battle, or leaving one that is not WAITING (docs/rules.md#battle-joining) (409). */
export class BattleNotOpen extends Schema.TaggedError<BattleNotOpen>()("BattleNotOpen", message("Battle is not open")) {}

/** Joining a battle the user already has a slot in (docs/rules.md#battle-joining) (409). */
export class AlreadyJoined extends Schema.TaggedError<AlreadyJoined>()("AlreadyJoined", message("Already joined")) {}

/** Leaving a battle the user has no slot in (docs/rules.md#battle-joining) (400). */
export class NotInBattle extends Schema.TaggedError<NotInBattle>()("NotInBattle", message("You are not in this battle")) {}

/** Settlements asked for before the battle is FINISHED (docs/rules.md#battle-settlement) (409). */
export class BattleNotFinished extends Schema.TaggedError<BattleNotFinished>()(
  "BattleNotFinished",
  message("Battle is not finished")
) {}

/** `GET /provably-fair/verify/:id?type=battle-roll`: one battle roll recomputed from its revealed seeds. */
export const BattleRollVerification = Schema.Struct({
  rollId: BattleRollId,
  battleId: Schema.String,
  roundNumber: Schema.Int,
  userId: UserId,
  ...RollProof,
  item: ItemView,
  isValid: Schema.Boolean
})
