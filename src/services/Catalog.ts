/**
 * The catalog's tables: items, cases and their case_items with roll ranges (SPEC Item, Case,
 * CaseItem; D6). Ranges are computed here, when a case's items are saved, so every saved case covers
 * 1..10000000 exactly.
 *
 * Administrators create, update and list everything, inactive cases included. Players see active
 * cases only (`listActiveCases`, `findActiveCase`): an inactive case is as absent as a missing one.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Either, Option, Schema } from "effect"
import { Case, CaseCategory, CaseItem, chanceUnits, Item, Rarity, unitsToDecimal } from "../schema/Catalog"
import { CaseNotFound, Conflict, FieldError, NotFound, UnprocessableEntity } from "../schema/Errors"
import { CaseId, ItemId } from "../schema/Ids"
import { categoryForPrice, computeRanges, type ItemChance, type ItemRange } from "./CaseRanges"

export interface NewItem {
  readonly name: string
  readonly rarity: Rarity
  readonly valueCents: bigint
  readonly imageUrl: string
  readonly isUpgradable: boolean
}

/** Fields of an item to change; absent ones are kept. */
export type ItemUpdate = Partial<NewItem>

export interface NewCase {
  readonly name: string
  readonly slug: string
  readonly description?: string | null | undefined
  readonly imageUrl: string
  readonly priceCents: bigint
  /** Only EVENT is ever chosen; any other value, or none, means the category follows from the price (D6). */
  readonly category?: CaseCategory | undefined
  readonly isActive?: boolean | undefined
  readonly isFeatured?: boolean | undefined
  readonly houseEdge?: number | undefined
  readonly flipChance?: number | undefined
  readonly items: ReadonlyArray<ItemChance<ItemId>>
}

/**
 * Fields of a case to change; absent ones are kept. New `items` replace all the old ones, ranges
 * recomputed. `category`: EVENT makes the case EVENT; any other value re-derives it from the price;
 * absent keeps an EVENT case EVENT and re-derives any other from the (new) price.
 */
export type CaseUpdate = Partial<NewCase>

export interface CaseWithItems {
  readonly case: Case
  /** In roll order (ascending rangeStart). */
  readonly items: ReadonlyArray<CaseItem>
}

/** One item of a case: its range, and the item as a player sees it. */
export class CaseItemDetail extends Schema.Class<CaseItemDetail>("CaseItemDetail")({
  ...CaseItem.fields,
  name: Schema.String,
  rarity: Rarity,
  valueCents: Schema.BigInt,
  imageUrl: Schema.String
}) {}

/** An active case and its items in roll order (ascending rangeStart), ready for `itemForRoll`. */
export interface ActiveCase {
  readonly case: Case
  readonly items: ReadonlyArray<CaseItemDetail>
}

export interface PageRequest {
  /** From 1. */
  readonly page: number
  readonly limit: number
}

export interface ActiveCaseQuery extends PageRequest {
  readonly category?: CaseCategory | undefined
  readonly featured?: boolean | undefined
}

/** An entry of the public case list (SPEC `GET /cases`); `bestItem` is its most valuable item. */
export interface CaseSummary {
  readonly id: CaseId
  readonly name: string
  readonly slug: string
  readonly imageUrl: string
  readonly priceCents: bigint
  readonly category: CaseCategory
  readonly isFeatured: boolean
  readonly itemCount: number
  readonly bestItem: { readonly name: string; readonly rarity: Rarity; readonly valueCents: bigint }
}

export interface Page<A> {
  readonly total: number
  readonly page: number
  readonly entries: ReadonlyArray<A>
}

const CaseSummaryRow = Schema.Struct({
  id: CaseId,
  name: Schema.String,
  slug: Schema.String,
  imageUrl: Schema.String,
  priceCents: Schema.BigInt,
  category: CaseCategory,
  isFeatured: Schema.Boolean,
  itemCount: Schema.Number,
  bestName: Schema.String,
  bestRarity: Rarity,
  bestValueCents: Schema.BigInt
})

