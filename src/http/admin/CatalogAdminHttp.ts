/** Handlers of catalog administration (docs/rules.md#catalog-administration). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Catalog, type CaseWithItems } from "../../services/games/Catalog"
import { Api } from "../Api"
import { AdminAuthentication, CurrentUser } from "../identity/Authentication"
import { makeAdminStepUp } from "./AdminStepUp"
import { AppConfig } from "../../layers/AppConfig"
import { TwoFactor } from "../../services/identity/TwoFactor"
import { buildOnly } from "../platform/RequestContext"

/** The administrators' case response, with its economics (docs/rules.md#catalog-administration). */
const caseView = ({ case: kase, economics, items }: CaseWithItems) => ({
  id: kase.id,
  name: kase.name,
  slug: kase.slug,
  priceCents: kase.priceCents,
  category: kase.category,
  isActive: kase.isActive,
  isFeatured: kase.isFeatured,
  houseEdge: kase.houseEdge,
  flipChance: kase.flipChance,
  promotional: kase.promotional,
  expectedValueCents: economics.expectedValueCents,
  rtp: economics.rtp,
  items: items.map(({ dropChance, itemId, rangeEnd, rangeStart }) => ({ itemId, dropChance, rangeStart, rangeEnd }))
})

export const CatalogAdminLive = HttpApiBuilder.group(Api, "catalogAdmin", Effect.fnUntraced(function*(handlers) {
  const catalog = yield* Catalog
  const stepUp = yield* makeAdminStepUp
  return handlers
    .handle("createItem", ({ headers, payload }) =>
      Effect.zipRight(stepUp(headers), Effect.flatMap(CurrentUser, ({ user }) => catalog.createItem(payload, user.id))))
    .handle("updateItem", ({ headers, path, payload }) =>
      Effect.zipRight(stepUp(headers), Effect.flatMap(CurrentUser, ({ user }) => catalog.updateItem(path.id, payload, user.id))))
    .handle("listItems", ({ urlParams }) => catalog.listItems(urlParams))
    .handle("createCase", ({ headers, payload }) =>
      Effect.zipRight(
        stepUp(headers),
        Effect.flatMap(CurrentUser, ({ user }) => Effect.map(catalog.createCase(payload, user.id), caseView))
      ))
    .handle("updateCase", ({ headers, path, payload }) =>
      Effect.zipRight(
        stepUp(headers),
        Effect.flatMap(CurrentUser, ({ user }) => Effect.map(catalog.updateCase(path.id, payload, user.id), caseView))
      ))
    .handle("getCase", ({ path }) => Effect.map(catalog.findCase(path.id), caseView))
    .handle("listCases", ({ urlParams }) =>
      Effect.map(catalog.listCases(urlParams), ({ items, page, total }) => ({
        cases: items.map(caseView),
        total,
        page
      })))
})).pipe(buildOnly([AppConfig, AdminAuthentication, TwoFactor, Catalog]))
