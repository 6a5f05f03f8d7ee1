/**
 * Catalog administration (docs/rules.md#catalog-administration): items and cases with their drop chances and
 * economics. ADMIN sessions only. Every field is validated and every bad field is reported; drop chances that do not
 * cover 1..10000000 exactly are 422 on `items`; a case that pays back more than its house edge allows
 * is 422 unless promotional.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema, Struct } from "effect"
import { Case, CaseUpdate, ItemUpdate, NewCase, NewItem, Rarity } from "../../schema/games/Catalog"
import { CaseId, ItemId } from "../../schema/platform/Ids"
import { ListPage, PageQuery } from "../../schema/platform/Pagination"
import { STEP_UP, withStepUp } from "./AdminStepUp"
import { AdminAuthentication } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"
import { documented } from "../platform/OpenApiDocs"

/** An item of the catalog (docs/rules.md#rarities). */
const AdminItem = Schema.Struct({
  id: ItemId,
  name: Schema.String,
  rarity: Rarity,
  valueCents: Schema.BigIntFromNumber,
  imageUrl: Schema.String,
  isUpgradable: Schema.Boolean
})

/**
 * The administrators' case response (docs/rules.md#catalog-administration): the case, its economics and its
 * items' ranges in roll order.
 */
const AdminCase = Schema.Struct({
  ...Struct.pick(
    Case.fields,
    "id",
    "name",
    "slug",
    "priceCents",
    "category",
    "isActive",
    "isFeatured",
    "houseEdge",
    "flipChance",
    "promotional"
  ),
  /** A JSON number here; the stored row reads a bigint. Set again, the key keeps its place in the response. */
  priceCents: Schema.BigIntFromNumber,
  /** What an opening pays back on average, FLIP included, at the items' current values; whole cents, half up. */
  expectedValueCents: Schema.BigIntFromNumber,
  /** expectedValueCents / priceCents (computed exactly, then rounded half up to 4 decimals). */
  rtp: Schema.Number,
  items: Schema.Array(Schema.Struct({
    itemId: ItemId,
    dropChance: Schema.Number,
    rangeStart: Schema.Int,
    rangeEnd: Schema.Int
  }))
})

/** Why a case is not saved: its slug is taken, its items cannot make its ranges, it pays back too much. */
const CaseRefused = Schema.Union(HttpError.SlugTaken, HttpError.InvalidCaseItems, HttpError.OverHouseEdge)

const ItemPath = Schema.Struct({ id: ItemId })
const CasePath = Schema.Struct({ id: CaseId })

export class CatalogAdminApi extends HttpApiGroup.make("catalogAdmin")
  .annotate(
    OpenApi.Description,
    "Administration of the catalog: items and cases with their economics. ADMIN sessions only."
  )
  .add(
    HttpApiEndpoint.post("createItem", "/admin/items").setPayload(NewItem).addSuccess(AdminItem, { status: 201 })
      .pipe(withStepUp)
      .pipe(documented("Create an item (admin)", "Adds an item to the catalog with its value in cents. " + STEP_UP))
  )
  .add(
    HttpApiEndpoint.put("updateItem", "/admin/items/:id").setPath(ItemPath).setPayload(ItemUpdate)
      .addSuccess(AdminItem)
      .pipe(withStepUp)
      .pipe(documented("Update an item (admin)", "Changes an item's fields. A new value that pushes an active case " +
        "over its house edge raises a CRITICAL dashboard alert and is audited with the cases it affected. " + STEP_UP))
  )
  .add(
    HttpApiEndpoint.get("listItems", "/admin/items").setUrlParams(PageQuery).addSuccess(ListPage("items", AdminItem))
      .pipe(documented("List items (admin)", "The catalog's items, paged."))
  )
  .add(
    HttpApiEndpoint.post("createCase", "/admin/cases").setPayload(NewCase).addSuccess(AdminCase, { status: 201 })
      .addError(CaseRefused)
      .pipe(withStepUp)
      .pipe(documented("Create a case (admin)", "Adds a case with its price and items; answers its economics " +
        "(expected value, return to player) and the items' ranges in roll order. " + STEP_UP))
  )
  .add(
    HttpApiEndpoint.put("updateCase", "/admin/cases/:id").setPath(CasePath).setPayload(CaseUpdate)
      .addSuccess(AdminCase)
      .addError(Schema.Union(HttpError.CaseNotFound, CaseRefused))
      .pipe(withStepUp)
      .pipe(documented("Update a case (admin)", "Changes a case (activating it included); answers its new economics " +
        "and its items' ranges. " + STEP_UP))
  )
  .add(
    HttpApiEndpoint.get("listCases", "/admin/cases").setUrlParams(PageQuery).addSuccess(ListPage("cases", AdminCase))
      .pipe(documented("List cases (admin)", "Every case, active or not, with its economics, paged."))
  )
  .add(
    HttpApiEndpoint.get("getCase", "/admin/cases/:id").setPath(CasePath).addSuccess(AdminCase)
      .addError(HttpError.CaseNotFound)
      .pipe(documented("One case (admin)", "A case with its economics and its items' ranges in roll order."))
  )
  .middleware(AdminAuthentication)
{}
