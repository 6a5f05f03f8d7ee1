/**
 * The catalog's tables: items, cases and their case_items with roll ranges
 * (docs/rules.md#catalog-and-case-economics). Ranges are computed here, when a case's items are saved, so every
 * saved case covers 1..10000000 exactly.
 *
 * Administrators create, update and list everything, inactive cases included. Players see active
 * cases only (`listActiveCases`, `findActiveCase`): an inactive case is as absent as a missing one.
 *
 * Economics (docs/rules.md#house-edge-rule, src/services/games/CaseEconomics.ts): every save computes what the case
 * pays back from its roll blocks and its items' current values. A save that leaves the case paying back more than
 * 1 - houseEdge of its price is refused (422 with the figures) unless the case is promotional; the one
 * exception is taking an active case out of play (isActive false), so an operator can always stop the
 * losses. Item value changes are never refused: a case they push over its edge shows as a CRITICAL
 * dashboard alert (`casesOverHouseEdge`) and is audited.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either, Schema } from "effect"
import {
  type ActiveCaseQuery,
  Case,
  CaseCategory,
  CaseItem,
  type CaseItemInput,
  CaseNotFound,
  type CaseSummary,
  type CaseUpdate,
  chanceUnits,
  InvalidCaseItems,
  Item,
  type ItemUpdate,
  type NewCase,
  type NewItem,
  Rarity,
  SlugTaken,
  unitsToDecimal
} from "../../schema/games/Catalog"
import { FieldError, NotFound } from "../../schema/platform/Errors"
import { CaseId, ItemId, type UserId } from "../../schema/platform/Ids"
import type { PageRequest } from "../../schema/platform/Pagination"
import { Audit } from "../admin/Audit"
import { caseEconomics, type Economics, overHouseEdge, type Payout } from "./CaseEconomics"
import { categoryForPrice, computeRanges, type ItemRange, resolveDropChances } from "./CaseRanges"
import {
  execute,
  firstOf,
  inTransaction,
  onUniqueViolation,
  type PageOf,
  pageOf,
  rowCountOf,
  rowsOf,
  singleOf
} from "../platform/SqlRows"

export interface CaseWithItems {
  readonly case: Case
  /** In roll order (ascending rangeStart). */
  readonly items: ReadonlyArray<CaseItem>
  /** What it pays back, from its blocks and its items' current values (docs/rules.md#house-edge-rule). */
  readonly economics: Economics
}

/** An active, non-promotional case that pays back more than its house edge allows (docs/rules.md#house-edge-rule). */
interface CaseOverHouseEdge {
  readonly id: CaseId
  readonly name: string
  readonly slug: string
  readonly priceCents: bigint
  readonly houseEdge: number
  readonly economics: Economics
}

/** One item of a case: its range, and the item as a player sees it. */
class CaseItemDetail extends Schema.Class<CaseItemDetail>("CaseItemDetail")({
  ...CaseItem.fields,
  name: Schema.String,
  rarity: Rarity,
  valueCents: Schema.BigInt,
  imageUrl: Schema.String
}) {}

/** An active case and its items in roll order (ascending rangeStart), ready for `itemForRoll`. */
interface ActiveCase {
  readonly case: Case
  readonly items: ReadonlyArray<CaseItemDetail>
  /** What it pays back, from its blocks and its items' current values (docs/rules.md#house-edge-rule). */
  readonly economics: Economics
}

const CaseSummaryRow = Schema.Struct({
  id: CaseId,
  name: Schema.String,
  slug: Schema.String,
  imageUrl: Schema.String,
  priceCents: Schema.BigInt,
  category: CaseCategory,
  isFeatured: Schema.Boolean,
  houseEdge: Schema.Number,
  flipChance: Schema.Number,
  itemCount: Schema.Number,
  bestName: Schema.String,
  bestRarity: Rarity,
  bestValueCents: Schema.BigInt,
  /** Each roll block's size and its item's value, in the same order: what `rtp` is computed from. */
  blockUnits: Schema.Array(Schema.Number),
  blockValueCents: Schema.Array(Schema.BigInt)
})

