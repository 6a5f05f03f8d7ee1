/**
 * Catalog administration (docs/rules.md#catalog-administration): items and cases with their drop chances and
 * economics. ADMIN sessions only. Every field is validated and every bad field is reported; drop chances that do not
 * cover 1..10000000 exactly are 422 on `items`; a case that pays back more than its house edge allows
 * is 422 unless promotional.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema, Struct } from "effect"
import { Case, CaseCategory, DropChance, FlipChance, Rarity } from "../../schema/games/Catalog"
import { CaseId, ItemId } from "../../schema/platform/Ids"
import { ListPage, PageQuery } from "../../schema/platform/Pagination"
import { AdminAuthentication } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"
import { PlainString } from "../../schema/platform/Text"
import { documented } from "../platform/OpenApiDocs"

const Name = PlainString.pipe(
  Schema.filter((s) => s.trim().length > 0, { message: () => "must not be empty" }),
  Schema.maxLength(100, { message: () => "must be at most 100 characters" })
)

const Slug = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9]+(-[a-z0-9]+)*$/, {
    message: () => "must be lowercase letters and digits in words separated by single hyphens"
  }),
  Schema.maxLength(64, { message: () => "must be at most 64 characters" })
)

const ImageUrl = PlainString.pipe(
  Schema.filter((s) => s.trim().length > 0, { message: () => "must not be empty" }),
  Schema.maxLength(500, { message: () => "must be at most 500 characters" })
)

const Description = Schema.NullOr(
  PlainString.pipe(Schema.maxLength(1000, { message: () => "must be at most 1000 characters" }))
)

/** Cents in a JSON integer, more than zero. */
const PositiveCents = Schema.Number.pipe(
  Schema.filter((n) => Number.isSafeInteger(n) && n > 0, { message: () => "must be a positive integer" }),
  Schema.compose(Schema.BigIntFromNumber)
)

const Fraction = (max: number) =>
  Schema.Number.pipe(
    Schema.filter((n) => Number.isFinite(n) && n >= 0 && n <= max, { message: () => `must be between 0 and ${max}` })
  )

const RarityField = Rarity.annotations({
  message: () => `must be one of ${Rarity.literals.join(", ")}`
})

const CategoryField = CaseCategory.annotations({
  message: () => `must be one of ${CaseCategory.literals.join(", ")}`
})

const Flag = Schema.Boolean.annotations({ message: () => "must be true or false" })

const CaseItemInput = Schema.Struct({
  itemId: ItemId.annotations({ message: () => "must be a positive integer id" }),
  /**
   * Absent: the item's rarity's base probability, scaled with the others to fill 1
   * (docs/rules.md#missing-drop-chances).
   */
  dropChance: Schema.optional(DropChance)
})

const CaseItems = Schema.Array(CaseItemInput).pipe(
  Schema.minItems(1, { message: () => "must have at least one item" })
)

const ItemFields = {
  name: Name,
  rarity: RarityField,
  valueCents: PositiveCents,
  imageUrl: ImageUrl
}

export const NewItemPayload = Schema.Struct({
  ...ItemFields,
  isUpgradable: Schema.optionalWith(Flag, { default: () => true })
}).annotations({ parseOptions: { errors: "all" } })

export const ItemUpdatePayload = Schema.Struct({
  name: Schema.optional(ItemFields.name),
  rarity: Schema.optional(ItemFields.rarity),
  valueCents: Schema.optional(ItemFields.valueCents),
  imageUrl: Schema.optional(ItemFields.imageUrl),
  isUpgradable: Schema.optional(Flag)
}).annotations({ parseOptions: { errors: "all" } })

const OptionalCaseFields = {
  description: Schema.optional(Description),
  /** Only EVENT changes anything: every other category follows from the price (docs/rules.md#case-categories). */
  category: Schema.optional(CategoryField),
  isFeatured: Schema.optional(Flag),
  isActive: Schema.optional(Flag),
  houseEdge: Schema.optional(Fraction(0.5)),
  flipChance: Schema.optional(FlipChance),
  /** Pays back more than its house edge on purpose (free or event cases, docs/rules.md#house-edge-rule); audited. */
  promotional: Schema.optional(Flag)
}

export const NewCasePayload = Schema.Struct({
  name: Name,
  slug: Slug,
  imageUrl: ImageUrl,
  priceCents: PositiveCents,
  items: CaseItems,
  ...OptionalCaseFields
}).annotations({ parseOptions: { errors: "all" } })

export const CaseUpdatePayload = Schema.Struct({
  name: Schema.optional(Name),
  slug: Schema.optional(Slug),
  imageUrl: Schema.optional(ImageUrl),
  priceCents: Schema.optional(PositiveCents),
  items: Schema.optional(CaseItems),
  ...OptionalCaseFields
}).annotations({ parseOptions: { errors: "all" } })

/** An item of the catalog (docs/rules.md#rarities). */
export const AdminItem = Schema.Struct({
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
export const AdminCase = Schema.Struct({
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

const ItemPath = Schema.Struct({ id: ItemId })
const CasePath = Schema.Struct({ id: CaseId })

export class CatalogAdminApi extends HttpApiGroup.make("catalogAdmin")
  .annotate(
    OpenApi.Description,
    "Administration of the catalog: items and cases with their economics. ADMIN sessions only."
  )
  .add(
    HttpApiEndpoint.post("createItem", "/admin/items").setPayload(NewItemPayload).addSuccess(AdminItem, { status: 201 })
      .pipe(documented("Create an item (admin)", "Adds an item to the catalog with its value in cents."))
  )
  .add(
    HttpApiEndpoint.put("updateItem", "/admin/items/:id").setPath(ItemPath).setPayload(ItemUpdatePayload)
      .addSuccess(AdminItem)
      .pipe(documented("Update an item (admin)", "Changes an item's fields."))
  )
  .add(
    HttpApiEndpoint.get("listItems", "/admin/items").setUrlParams(PageQuery).addSuccess(ListPage("items", AdminItem))
      .pipe(documented("List items (admin)", "The catalog's items, paged."))
  )
  .add(
    HttpApiEndpoint.post("createCase", "/admin/cases").setPayload(NewCasePayload).addSuccess(AdminCase, { status: 201 })
      .addError(Schema.Union(HttpError.SlugTaken, HttpError.Unprocessable))
      .pipe(documented("Create a case (admin)", "Adds a case with its price and items; answers its economics " +
        "(expected value, return to player) and the items' ranges in roll order."))
  )
  .add(
    HttpApiEndpoint.put("updateCase", "/admin/cases/:id").setPath(CasePath).setPayload(CaseUpdatePayload)
      .addSuccess(AdminCase)
      .addError(Schema.Union(HttpError.SlugTaken, HttpError.Unprocessable))
      .pipe(documented("Update a case (admin)", "Changes a case; answers its new economics and its items' ranges."))
  )
  .add(
    HttpApiEndpoint.get("listCases", "/admin/cases").setUrlParams(PageQuery).addSuccess(ListPage("cases", AdminCase))
      .pipe(documented("List cases (admin)", "Every case, active or not, with its economics, paged."))
  )
  .add(
    HttpApiEndpoint.get("getCase", "/admin/cases/:id").setPath(CasePath).addSuccess(AdminCase)
      .pipe(documented("One case (admin)", "A case with its economics and its items' ranges in roll order."))
  )
  .middleware(AdminAuthentication)
{}
