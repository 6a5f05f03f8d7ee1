/**
 * The public case catalog (docs/rules.md#case-listing): active cases only, for signed-in users. Group "cases";
 * further case endpoints belong here too.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ActiveCaseQuery, CaseSummary, Rarity } from "../../schema/games/Catalog"
import { CaseId, ItemId } from "../../schema/platform/Ids"
import { ListPage } from "../../schema/platform/Pagination"
import { Authentication } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"
import { documented } from "../platform/OpenApiDocs"

/** `GET /cases/:id`: the items in roll order, and the chance of FLIP (docs/fairness.md). */
const CaseDetailView = Schema.Struct({
  id: CaseId,
  name: Schema.String,
  priceCents: Schema.BigIntFromNumber,
  flipChance: Schema.Number,
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
      .pipe(documented("List cases", "The cases on offer with their prices, paged; the query parameters narrow the " +
        "list."))
  )
  .add(
    HttpApiEndpoint.get("get", "/cases/:id").setPath(Schema.Struct({ id: CaseId })).addSuccess(CaseDetailView)
      .addError(HttpError.CaseNotFound)
      .pipe(documented("One case", "An active case with its items in roll order, each item's chance, and the chance " +
        "of FLIP."))
  )
  .middleware(Authentication)
{}