/** A stored range with its item's current value. */
const PricedCaseItem = Schema.Struct({ ...CaseItem.fields, valueCents: Schema.BigInt })
type PricedCaseItem = typeof PricedCaseItem.Type
const PricedCaseItemOfCase = Schema.Struct({ caseId: CaseId, ...PricedCaseItem.fields })

const ItemFacts = Schema.Struct({ id: ItemId, rarity: Rarity, valueCents: Schema.BigInt })

/** A range of an active, non-promotional case, with the case's terms on each row. */
const CaseTermsRow = Schema.Struct({
  caseId: CaseId,
  name: Schema.String,
  slug: Schema.String,
  priceCents: Schema.BigInt,
  houseEdge: Schema.Number,
  flipChance: Schema.Number,
  rangeStart: Schema.Number,
  rangeEnd: Schema.Number,
  valueCents: Schema.BigInt
})

const EmptyRow = Schema.Struct({ empty: Schema.Boolean })

const payoutOf = (range: { readonly rangeStart: number; readonly rangeEnd: number; readonly valueCents: bigint }): Payout => ({
  units: range.rangeEnd - range.rangeStart + 1,
  valueCents: range.valueCents
})

const economicsOf = (
  kase: { readonly priceCents: bigint; readonly houseEdge: number; readonly flipChance: number },
  payouts: ReadonlyArray<Payout>
) => caseEconomics({ priceCents: kase.priceCents, houseEdge: kase.houseEdge, flipChance: kase.flipChance, items: payouts })

/** The figures an audit entry keeps of a case's economics. */
const auditFigures = (economics: Economics) => ({
  expectedValueCents: economics.expectedValueExact,
  rtp: economics.rtp
})

const withEconomics = (kase: Case, items: ReadonlyArray<PricedCaseItem>): CaseWithItems => ({
  case: kase,
  items: items.map(({ valueCents: _, ...item }) => new CaseItem(item)),
  economics: economicsOf(kase, items.map(payoutOf))
})

/** A slug taken by a concurrent save between the check and the update. */
const slugRace = onUniqueViolation(() => Effect.fail(new SlugTaken()))

/** The record without its undefined fields: what a partial update sets. */
const definedOnly = <A extends Record<string, unknown>>(record: A): Partial<A> =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as Partial<A>

/** docs/rules.md#case-categories: EVENT only when asked for; otherwise the price decides. */
const categoryFor = (asked: CaseCategory | undefined, priceCents: bigint): CaseCategory =>
  asked === "EVENT" ? "EVENT" : categoryForPrice(priceCents)

const itemColumns = "id, name, rarity, value_cents, image_url, is_upgradable"
const caseColumns =
  "id, name, slug, description, image_url, price_cents, category, is_active, is_featured, house_edge, flip_chance, promotional, created_at, updated_at"

