/** The catalog repository and the demo catalog, against the test database. */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Either, Layer, Schema } from "effect"
import { ImageUrl } from "../../src/schema/games/Catalog"
import type { ItemId } from "../../src/schema/platform/Ids"
import { Catalog } from "../../src/services/games/Catalog"
import { CatalogSeed } from "../../src/services/games/CatalogSeed"
import { TestDatabase } from "../support/TestDatabase"

const Services = CatalogSeed.DefaultWithoutDependencies.pipe(
  Layer.provideMerge(Catalog.Default),
  Layer.provideMerge(TestDatabase)
)

let seq = 0
const newItems = (...values: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog
    return yield* Effect.forEach(values, (value) =>
      catalog.createItem({
        name: `Test item ${++seq}`,
        rarity: "MIL_SPEC",
        valueCents: BigInt(value),
        imageUrl: `/images/items/test-${seq}.png`,
        isUpgradable: true
      }).pipe(Effect.map((item) => item.id)))
  })

const countRows = (table: "cases" | "case_items" | "items") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: string }>`SELECT count(*)::text AS n FROM ${sql(table)}`)
    .pipe(Effect.map(([row]) => Number(row!.n)))

const newCase = (items: ReadonlyArray<{ itemId: ItemId; dropChance: number }>, priceCents = 1_500n) =>
  Effect.flatMap(Catalog, (catalog) =>
    catalog.createCase({
      name: "Test case",
      slug: `test-case-${++seq}`,
      imageUrl: "/images/cases/test.png",
      priceCents,
      items
    }))

layer(Services)("Catalog", (it) => {
  it.effect("saves a case with its ranges in roll order and its category from the price", () =>
    Effect.gen(function*() {
      const [common, rare] = yield* newItems(100, 5_000)
      const saved = yield* newCase([{ itemId: common!, dropChance: 0.95 }, { itemId: rare!, dropChance: 0.05 }])
      expect(saved.case.category).toBe("MEDIUM")
      expect(saved.case.houseEdge).toBe(0.1)
      expect(saved.items.map((i) => ({ ...i }))).toEqual([
        { itemId: rare, dropChance: 0.05, rangeStart: 1, rangeEnd: 500_000 },
        { itemId: common, dropChance: 0.95, rangeStart: 500_001, rangeEnd: 10_000_000 }
      ])
      expect(yield* (yield* Catalog).caseItems(saved.case.id)).toEqual(saved.items)
    }))

  it.effect("stores drop chances exactly", () =>
    Effect.gen(function*() {
      const [a, b] = yield* newItems(100, 200)
      const saved = yield* newCase([{ itemId: a!, dropChance: 0.57 }, { itemId: b!, dropChance: 0.43 }])
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ dropChance: string }>`
        SELECT drop_chance::text FROM case_items WHERE case_id = ${saved.case.id} ORDER BY range_start`
      expect(rows.map((r) => r.dropChance)).toEqual(["0.4300000", "0.5700000"])
      expect(saved.items[1]!.rangeEnd - saved.items[1]!.rangeStart + 1).toBe(5_700_000)
    }))

  it.effect("EVENT is kept when asked for; other categories follow the price", () =>
    Effect.gen(function*() {
      const [only] = yield* newItems(100)
      const catalog = yield* Catalog
      const event = yield* catalog.createCase({
        name: "Event",
        slug: `event-${++seq}`,
        imageUrl: "/e.png",
        priceCents: 50_000n,
        category: "EVENT",
        items: [{ itemId: only!, dropChance: 1 }]
      })
      expect(event.case.category).toBe("EVENT")
      expect((yield* newCase([{ itemId: only!, dropChance: 1 }], 999n)).case.category).toBe("CHEAP")
      expect((yield* newCase([{ itemId: only!, dropChance: 1 }], 20_000n)).case.category).toBe("EXPENSIVE")
      expect((yield* newCase([{ itemId: only!, dropChance: 1 }], 20_001n)).case.category).toBe("PREMIUM")
    }))

  it.effect("refuses ranges that do not cover 1..10000000 and unknown items with 422 on items, writing nothing", () =>
    Effect.gen(function*() {
      const [a, b] = yield* newItems(100, 200)
      const before = { cases: yield* countRows("cases"), caseItems: yield* countRows("case_items") }
      const short = yield* Effect.either(newCase([{ itemId: a!, dropChance: 0.5 }, { itemId: b!, dropChance: 0.4 }]))
      const unknown = yield* Effect.either(newCase([{ itemId: a!, dropChance: 0.5 }, { itemId: 987654n as ItemId, dropChance: 0.5 }]))
      for (const result of [short, unknown]) {
        expect(Either.isLeft(result) && result.left._tag).toBe("InvalidCaseItems")
        if (Either.isLeft(result) && result.left._tag === "InvalidCaseItems") {
          expect(result.left.errors.map((e) => e.field)).toEqual(["items"])
        }
      }
      expect({ cases: yield* countRows("cases"), caseItems: yield* countRows("case_items") }).toEqual(before)
    }))

  it.effect("a taken slug is SlugTaken, even when two saves race", () =>
    Effect.gen(function*() {
      const [only] = yield* newItems(100)
      const catalog = yield* Catalog
      // Priced above its only item's value, within the house edge (docs/rules.md#house-edge-rule).
      const input = { name: "Twin", slug: `twin-${++seq}`, imageUrl: "/t.png", priceCents: 200n, items: [{ itemId: only!, dropChance: 1 }] }
      const results = yield* Effect.all([catalog.createCase(input), catalog.createCase(input)], {
        concurrency: 2,
        mode: "either"
      })
      expect(results.filter(Either.isRight)).toHaveLength(1)
      const refused = results.find(Either.isLeft)!
      expect(refused.left).toMatchObject({ _tag: "SlugTaken", message: "Slug already exists" })
    }))
})