const CaseItemOfCase = Schema.Struct({ caseId: CaseId, ...CaseItem.fields })

const PageWindow = Schema.Struct({ limit: Schema.Number, offset: Schema.Number })
const windowOf = (page: PageRequest) => ({ limit: page.limit, offset: (page.page - 1) * page.limit })

/** A unique index refused the write (PostgreSQL 23505). */
const isUniqueViolation = (error: SqlError): boolean => {
  const cause: unknown = error.cause
  return typeof cause === "object" && cause !== null && (cause as { readonly code?: unknown }).code === "23505"
}

const slugTaken = () => new Conflict({ message: "Slug already exists" })

/** The record without its undefined fields: what a partial update sets. */
const definedOnly = <A extends Record<string, unknown>>(record: A): Partial<A> =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Partial<A>

/** D6: EVENT only when asked for; otherwise the price decides. */
const categoryFor = (asked: CaseCategory | undefined, priceCents: bigint): CaseCategory =>
  asked === "EVENT" ? "EVENT" : categoryForPrice(priceCents)

const itemColumns = "id, name, rarity, value_cents, image_url, is_upgradable"
const caseColumns =
  "id, name, slug, description, image_url, price_cents, category, is_active, is_featured, house_edge, flip_chance, created_at, updated_at"

export class Catalog extends Effect.Service<Catalog>()("app/Catalog", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertItem = SqlSchema.single({
      Request: Schema.Struct({
        name: Schema.String,
        rarity: Schema.String,
        valueCents: Schema.BigInt,
        imageUrl: Schema.String,
        isUpgradable: Schema.Boolean,
        now: Schema.DateFromSelf
      }),
      Result: Item,
      execute: (row) =>
        sql`INSERT INTO items (name, rarity, value_cents, image_url, is_upgradable, created_at, updated_at)
            VALUES (${row.name}, ${row.rarity}, ${row.valueCents}, ${row.imageUrl}, ${row.isUpgradable}, ${row.now}, ${row.now})
            RETURNING ${sql.literal(itemColumns)}`
    })

    const existingItemIds = SqlSchema.findAll({
      Request: Schema.Array(Schema.BigInt),
      Result: Schema.Struct({ id: ItemId }),
      execute: (ids) => sql`SELECT id FROM items WHERE id IN ${sql.in(ids)}`
    })

    /** Nothing when the slug is taken (ON CONFLICT), so a racing duplicate is a Conflict too. */
    const insertCase = SqlSchema.findOne({
      Request: Schema.Struct({
        name: Schema.String,
        slug: Schema.String,
        description: Schema.NullOr(Schema.String),
        imageUrl: Schema.String,
        priceCents: Schema.BigInt,
        category: Schema.String,
        isActive: Schema.Boolean,
        isFeatured: Schema.Boolean,
        houseEdge: Schema.Number,
        flipChance: Schema.Number,
        now: Schema.DateFromSelf
      }),
      Result: Case,
      execute: (row) =>
        sql`INSERT INTO cases (name, slug, description, image_url, price_cents, category, is_active, is_featured,
                               house_edge, flip_chance, created_at, updated_at)
            VALUES (${row.name}, ${row.slug}, ${row.description}, ${row.imageUrl}, ${row.priceCents}, ${row.category},
                    ${row.isActive}, ${row.isFeatured}, ${row.houseEdge}, ${row.flipChance}, ${row.now}, ${row.now})
            ON CONFLICT (slug) DO NOTHING
            RETURNING ${sql.literal(caseColumns)}`
    })

    const caseItemsOf = SqlSchema.findAll({
      Request: CaseId,
      Result: CaseItem,
      execute: (caseId) =>
        sql`SELECT item_id, drop_chance, range_start, range_end FROM case_items
            WHERE case_id = ${caseId} ORDER BY range_start`
    })

    /** 422 on `items` when some item does not exist. */
    const requireItems = (items: ReadonlyArray<ItemChance<ItemId>>) =>
      Effect.gen(function*() {
        const known = new Set((yield* existingItemIds(items.map((i) => i.itemId))).map((row) => row.id))
        const unknown = items.filter((i) => !known.has(i.itemId)).map((i) => String(i.itemId))
        if (unknown.length > 0) {
          return yield* new UnprocessableEntity({
            message: "Invalid case items",
            errors: [new FieldError({ field: "items", message: `Unknown item ids: ${unknown.join(", ")}` })]
          })
        }
      })

    const insertRanges = (caseId: CaseId, ranges: ReadonlyArray<ItemRange<ItemId>>) =>
      sql`INSERT INTO case_items ${
        sql.insert(ranges.map((range) => ({
          caseId,
          itemId: range.itemId,
          // Exact decimal text for numeric(8, 7): never a binary float on the way in.
          dropChance: unitsToDecimal(chanceUnits(range.dropChance)!),
          rangeStart: range.rangeStart,
          rangeEnd: range.rangeEnd
        })))
      }`

    const createItem = Effect.fn("Catalog.createItem")(function*(input: NewItem) {
      const now = new Date(yield* Clock.currentTimeMillis)
      return yield* insertItem({ ...input, now }).pipe(Effect.orDie)
    })

    const createCase = Effect.fn("Catalog.createCase")(function*(input: NewCase) {
      const ranges = computeRanges(input.items)
      if (Either.isLeft(ranges)) return yield* ranges.left
      const now = new Date(yield* Clock.currentTimeMillis)
      return yield* Effect.gen(function*() {
        yield* requireItems(input.items)
        const created = yield* insertCase({
          name: input.name,
          slug: input.slug,
          description: input.description ?? null,
          imageUrl: input.imageUrl,
          priceCents: input.priceCents,
          category: categoryFor(input.category, input.priceCents),
          isActive: input.isActive ?? true,
          isFeatured: input.isFeatured ?? false,
          houseEdge: input.houseEdge ?? 0.1,
          flipChance: input.flipChance ?? 0,
          now
        })
        if (created._tag === "None") return yield* slugTaken()
        const caseId = created.value.id
        yield* insertRanges(caseId, ranges.right)
        return { case: created.value, items: yield* caseItemsOf(caseId) } satisfies CaseWithItems
      }).pipe(sql.withTransaction, Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die }))
    })

    const findItem = SqlSchema.findOne({
      Request: ItemId,
      Result: Item,
      execute: (id) => sql`SELECT ${sql.literal(itemColumns)} FROM items WHERE id = ${id}`
    })

    /** Changes the given fields of an item; 404 `Item not found` when it does not exist. */
    const updateItem = Effect.fn("Catalog.updateItem")(function*(id: ItemId, update: ItemUpdate) {
      const changes = definedOnly({ ...update })
      const now = new Date(yield* Clock.currentTimeMillis)
      const updated = Object.keys(changes).length === 0
        ? yield* findItem(id)
        : yield* SqlSchema.findOne({
          Request: ItemId,
          Result: Item,
          execute: (id) =>
            sql`UPDATE items SET ${sql.update({ ...changes, updatedAt: now })} WHERE id = ${id}
                RETURNING ${sql.literal(itemColumns)}`
        })(id)
      if (Option.isNone(updated)) return yield* NotFound.of("Item")
      return updated.value
    }, Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die }))

    /** Every item, by id (D6 `GET /admin/items`). */
    const listItems = Effect.fn("Catalog.listItems")(function*(page: PageRequest) {
      const entries = yield* SqlSchema.findAll({
        Request: PageWindow,
        Result: Item,
        execute: ({ limit, offset }) =>
          sql`SELECT ${sql.literal(itemColumns)} FROM items ORDER BY id LIMIT ${limit} OFFSET ${offset}`
      })(windowOf(page))
      const [count] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM items`
      return { entries, total: count!.n, page: page.page } satisfies Page<Item>
    }, Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die }))

    const lockCase = SqlSchema.findOne({
      Request: CaseId,
      Result: Case,
      execute: (id) => sql`SELECT ${sql.literal(caseColumns)} FROM cases WHERE id = ${id} FOR UPDATE`
    })

    /**
     * Changes the given fields of a case in one transaction; new `items` replace the old ones with
     * recomputed ranges. 404 `Case not found`, 409 `Slug already exists`, 422 on `items`.
     */
    const updateCase = Effect.fn("Catalog.updateCase")(function*(id: CaseId, update: CaseUpdate) {
      let ranges: ReadonlyArray<ItemRange<ItemId>> | undefined
      if (update.items !== undefined) {
        const computed = computeRanges(update.items)
        if (Either.isLeft(computed)) return yield* computed.left
        ranges = computed.right
      }
      const now = new Date(yield* Clock.currentTimeMillis)
      return yield* Effect.gen(function*() {
        const found = yield* lockCase(id)
        if (Option.isNone(found)) return yield* NotFound.of("Case")
        const current = found.value
        if (update.slug !== undefined && update.slug !== current.slug) {
          const taken = yield* sql`SELECT 1 FROM cases WHERE slug = ${update.slug} AND id <> ${id}`
          if (taken.length > 0) return yield* slugTaken()
        }
        if (update.items !== undefined && ranges !== undefined) {
          yield* requireItems(update.items)
          yield* sql`DELETE FROM case_items WHERE case_id = ${id}`
          yield* insertRanges(id, ranges)
        }
        const priceCents = update.priceCents ?? current.priceCents
        const category = update.category === undefined && current.category === "EVENT"
          ? "EVENT"
          : categoryFor(update.category, priceCents)
        const changes = definedOnly({
          name: update.name,
          slug: update.slug,
          description: update.description,
          imageUrl: update.imageUrl,
          priceCents: update.priceCents,
          isActive: update.isActive,
          isFeatured: update.isFeatured,
          houseEdge: update.houseEdge,
          flipChance: update.flipChance
        })
        const updated = yield* SqlSchema.single({
          Request: CaseId,
          Result: Case,
          execute: (id) =>
            sql`UPDATE cases SET ${sql.update({ ...changes, category, updatedAt: now })} WHERE id = ${id}
                RETURNING ${sql.literal(caseColumns)}`
        })(id)
        return { case: updated, items: yield* caseItemsOf(id) } satisfies CaseWithItems
      }).pipe(
        sql.withTransaction,
        Effect.catchTags({
          // A slug taken by a concurrent save between the check and the update.
          SqlError: (error) => isUniqueViolation(error) ? Effect.fail(slugTaken()) : Effect.die(error),
          ParseError: Effect.die,
          NoSuchElementException: Effect.die
        })
      )
    })

    const casesPage = SqlSchema.findAll({
      Request: PageWindow,
      Result: Case,
      execute: ({ limit, offset }) =>
        sql`SELECT ${sql.literal(caseColumns)} FROM cases ORDER BY id LIMIT ${limit} OFFSET ${offset}`
    })

    const itemsOfCases = SqlSchema.findAll({
      Request: Schema.Array(CaseId),
      Result: CaseItemOfCase,
      execute: (ids) =>
        sql`SELECT case_id, item_id, drop_chance, range_start, range_end FROM case_items
            WHERE case_id IN ${sql.in(ids)} ORDER BY case_id, range_start`
    })

    /** Every case with its items, inactive ones included, by id (D6 `GET /admin/cases`). */
    const listCases = Effect.fn("Catalog.listCases")(function*(page: PageRequest) {
      const cases = yield* casesPage(windowOf(page))
      const items = cases.length === 0 ? [] : yield* itemsOfCases(cases.map((c) => c.id))
      const entries = cases.map((kase): CaseWithItems => ({
        case: kase,
        items: items.filter((i) => i.caseId === kase.id).map(({ caseId: _, ...item }) => new CaseItem(item))
      }))
      const [count] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM cases`
      return { entries, total: count!.n, page: page.page } satisfies Page<CaseWithItems>
    }, Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die }))

    /** Active cases that match the query; a case without items is never listed (it cannot be opened). */
    const activeWhere = (query: ActiveCaseQuery) =>
      sql.and([
        sql`c.is_active`,
        sql`EXISTS (SELECT 1 FROM case_items ci WHERE ci.case_id = c.id)`,
        ...(query.category === undefined ? [] : [sql`c.category = ${query.category}`]),
        ...(query.featured === undefined ? [] : [sql`c.is_featured = ${query.featured}`])
      ])

    /**
     * SPEC `GET /cases` (D6): active cases, featured first, then by price, then by id; each with its
     * item count and its most valuable item (equal values: the lowest item id).
     */
    const listActiveCases = Effect.fn("Catalog.listActiveCases")(function*(query: ActiveCaseQuery) {
      const { limit, offset } = windowOf(query)
      const rows = yield* SqlSchema.findAll({
        Request: Schema.Void,
        Result: CaseSummaryRow,
        execute: () =>
          sql`SELECT c.id, c.name, c.slug, c.image_url, c.price_cents, c.category, c.is_featured,
                     (SELECT count(*)::int FROM case_items n WHERE n.case_id = c.id) AS item_count,
                     best.name AS best_name, best.rarity AS best_rarity, best.value_cents AS best_value_cents
              FROM cases c
              CROSS JOIN LATERAL (
                SELECT i.name, i.rarity, i.value_cents FROM case_items b JOIN items i ON i.id = b.item_id
                WHERE b.case_id = c.id ORDER BY i.value_cents DESC, i.id LIMIT 1
              ) best
              WHERE ${activeWhere(query)}
              ORDER BY c.is_featured DESC, c.price_cents, c.id
              LIMIT ${limit} OFFSET ${offset}`
      })(undefined)
      const [count] = yield* sql<{ readonly n: number }>`
        SELECT count(*)::int AS n FROM cases c WHERE ${activeWhere(query)}`
      const entries = rows.map(({ bestName, bestRarity, bestValueCents, ...summary }): CaseSummary => ({
        ...summary,
        bestItem: { name: bestName, rarity: bestRarity, valueCents: bestValueCents }
      }))
      return { entries, total: count!.n, page: query.page } satisfies Page<CaseSummary>
    }, Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die }))

    const activeCase = SqlSchema.findOne({
      Request: CaseId,
      Result: Case,
      execute: (id) => sql`SELECT ${sql.literal(caseColumns)} FROM cases WHERE id = ${id} AND is_active`
    })

    const caseItemDetails = SqlSchema.findAll({
      Request: CaseId,
      Result: CaseItemDetail,
      execute: (id) =>
        sql`SELECT ci.item_id, ci.drop_chance, ci.range_start, ci.range_end, i.name, i.rarity, i.value_cents, i.image_url
            FROM case_items ci JOIN items i ON i.id = ci.item_id
            WHERE ci.case_id = ${id} ORDER BY ci.range_start`
    })

    /**
     * An active case with its items and ranges in roll order, for `GET /cases/:id` and openings.
     * Absent or inactive: CaseNotFound (SPEC open rule 2).
     */
    const findActiveCase = Effect.fn("Catalog.findActiveCase")(function*(caseId: CaseId) {
      const found = yield* activeCase(caseId)
      if (Option.isNone(found)) return yield* new CaseNotFound()
      return { case: found.value, items: yield* caseItemDetails(caseId) } satisfies ActiveCase
    }, Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die }))

    /** The items of a case in roll order, ready for `itemForRoll`. */
    const caseItems = Effect.fn("Catalog.caseItems")(function*(caseId: CaseId) {
      return yield* caseItemsOf(caseId).pipe(Effect.orDie)
    })

    const isEmpty = sql<{ readonly empty: boolean }>`
      SELECT NOT EXISTS (SELECT 1 FROM items) AND NOT EXISTS (SELECT 1 FROM cases) AS empty`.pipe(
      Effect.map((rows) => rows[0]!.empty),
      Effect.orDie,
      Effect.withSpan("Catalog.isEmpty")
    )

    return {
      createItem,
      updateItem,
      listItems,
      createCase,
      updateCase,
      listCases,
      listActiveCases,
      findActiveCase,
      caseItems,
      isEmpty
    } as const
  })
}) {}
