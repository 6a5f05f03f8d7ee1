/** Handlers of the public case catalog. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Catalog } from "../../services/games/Catalog"
import { Api } from "../Api"
import { Authentication } from "../identity/Authentication"
import { buildOnly } from "../platform/RequestContext"

export const CasesLive = HttpApiBuilder.group(Api, "cases", Effect.fnUntraced(function*(handlers) {
  const catalog = yield* Catalog
  return handlers
    .handle("list", ({ urlParams }) =>
      Effect.map(catalog.listActiveCases(urlParams), ({ items, page, total }) => ({ cases: items, total, page })))
    .handle("get", ({ path }) =>
      Effect.map(catalog.findActiveCase(path.id), ({ case: kase, economics, items }) => ({
        id: kase.id,
        name: kase.name,
        priceCents: kase.priceCents,
        flipChance: kase.flipChance,
        rtp: economics.rtp,
        items: items.map((item) => ({
          id: item.itemId,
          name: item.name,
          rarity: item.rarity,
          valueCents: item.valueCents,
          imageUrl: item.imageUrl,
          dropChance: item.dropChance
        }))
      })))
})).pipe(buildOnly([Authentication, Catalog]))
