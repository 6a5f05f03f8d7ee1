/** Opening cases and their history, verification and statistics (SPEC "Cases", D5, D7, D6 stats). */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { ItemView, OpeningResult } from "../schema/Game"
import { CaseId, IdString } from "../schema/Ids"
import { PageQuery } from "../schema/Pagination"
import { Authentication } from "./Authentication"
import * as HttpError from "./HttpErrors"
import { IdempotencyKeyHeader } from "./Idempotent"

export const OpeningVerification = Schema.Struct({
  openingId: Schema.String,
  serverSeed: Schema.String,
  serverSeedHash: Schema.String,
  clientSeed: Schema.String,
  nonce: Schema.Number,
  roll: Schema.Number,
  calculatedRoll: Schema.Number,
  /** The item the roll selected and its block of the case's ranges at that moment. */
  rollItemId: Schema.String,
  rangeStart: Schema.Number,
  rangeEnd: Schema.Number,
  /** The case's flip chance when the opening was rolled: FLIP when (t mod 10000000) < flipChance x 10000000. */
  flipChance: Schema.Number,
  isFlip: Schema.Boolean,
  flipServerSeed: Schema.optional(Schema.String),
  flipServerSeedHash: Schema.optional(Schema.String),
  flipClientSeed: Schema.optional(Schema.String),
  flipNonce: Schema.optional(Schema.Number),
  flipRoll: Schema.optional(Schema.NullOr(Schema.Number)),
  calculatedFlipRoll: Schema.optional(Schema.Number),
  flipItemId: Schema.optional(Schema.String),
  flipRangeStart: Schema.optional(Schema.Number),
  flipRangeEnd: Schema.optional(Schema.Number),
  isValid: Schema.Boolean
})

const IdPath = Schema.Struct({ id: CaseId })
const OpeningIdPath = Schema.Struct({
  id: IdString
})

export class OpeningsApi extends HttpApiGroup.make("openings")
  .add(
    HttpApiEndpoint.post("open", "/cases/:id/open")
      .setPath(IdPath)
      .setHeaders(IdempotencyKeyHeader)
      .addSuccess(OpeningResult)
      .addError(HttpError.CaseNotFound)
      .addError(HttpError.InsufficientBalance)
      .addError(HttpError.OperationInProgress)
      .addError(HttpError.InvalidRoll)
      .addError(HttpError.IdempotencyKeyReused)
  )
  .add(
    HttpApiEndpoint.get("history", "/cases/openings")
      .setUrlParams(PageQuery)
      .addSuccess(Schema.Struct({
        openings: Schema.Array(Schema.Struct({
          id: Schema.String,
          case: Schema.Struct({ id: Schema.String, name: Schema.String }),
          item: ItemView,
          roll: Schema.Number,
          isFlip: Schema.Boolean,
          pricePaidCents: Schema.BigIntFromNumber,
          itemValueCents: Schema.BigIntFromNumber,
          profit: Schema.BigIntFromNumber,
          createdAt: Schema.Date
        })),
        total: Schema.Int,
        page: Schema.Int
      }))
  )
  .add(
    HttpApiEndpoint.get("verify", "/cases/openings/:id/verify").setPath(OpeningIdPath).addSuccess(OpeningVerification)
  )
  .add(
    HttpApiEndpoint.get("caseStats", "/cases/:id/stats")
      .setPath(IdPath)
      .addSuccess(Schema.Struct({
        totalOpened: Schema.Int,
        uniqueOpeners: Schema.Int,
        totalVolume: Schema.BigIntFromNumber,
        averageProfit: Schema.BigIntFromNumber,
        dropDistribution: Schema.Array(Schema.Struct({ rarity: Schema.String, count: Schema.Int, percentage: Schema.Number }))
      }))
      .addError(HttpError.CaseNotFound)
  )
  .add(
    HttpApiEndpoint.get("userStats", "/users/me/stats/cases")
      .addSuccess(Schema.Struct({
        totalOpened: Schema.Int,
        totalSpent: Schema.BigIntFromNumber,
        totalWon: Schema.BigIntFromNumber,
        profit: Schema.BigIntFromNumber,
        favoriteCase: Schema.NullOr(Schema.String),
        bestDrop: Schema.NullOr(Schema.Struct({ item: ItemView, date: Schema.Date })),
        flipCount: Schema.Int
      }))
  )
  .middleware(Authentication)
{}
