/**
 * The public case catalog (docs/rules.md#case-listing): active cases only, for signed-in users. Group "cases";
 * further case endpoints belong here too.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ActiveCaseQuery, CaseSummary, PublicRtp, Rarity } from "../../schema/games/Catalog"
import { CaseId, ItemId } from "../../schema/platform/Ids"
import { ListPage } from "../../schema/platform/Pagination"
import { Authentication } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"
import { documented } from "../platform/OpenApiDocs"

/**
 * `GET /cases/:id`: the items in roll order, the chance of FLIP (docs/fairness.md) and the case's rtp
 * (docs/rules.md#case-listing).
 */
const CaseDetailView = Schema.Struct({
  id: CaseId,
  name: Schema.String,
  priceCents: Schema.BigIntFromNumber,
  flipChance: Schema.Number,
  rtp: PublicRtp,
  items: Schema.Array(Schema.Struct({
    id: ItemId,
    name: Schema.String,
    rarity: Rarity,
    valueCents: Schema.BigIntFromNumber,
    imageUrl: Schema.String,
    dropChance: Schema.Number
  }))
})

export class CasesApi extends HttpApiGroup.make("cases")
  .annotate(OpenApi.Description, "The cases a user can open, with their items and chances.")
  .add(
    HttpApiEndpoint.get("list", "/cases").setUrlParams(ActiveCaseQuery).addSuccess(ListPage("cases", CaseSummary))
      .pipe(documented("List cases", "The cases on offer with their prices and return to player (rtp), paged; the " +
        "query parameters narrow the list."))
  )
  .add(
    HttpApiEndpoint.get("get", "/cases/:id").setPath(Schema.Struct({ id: CaseId })).addSuccess(CaseDetailView)
      .addError(HttpError.CaseNotFound)
      .pipe(documented("One case", "An active case with its items in roll order, each item's chance, the chance " +
        "of FLIP and its return to player (rtp)."))
  )
  .middleware(Authentication)
{}