layer(Services)("CatalogSeed", (it) => {
  it.effect("loads the demo catalog into an empty catalog once, even when instances start together", () =>
    Effect.gen(function*() {
      const seed = yield* CatalogSeed
      const reports = yield* Effect.all([seed.seedIfEmpty, seed.seedIfEmpty], { concurrency: 2 })
      expect(reports.filter((r) => r !== undefined)).toEqual([{ itemsCreated: 40, casesCreated: 6 }])
      expect(yield* countRows("items")).toBe(40)
      expect(yield* countRows("cases")).toBe(6)
      expect(yield* seed.seedIfEmpty).toBeUndefined()
    }))

  it.effect("seed adds only what is missing: items by name, cases by slug", () =>
    Effect.gen(function*() {
      const seed = yield* CatalogSeed
      const sql = yield* SqlClient.SqlClient
      yield* seed.seed
      expect(yield* seed.seed).toEqual({ itemsCreated: 0, casesCreated: 0 })
      yield* sql`DELETE FROM cases WHERE slug = 'elite'`
      expect(yield* seed.seed).toEqual({ itemsCreated: 0, casesCreated: 1 })
      expect(yield* countRows("cases")).toBe(6)
    }))

  it.effect("every demo case covers 1..10000000 and pays back less than its price on average", () =>
    Effect.gen(function*() {
      yield* (yield* CatalogSeed).seed
      const sql = yield* SqlClient.SqlClient
      const cases = yield* sql<{ slug: string; category: string; priceCents: string; covered: string; expectedCents: string }>`
        SELECT c.slug, c.category, c.price_cents, sum(ci.range_end - ci.range_start + 1)::text AS covered,
               sum(ci.drop_chance * i.value_cents)::text AS expected_cents
        FROM cases c JOIN case_items ci ON ci.case_id = c.id JOIN items i ON i.id = ci.item_id
        GROUP BY c.id`
      expect(new Set(cases.map((c) => c.category))).toEqual(new Set(["CHEAP", "MEDIUM", "EXPENSIVE", "PREMIUM", "EVENT"]))
      for (const c of cases) {
        expect(c.covered, c.slug).toBe("10000000")
        expect(Number(c.expectedCents), c.slug).toBeLessThan(Number(c.priceCents))
      }
      const rarities = yield* sql<{ rarity: string }>`SELECT DISTINCT rarity FROM items`
      expect(rarities).toHaveLength(7)
    }))

  it.effect("every demo image is one the administrators' API accepts (docs/rules.md#catalog-administration)", () =>
    Effect.gen(function*() {
      yield* (yield* CatalogSeed).seed
      const sql = yield* SqlClient.SqlClient
      const images = yield* sql<{ imageUrl: string }>`SELECT image_url FROM items UNION ALL SELECT image_url FROM cases`
      expect(images.length).toBeGreaterThanOrEqual(46)
      for (const { imageUrl } of images) expect(Schema.is(ImageUrl)(imageUrl), imageUrl).toBe(true)
    }))
})
