/** Case battles (docs/rules.md#battles). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  BattleId,
  BattleMode,
  BattleRollId,
  BattleStatus,
  CreateBattleRequest,
  SettlementType
} from "../../schema/battles/Battle"
import { ItemView } from "../../schema/games/Game"
import { CaseId, ItemId, UserId } from "../../schema/platform/Ids"
import { ListPage, StatusPageQuery } from "../../schema/platform/Pagination"
import { Authentication } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"
import { gameAction } from "../platform/Idempotent"
import { documented } from "../platform/OpenApiDocs"

export const Battle = Schema.Struct({
  id: Schema.String,
  status: BattleStatus,
  /**
   * SHA-256 of the battle's server seed, committed at creation: every round's roll is
   * HMAC(serverSeed, `${player clientSeed}:${player nonce}`). Null only for battles finished before
   * seeds were committed per battle (each of their rounds shows its own).
   */
  serverSeedHash: Schema.NullOr(Schema.String),
  /** Revealed once the battle is FINISHED. */
  serverSeed: Schema.NullOr(Schema.String),
  mode: BattleMode,
  maxPlayers: Schema.Int,
  entryPriceCents: Schema.BigIntFromNumber,
  players: Schema.Array(Schema.Struct({
    slot: Schema.Int,
    /** TEAM: 1 for slots 1-2, 2 for slots 3-4; null in the other modes. */
    team: Schema.NullOr(Schema.Int),
    user: Schema.Struct({ id: UserId, username: Schema.String }),
    totalValueCents: Schema.BigIntFromNumber,
    isWinner: Schema.Boolean
  })),
  cases: Schema.Array(Schema.Struct({ id: CaseId, name: Schema.String, priceCents: Schema.BigIntFromNumber })),
  rounds: Schema.Array(Schema.Struct({
    /** The roll's id, for `GET /provably-fair/verify/:id?type=battle-roll`. */
    id: BattleRollId,
    roundNumber: Schema.Int,
    userId: UserId,
    item: ItemView,
    roll: Schema.Int,
    serverSeedHash: Schema.String,
    serverSeed: Schema.NullOr(Schema.String),
    clientSeed: Schema.String,
    nonce: Schema.Int
  })),
  createdAt: Schema.Date,
  finishedAt: Schema.NullOr(Schema.Date)
})

const Settlements = Schema.Struct({
  battleId: Schema.String,
  fairSharePerWinner: Schema.Number,
  settlements: Schema.Array(Schema.Struct({
    id: Schema.String,
    type: SettlementType,
    userId: Schema.NullOr(UserId),
    item: Schema.Struct({ id: ItemId, name: Schema.String, valueCents: Schema.BigIntFromNumber, imageUrl: Schema.String }),
    roundNumber: Schema.NullOr(Schema.Int)
  })),
  summary: Schema.Struct({
    totalDropped: Schema.BigIntFromNumber,
    removedToPool: Schema.BigIntFromNumber,
    addedFromPool: Schema.BigIntFromNumber,
    winnersCount: Schema.Int
  })
})

const IdPath = Schema.Struct({ id: BattleId })

export class BattlesApi extends HttpApiGroup.make("battles")
  .annotate(OpenApi.Description, "Case battles between 2 to 4 players: create, join, leave, and the settlement.")
  .add(
    HttpApiEndpoint.post("create", "/battles").setPayload(CreateBattleRequest).addSuccess(Battle, { status: 201 })
      .addError(Schema.Union(HttpError.CaseNotFound, HttpError.InsufficientBalance))
      .pipe(gameAction)
      .pipe(documented("Create a battle", "Entry price = the sum of the cases' prices; the creator pays it and takes " +
        "slot 1. TEAM needs 4 players."))
  )
  .add(
    HttpApiEndpoint.get("list", "/battles").setUrlParams(StatusPageQuery(BattleStatus))
      .addSuccess(ListPage("battles", Battle))
      .pipe(documented("List battles", "Newest first; `rounds` is left empty in lists (see `GET /battles/:id`)."))
  )
  .add(
    HttpApiEndpoint.get("get", "/battles/:id").setPath(IdPath).addSuccess(Battle)
      .pipe(documented("One battle", "A battle with its players and, once rolled, its rounds."))
  )
  .add(
    HttpApiEndpoint.post("join", "/battles/:id/join").setPath(IdPath).addSuccess(Battle)
      .addError(Schema.Union(HttpError.BattleNotOpen, HttpError.AlreadyJoined, HttpError.InsufficientBalance))
      .pipe(gameAction)
      .pipe(documented("Join a battle", "Pays the entry and takes the next slot; 409 `Battle is not open` (full, " +
        "finished or cancelled), 409 `Already joined`. The join that fills the last slot rolls every round and " +
        "settles the battle."))
  )
  .add(
    HttpApiEndpoint.post("leave", "/battles/:id/leave").setPath(IdPath).addSuccess(Battle)
      .addError(Schema.Union(HttpError.BattleNotOpen, HttpError.NotInBattle))
      .pipe(documented("Leave a battle", "WAITING only: refunds the entry; when the creator leaves the battle is " +
        "CANCELLED and everyone is refunded."))
  )
  .add(
    HttpApiEndpoint.get("settlements", "/battles/:id/settlements").setPath(IdPath).addSuccess(Settlements)
      .addError(HttpError.BattleNotFinished)
      .pipe(documented("A battle's settlement", "Who received which item (the settlement steps); 409 before the " +
        "battle is FINISHED."))
  )
  .middleware(Authentication)
{}