export class Catalog extends Effect.Service<Catalog>()("app/Catalog", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const transaction = inTransaction(sql)
    const audit = yield* Audit

    const caseItemsOf = (caseId: CaseId) =>
      rowsOf(PricedCaseItem, sql`
        SELECT ci.item_id, ci.drop_chance, ci.range_start, ci.range_end, i.value_cents
        FROM case_items ci JOIN items i ON i.id = ci.item_id
        WHERE ci.case_id = ${caseId} ORDER BY ci.range_start`)

    /**
     * The ranges of new items for a case (docs/rules.md#case-ranges; missing chances from the rarities,
     * docs/rules.md#missing-drop-chances) and what each block pays; 422 on `items` when an item does not exist
     * or the chances do not cover 1..10000000.
     */
    const rangesFor = Effect.fnUntraced(function*(items: ReadonlyArray<CaseItemInput>) {
      const facts = new Map(
        (items.length === 0
          ? []
          : yield* rowsOf(ItemFacts, sql`SELECT id, rarity, value_cents FROM items WHERE id = ANY(${items.map((i) => i.itemId)}::bigint[])`))
          .map((row) => [row.id, row])
      )
      const unknown = items.filter((i) => !facts.has(i.itemId)).map((i) => String(i.itemId))
      if (unknown.length > 0) {
        return yield* new InvalidCaseItems({
          errors: [new FieldError({ field: "items", message: `Unknown item ids: ${unknown.join(", ")}` })]
        })
      }
      const chances = resolveDropChances(
        items.map((i) => ({ itemId: i.itemId, rarity: facts.get(i.itemId)!.rarity, dropChance: i.dropChance }))
      )
      if (Either.isLeft(chances)) return yield* chances.left
      const ranges = computeRanges(chances.right)
      if (Either.isLeft(ranges)) return yield* ranges.left
      return {
        ranges: ranges.right,
        payouts: ranges.right.map((range) => payoutOf({ ...range, valueCents: facts.get(range.itemId)!.valueCents }))
      }
    })

    /**
     * The promotional flag is audited whenever a case is saved with it or it changes
     * (docs/rules.md#house-edge-rule).
     */
    const auditPromotional = (actor: UserId | null, kase: Case, economics: Economics) =>
      audit.record({
        userId: actor,
        action: "CASE_PROMOTIONAL",
        entityType: "Case",
        entityId: kase.id,
        metadata: { promotional: kase.promotional, houseEdge: kase.houseEdge, ...auditFigures(economics) }
      })

    /** One statement text whatever the number of items: the columns as arrays (docs/decisions.md#prepared-statements). */
    const insertRanges = (caseId: CaseId, ranges: ReadonlyArray<ItemRange<ItemId>>) =>
      sql`INSERT INTO case_items (case_id, item_id, drop_chance, range_start, range_end)
          SELECT ${caseId}::bigint, r.item_id, r.drop_chance, r.range_start, r.range_end
          FROM unnest(
            ${ranges.map((range) => range.itemId)}::bigint[],
            -- Exact decimal text for numeric(8, 7): never a binary float on the way in.
            ${ranges.map((range) => unitsToDecimal(chanceUnits(range.dropChance)!))}::numeric[],
            ${ranges.map((range) => range.rangeStart)}::integer[],
            ${ranges.map((range) => range.rangeEnd)}::integer[]
          ) AS r(item_id, drop_chance, range_start, range_end)`

    const createItem = Effect.fn("Catalog.createItem")(function*(input: NewItem, actor: UserId | null = null) {
      const now = new Date(yield* Clock.currentTimeMillis)
      return yield* createItemInTransaction(input, now, actor).pipe(transaction)
    })

    /** What `createItem` runs in its transaction: the item inserted, and its audit. */
    const createItemInTransaction = Effect.fnUntraced(function*(input: NewItem, now: Date, actor: UserId | null) {
      const created = yield* singleOf(Item, sql`
        INSERT INTO items (name, rarity, value_cents, image_url, is_upgradable, created_at, updated_at)
        VALUES (${input.name}, ${input.rarity}, ${input.valueCents}, ${input.imageUrl}, ${input.isUpgradable}, ${now}, ${now})
        RETURNING ${sql.literal(itemColumns)}`)
      yield* audit.record({
        userId: actor,
        action: "ITEM_CREATED",
        entityType: "Item",
        entityId: created.id,
        metadata: { name: created.name, rarity: created.rarity, valueCents: Number(created.valueCents) }
      })
      return created
    })

    /**
     * A new case with its ranges, in one transaction. 422 on `items` (docs/rules.md#case-validation) or over its house
     * edge unless promotional (docs/rules.md#house-edge-rule); 409 `Slug already exists`. `actor`: the
     * administrator, for the audit.
     */
    const createCase = Effect.fn("Catalog.createCase")(function*(input: NewCase, actor: UserId | null = null) {
      const now = new Date(yield* Clock.currentTimeMillis)
      return yield* createCaseInTransaction(input, now, actor).pipe(transaction)
    })

    /** What `createCase` runs in its transaction: the case and its ranges (over its edge: only if promotional). */
    const createCaseInTransaction = Effect.fnUntraced(function*(input: NewCase, now: Date, actor: UserId | null) {
      const { payouts, ranges } = yield* rangesFor(input.items)
      const terms = {
        priceCents: input.priceCents,
        houseEdge: input.houseEdge ?? 0.1,
        flipChance: input.flipChance ?? 0
      }
      const promotional = input.promotional ?? false
      const economics = economicsOf(terms, payouts)
      if (economics.overHouseEdge && !promotional) return yield* overHouseEdge({ ...terms, items: payouts }, economics)
      // Nothing when the slug is taken (ON CONFLICT), so a racing duplicate is SlugTaken too.
      const created = yield* firstOf(Case, sql`
        INSERT INTO cases (name, slug, description, image_url, price_cents, category, is_active, is_featured,
                           house_edge, flip_chance, promotional, created_at, updated_at)
        VALUES (${input.name}, ${input.slug}, ${input.description ?? null}, ${input.imageUrl}, ${input.priceCents},
                ${categoryFor(input.category, input.priceCents)}, ${input.isActive ?? true}, ${input.isFeatured ?? false},
                ${terms.houseEdge}, ${terms.flipChance}, ${promotional}, ${now}, ${now})
        ON CONFLICT (slug) DO NOTHING
        RETURNING ${sql.literal(caseColumns)}`)
      if (created === undefined) return yield* new SlugTaken()
      yield* insertRanges(created.id, ranges)
      if (promotional) yield* auditPromotional(actor, created, economics)
      return withEconomics(created, yield* caseItemsOf(created.id))
    })

    const findItem = (id: ItemId) => firstOf(Item, sql`SELECT ${sql.literal(itemColumns)} FROM items WHERE id = ${id}`)

    /**
     * Cases that pay back more than their house edge allows, among the active, non-promotional ones
     * (those holding `itemId` when given), by id.
     */
    const overEdge = Effect.fnUntraced(function*(itemId?: ItemId) {
      const rows = yield* rowsOf(CaseTermsRow, sql`
          SELECT c.id AS case_id, c.name, c.slug, c.price_cents, c.house_edge, c.flip_chance,
                 ci.range_start, ci.range_end, i.value_cents
          FROM cases c JOIN case_items ci ON ci.case_id = c.id JOIN items i ON i.id = ci.item_id
          WHERE c.is_active AND NOT c.promotional
            ${itemId === undefined ? sql`` : sql`AND c.id IN (SELECT case_id FROM case_items WHERE item_id = ${itemId})`}
          ORDER BY c.id, ci.range_start`)
      // Each case's terms (from its first row) and what its ranges pay.
      const byCase = new Map<CaseId, { readonly terms: typeof CaseTermsRow.Type; readonly payouts: Array<Payout> }>()
      for (const row of rows) {
        const kase = byCase.get(row.caseId) ?? { terms: row, payouts: [] }
        kase.payouts.push(payoutOf(row))
        byCase.set(row.caseId, kase)
      }
      const over: Array<CaseOverHouseEdge> = []
      for (const [id, { payouts, terms }] of byCase) {
        const { houseEdge, name, priceCents, slug } = terms
        const economics = economicsOf(terms, payouts)
        if (economics.overHouseEdge) over.push({ id, name, slug, priceCents, houseEdge, economics })
      }
      return over
    })

    /**
     * The dashboard's alert (docs/rules.md#dashboard-alerts): every active, non-promotional case over its house
     * edge.
     */
    const casesOverHouseEdge = Effect.fn("Catalog.casesOverHouseEdge")(function*() {
      return yield* overEdge()
    })

    /**
     * Changes the given fields of an item; 404 `Item not found` when it does not exist. A value change
     * is never refused (docs/rules.md#house-edge-rule): each active, non-promotional case it pushes over its
     * house edge is audited (CASE_OVER_HOUSE_EDGE) and logged here, and shows as a dashboard alert until it is
     * dealt with.
     */
    const updateItem = Effect.fn("Catalog.updateItem")(function*(id: ItemId, update: ItemUpdate, actor: UserId | null = null) {
      const changes = definedOnly({ ...update })
      const now = new Date(yield* Clock.currentTimeMillis)
      if (Object.keys(changes).length === 0) {
        const found = yield* findItem(id)
        if (found === undefined) return yield* NotFound.of("Item")
        return found
      }
      return yield* updateItemInTransaction(id, update, changes, now, actor).pipe(transaction)
    })

    /** What `updateItem` runs in its transaction: the change, its audit, and the cases a revaluation pushes over. */
    const updateItemInTransaction = Effect.fnUntraced(function*(
      id: ItemId,
      update: ItemUpdate,
      changes: Partial<ItemUpdate>,
      now: Date,
      actor: UserId | null
    ) {
      const revalued = update.valueCents !== undefined
      const before = revalued ? yield* findItem(id) : undefined
      const overBefore = new Set(revalued ? (yield* overEdge(id)).map((kase) => kase.id) : [])
      const updated = yield* firstOf(Item, sql`
        UPDATE items SET ${sql.update({ ...changes, updatedAt: now })} WHERE id = ${id}
        RETURNING ${sql.literal(itemColumns)}`)
      if (updated === undefined) return yield* NotFound.of("Item")
      const pushed = revalued ? (yield* overEdge(id)).filter((kase) => !overBefore.has(kase.id)) : []
      yield* audit.record({
        userId: actor,
        action: "ITEM_UPDATED",
        entityType: "Item",
        entityId: id,
        metadata: {
          changes: Object.keys(changes),
          ...(before === undefined ? {} : { previousValueCents: Number(before.valueCents) }),
          valueCents: Number(updated.valueCents),
          casesPushedOverHouseEdge: pushed.map((kase) => String(kase.id))
        }
      })
      for (const kase of pushed) {
        yield* audit.record({
          userId: actor,
          action: "CASE_OVER_HOUSE_EDGE",
          entityType: "Case",
          entityId: kase.id,
          metadata: { itemId: String(id), valueCents: Number(updated.valueCents), houseEdge: kase.houseEdge, ...auditFigures(kase.economics) }
        })
        yield* Effect.logError(
          `Item ${id} revalued: case ${kase.id} (${kase.slug}) now pays back ${kase.economics.rtp} of its price, ` +
            `more than its house edge ${kase.houseEdge} allows`
        )
      }
      return updated
    })

    /** Every item, by id (`GET /admin/items`, docs/rules.md#catalog-administration). */
    const listItems = Effect.fn("Catalog.listItems")(function*(page: PageRequest) {
      const { items, total } = yield* pageOf(
        Item,
        page,
        ({ limit, offset }) => sql`SELECT ${sql.literal(itemColumns)} FROM items ORDER BY id LIMIT ${limit} OFFSET ${offset}`,
        sql`SELECT count(*) AS n FROM items`
      )
      return { items, total, page: page.page } satisfies PageOf<Item>
    })

    /**
     * Changes the given fields of a case in one transaction; new `items` replace the old ones with
     * recomputed ranges. 404 `Case not found`, 409 `Slug already exists`, 422 on `items`, and 422 when
     * the case it leaves pays back more than its house edge allows (docs/rules.md#house-edge-rule) unless it is
     * promotional or the change takes it out of play.
     */
    const updateCase = Effect.fn("Catalog.updateCase")(function*(id: CaseId, update: CaseUpdate, actor: UserId | null = null) {
      const now = new Date(yield* Clock.currentTimeMillis)
      return yield* updateCaseInTransaction(id, update, now, actor).pipe(slugRace, transaction)
    })

    /** What `updateCase` runs in its transaction: the case locked, checked against its house edge, then changed. */
    const updateCaseInTransaction = Effect.fnUntraced(function*(
      id: CaseId,
      update: CaseUpdate,
      now: Date,
      actor: UserId | null
    ) {
      const current = yield* firstOf(Case, sql`SELECT ${sql.literal(caseColumns)} FROM cases WHERE id = ${id} FOR UPDATE`)
      if (current === undefined) return yield* new CaseNotFound()
      if (update.slug !== undefined && update.slug !== current.slug) {
        const taken = yield* rowCountOf(sql`SELECT 1 FROM cases WHERE slug = ${update.slug} AND id <> ${id}`)
        if (taken > 0) return yield* new SlugTaken()
      }
      const replaced = update.items === undefined ? undefined : yield* rangesFor(update.items)
      const terms = {
        priceCents: update.priceCents ?? current.priceCents,
        houseEdge: update.houseEdge ?? current.houseEdge,
        flipChance: update.flipChance ?? current.flipChance
      }
      const payouts = replaced?.payouts ?? (yield* caseItemsOf(id)).map(payoutOf)
      const economics = economicsOf(terms, payouts)
      const promotional = update.promotional ?? current.promotional
      const outOfPlay = current.isActive && update.isActive === false
      if (economics.overHouseEdge && !promotional && !outOfPlay) {
        return yield* overHouseEdge({ ...terms, items: payouts }, economics)
      }
      if (replaced !== undefined) {
        yield* execute(sql`DELETE FROM case_items WHERE case_id = ${id}`)
        yield* insertRanges(id, replaced.ranges)
      }
      const category = update.category === undefined && current.category === "EVENT"
        ? "EVENT"
        : categoryFor(update.category, terms.priceCents)
      const changes = definedOnly({
        name: update.name,
        slug: update.slug,
        description: update.description,
        imageUrl: update.imageUrl,
        priceCents: update.priceCents,
        isActive: update.isActive,
        isFeatured: update.isFeatured,
        houseEdge: update.houseEdge,
        flipChance: update.flipChance,
        promotional: update.promotional
      })
      const updated = yield* singleOf(
        Case,
        sql`UPDATE cases SET ${sql.update({ ...changes, category, updatedAt: now })} WHERE id = ${id}
            RETURNING ${sql.literal(caseColumns)}`.pipe(slugRace)
      )
      if (updated.promotional !== current.promotional) yield* auditPromotional(actor, updated, economics)
      return withEconomics(updated, yield* caseItemsOf(id))
    })

    /** One case with its items and economics, inactive ones included (`GET /admin/cases/:id`). */
    const findCase = Effect.fn("Catalog.findCase")(function*(id: CaseId) {
      const found = yield* firstOf(Case, sql`SELECT ${sql.literal(caseColumns)} FROM cases WHERE id = ${id}`)
      if (found === undefined) return yield* new CaseNotFound()
      return withEconomics(found, yield* caseItemsOf(id))
    })

    /**
     * Every case with its items, inactive ones included, by id (`GET /admin/cases`,
     * docs/rules.md#catalog-administration).
     */
    const listCases = Effect.fn("Catalog.listCases")(function*(page: PageRequest) {
      const { items: cases, total } = yield* pageOf(
        Case,
        page,
        ({ limit, offset }) => sql`SELECT ${sql.literal(caseColumns)} FROM cases ORDER BY id LIMIT ${limit} OFFSET ${offset}`,
        sql`SELECT count(*) AS n FROM cases`
      )
      const items = cases.length === 0 ? [] : yield* rowsOf(PricedCaseItemOfCase, sql`
        SELECT ci.case_id, ci.item_id, ci.drop_chance, ci.range_start, ci.range_end, i.value_cents
        FROM case_items ci JOIN items i ON i.id = ci.item_id
        WHERE ci.case_id = ANY(${cases.map((c) => c.id)}::bigint[]) ORDER BY ci.case_id, ci.range_start`)
      const withItems = cases.map((kase) => withEconomics(kase, items.filter((i) => i.caseId === kase.id)))
      return { items: withItems, total, page: page.page } satisfies PageOf<CaseWithItems>
    })

    /** Active cases that match the query; a case without items is never listed (it cannot be opened). */
    const activeWhere = (query: ActiveCaseQuery) =>
      sql.and([
        sql`c.is_active`,
        sql`EXISTS (SELECT 1 FROM case_items ci WHERE ci.case_id = c.id)`,
        ...(query.category === undefined ? [] : [sql`c.category = ${query.category}`]),
        ...(query.featured === undefined ? [] : [sql`c.is_featured = ${query.featured}`])
      ])

    /**
     * `GET /cases` (docs/rules.md#case-listing): active cases, featured first, then by price, then by id; each with its
     * item count, its most valuable item (equal values: the lowest item id) and its rtp. The page query reads each
     * case's blocks (sizes and values) with the case, so rtp is computed here exactly as administrators see it,
     * without a query per case.
     */
    const listActiveCases = Effect.fn("Catalog.listActiveCases")(function*(query: ActiveCaseQuery) {
      const { items, total } = yield* pageOf(
        CaseSummaryRow,
        query,
        ({ limit, offset }) =>
          sql`SELECT c.id, c.name, c.slug, c.image_url, c.price_cents, c.category, c.is_featured, c.house_edge,
                     c.flip_chance, blocks.item_count, blocks.block_units, blocks.block_value_cents,
                     best.name AS best_name, best.rarity AS best_rarity, best.value_cents AS best_value_cents
              FROM cases c
              CROSS JOIN LATERAL (
                SELECT count(*)::int AS item_count,
                       array_agg(n.range_end - n.range_start + 1 ORDER BY n.range_start) AS block_units,
                       -- As text: BIGINT values travel as strings, decoded to bigint.
                       array_agg(i.value_cents::text ORDER BY n.range_start) AS block_value_cents
                FROM case_items n JOIN items i ON i.id = n.item_id
                WHERE n.case_id = c.id
              ) blocks
              CROSS JOIN LATERAL (
                SELECT i.name, i.rarity, i.value_cents FROM case_items b JOIN items i ON i.id = b.item_id
                WHERE b.case_id = c.id ORDER BY i.value_cents DESC, i.id LIMIT 1
              ) best
              WHERE ${activeWhere(query)}
              ORDER BY c.is_featured DESC, c.price_cents, c.id
              LIMIT ${limit} OFFSET ${offset}`,
        sql`SELECT count(*) AS n FROM cases c WHERE ${activeWhere(query)}`
      )
      const summaries = items.map((
        { bestName, bestRarity, bestValueCents, blockUnits, blockValueCents, flipChance, houseEdge, ...summary }
      ): CaseSummary => ({
        ...summary,
        bestItem: { name: bestName, rarity: bestRarity, valueCents: bestValueCents },
        rtp: economicsOf(
          { priceCents: summary.priceCents, houseEdge, flipChance },
          blockUnits.map((units, index) => ({ units, valueCents: blockValueCents[index]! }))
        ).rtp
      }))
      return { items: summaries, total, page: query.page } satisfies PageOf<CaseSummary>
    })

    /**
     * An active case with its items and ranges in roll order, for `GET /cases/:id` and openings.
     * Absent or inactive: CaseNotFound (docs/rules.md#open-case).
     */
    const findActiveCase = Effect.fn("Catalog.findActiveCase")(function*(caseId: CaseId) {
      const found = yield* firstOf(Case, sql`SELECT ${sql.literal(caseColumns)} FROM cases WHERE id = ${caseId} AND is_active`)
      if (found === undefined) return yield* new CaseNotFound()
      const items = yield* rowsOf(CaseItemDetail, sql`
        SELECT ci.item_id, ci.drop_chance, ci.range_start, ci.range_end, i.name, i.rarity, i.value_cents, i.image_url
        FROM case_items ci JOIN items i ON i.id = ci.item_id
        WHERE ci.case_id = ${caseId} ORDER BY ci.range_start`)
      return { case: found, items, economics: economicsOf(found, items.map(payoutOf)) } satisfies ActiveCase
    })

    /** The items of a case in roll order, ready for `itemForRoll`. */
    const caseItems = Effect.fn("Catalog.caseItems")(function*(caseId: CaseId) {
      const items = yield* caseItemsOf(caseId)
      return items.map(({ valueCents: _, ...item }) => new CaseItem(item))
    })

    const isEmpty = singleOf(EmptyRow, sql`SELECT NOT EXISTS (SELECT 1 FROM items) AND NOT EXISTS (SELECT 1 FROM cases) AS empty`)
      .pipe(Effect.map((row) => row.empty), Effect.withSpan("Catalog.isEmpty"))

    return {
      createItem,
      updateItem,
      listItems,
      createCase,
      updateCase,
      findCase,
      listCases,
      casesOverHouseEdge,
      listActiveCases,
      findActiveCase,
      caseItems,
      isEmpty
    } as const
  }),
  dependencies: [Audit.Default]
}) {}
