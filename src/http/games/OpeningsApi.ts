/** Opening cases and their history, verification and statistics (docs/rules.md#openings). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ItemView, OpeningResult, OpeningVerification } from "../../schema/games/Game"
import { CaseId, IdString } from "../../schema/platform/Ids"
import { ListPage, PageQuery } from "../../schema/platform/Pagination"
import { Authentication } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"
import { gameAction } from "../platform/Idempotent"
import * as Examples from "../platform/OpenApiExamples"
import { documented } from "../platform/OpenApiDocs"

const IdPath = Schema.Struct({ id: CaseId })
const OpeningIdPath = Schema.Struct({
  id: IdString
})

/** An opening as its history shows it (`GET /cases/openings`, and an administrator's `GET /admin/users/:id/openings`). */
export const OpeningView = Schema.Struct({
  id: Schema.String,
  case: Schema.Struct({ id: Schema.String, name: Schema.String }),
  item: ItemView,
  roll: Schema.Number,
  isFlip: Schema.Boolean,
  pricePaidCents: Schema.BigIntFromNumber,
  itemValueCents: Schema.BigIntFromNumber,
  profit: Schema.BigIntFromNumber,
  createdAt: Schema.Date
})

export class OpeningsApi extends HttpApiGroup.make("openings")
  .annotate(
    OpenApi.Description,
    "Opening cases (the provably fair roll), the opening history, verification and statistics."
  )
  .add(
    HttpApiEndpoint.post("open", "/cases/:id/open").setPath(IdPath).addSuccess(OpeningResult)
      .addError(Schema.Union(HttpError.CaseNotFound, HttpError.InsufficientBalance, HttpError.InvalidRoll))
      .pipe(gameAction)
      .annotateContext(Examples.openCase)
      .pipe(documented("Open a case", "Debits the case's price, rolls with the user's committed server seed, client " +
        "seed and next nonce, and adds the item to the inventory, all in one transaction. An Idempotency-Key header " +
        "makes a retry safe."))
  )
  .add(
    HttpApiEndpoint.get("history", "/cases/openings").setUrlParams(PageQuery)
      .addSuccess(ListPage("openings", OpeningView))
      .pipe(documented("My openings", "The user's openings, newest first, with the price paid, the item's value and " +
        "the profit in cents."))
  )
  .add(
    HttpApiEndpoint.get("verify", "/cases/openings/:id/verify").setPath(OpeningIdPath).addSuccess(OpeningVerification)
      .annotateContext(Examples.verifyOpening)
      .pipe(documented("Verify an opening", "Recomputes the roll and the item from the opening's seeds and nonce; " +
        "`isValid` tells whether they match what was recorded."))
  )
  .add(
    HttpApiEndpoint.get("caseStats", "/cases/:id/stats").setPath(IdPath)
      .addSuccess(Schema.Struct({
        totalOpened: Schema.Int,
        uniqueOpeners: Schema.Int,
        totalVolume: Schema.BigIntFromNumber,
        averageProfit: Schema.BigIntFromNumber,
        dropDistribution: Schema.Array(Schema.Struct({ rarity: Schema.String, count: Schema.Int, percentage: Schema.Number }))
      }))
      .addError(HttpError.CaseNotFound)
      .pipe(documented("A case's statistics", "How often the case was opened, by how many users, its volume in " +
        "cents, the average profit and the drops by rarity."))
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
      .pipe(documented("My opening statistics", "The user's totals over every opening: spent, won, profit, favorite " +
        "case, best drop and FLIP count."))
  )
  .middleware(Authentication)
{}
