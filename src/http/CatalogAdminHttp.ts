/** Handlers of catalog administration (D6). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Catalog, type CaseWithItems } from "../services/Catalog"
import { Api } from "./Api"

/** D6's case response. */
const caseView = ({ case: kase, items }: CaseWithItems) => ({
  id: kase.id,
  name: kase.name,
  slug: kase.slug,
  priceCents: kase.priceCents,
  category: kase.category,
  isActive: kase.isActive,
  isFeatured: kase.isFeatured,
  houseEdge: kase.houseEdge,
  flipChance: kase.flipChance,
  items: items.map(({ dropChance, itemId, rangeEnd, rangeStart }) => ({ itemId, dropChance, rangeStart, rangeEnd }))
})

export const CatalogAdminLive = HttpApiBuilder.group(Api, "catalogAdmin", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog
    return handlers
      .handle("createItem", ({ payload }) => catalog.createItem(payload))
      .handle("updateItem", ({ path, payload }) => catalog.updateItem(path.id, payload))
      .handle("listItems", ({ urlParams }) =>
        Effect.map(catalog.listItems(urlParams), ({ entries, page, total }) => ({ items: entries, total, page })))
      .handle("createCase", ({ payload }) => Effect.map(catalog.createCase(payload), caseView))
      .handle("updateCase", ({ path, payload }) => Effect.map(catalog.updateCase(path.id, payload), caseView))
      .handle("listCases", ({ urlParams }) =>
        Effect.map(catalog.listCases(urlParams), ({ entries, page, total }) => ({
          cases: entries.map(caseView),
          total,
          page
        })))
  }))
