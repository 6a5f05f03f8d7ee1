/**
 * Loads the demo catalog (docs/rules.md#demo-catalog): `npm run seed` adds whatever of it is missing (items by
 * name, cases by slug), and `npm start` loads it when the catalog is empty. Seeding holds a transaction-scoped
 * advisory lock, so instances starting together load it once.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Schema } from "effect"
import { ServiceUnavailable } from "../../schema/platform/Errors"
import { ItemId } from "../../schema/platform/Ids"
import { Catalog } from "./Catalog"
import { demoCases, demoImagePath, demoItems, slugOf } from "./DemoCatalog"
import { execute, inTransaction, rowsOf } from "../platform/SqlRows"

interface SeedReport {
  readonly itemsCreated: number
  readonly casesCreated: number
}

/** Any constant shared by all instances; "catalog" in ASCII. */
const SEED_LOCK_KEY = 0x636174616c6f67

const NamedItemRow = Schema.Struct({ id: ItemId, name: Schema.String })
const SlugRow = Schema.Struct({ slug: Schema.String })

/** The demo catalog is valid, so the catalog refusing any of it is a defect; an outage stays ServiceUnavailable. */
const refusalsAsDefects = <A, E, R>(effect: Effect.Effect<A, E | ServiceUnavailable, R>): Effect.Effect<A, ServiceUnavailable, R> =>
  Effect.catchIf(effect, (error): error is E => !(error instanceof ServiceUnavailable), Effect.die)

export class CatalogSeed extends Effect.Service<CatalogSeed>()("app/CatalogSeed", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const catalog = yield* Catalog

    const load = Effect.gen(function*() {
      const names = demoItems.map((item) => item.name)
      const existing = yield* rowsOf(NamedItemRow, sql`SELECT id, name FROM items WHERE name IN ${sql.in(names)}`)
      const idByName = new Map(existing.map((row) => [row.name, row.id]))
      let itemsCreated = 0
      for (const item of demoItems) {
        if (idByName.has(item.name)) continue
        const created = yield* catalog.createItem({ ...item, imageUrl: demoImagePath("items", slugOf(item.name)) })
        idByName.set(item.name, created.id)
        itemsCreated++
      }
      const slugs = yield* rowsOf(SlugRow, sql`SELECT slug FROM cases WHERE slug IN ${sql.in(demoCases.map((c) => c.slug))}`)
      const taken = new Set(slugs.map((row) => row.slug))
      let casesCreated = 0
      for (const demo of demoCases) {
        if (taken.has(demo.slug)) continue
        yield* catalog.createCase({
          ...demo,
          imageUrl: demoImagePath("cases", demo.slug),
          items: demo.items.map(([name, dropChance]) => ({ itemId: idByName.get(name)!, dropChance }))
        })
        casesCreated++
      }
      return { itemsCreated, casesCreated } satisfies SeedReport
    })

    const locked = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      execute(sql`SELECT pg_advisory_xact_lock(${SEED_LOCK_KEY})`).pipe(Effect.zipRight(effect), inTransaction(sql))

    /** Adds the demo items and cases that are missing. */
    const seed = locked(load).pipe(refusalsAsDefects, Effect.withSpan("CatalogSeed.seed"))

    /** Loads the demo catalog into an empty catalog; does nothing (undefined) otherwise. */
    const seedIfEmpty = locked(Effect.flatMap(catalog.isEmpty, (empty) => (empty ? load : Effect.succeed(undefined))))
      .pipe(refusalsAsDefects, Effect.withSpan("CatalogSeed.seedIfEmpty"))

    return { seed, seedIfEmpty } as const
  }),
  dependencies: [Catalog.Default]
}) {}

/** At start: an empty catalog gets the demo catalog, so a fresh install has cases to open. */
export const CatalogSeedOnStart = Layer.effectDiscard(
  Effect.gen(function*() {
    const report = yield* (yield* CatalogSeed).seedIfEmpty
    if (report !== undefined) {
      yield* Effect.logInfo(
        `Catalog was empty: loaded the demo catalog (${report.itemsCreated} items, ${report.casesCreated} cases)`
      )
    }
  })
)
