/**
 * A user's inventory (docs/rules.md#inventory-and-selling): entries of catalog items won in openings, upgrades,
 * battles and raffles, and their sale for the item's current value (ITEM_SELL, docs/rules.md#transaction-types).
 *
 * A sale is atomic: ONE statement (or, the careful way, one transaction) in which a conditional update takes the
 * entry from AVAILABLE to SOLD and the Ledger credits its value, reference `INVENTORY_ITEM` / the entry id, only
 * when the update did. The update is the guard: of any number of concurrent sales of one entry only one finds it
 * AVAILABLE at its latest version, so an entry is credited at most once whatever the timing. Migration 0006 backs
 * this with a unique index: a second ITEM_SELL row for one entry cannot exist. The item's value is read, not
 * locked: a revaluation committed while a sale waits for its entry leaves that sale at the value before it (the
 * sale counts as made before the revaluation).
 *
 * Sell-all credits ONE ledger row PER ENTRY (not one summed row), so every SOLD entry has exactly one
 * ITEM_SELL row naming it and a sale can be traced and reconciled entry by entry. Its entries are
 * locked in id order first, so concurrent sales never deadlock.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { hotSpan } from "../../layers/HotSpans"
import { Rarity } from "../../schema/games/Catalog"
import { DropSource } from "../../schema/games/Game"
import { ItemId, type UserId } from "../../schema/platform/Ids"
import {
  type InventoryEntry,
  InventoryItemId,
  type InventoryPage,
  type InventoryQuery,
  InventoryStatus,
  ItemNotAvailable,
  type SaleResult,
  type SellAllResult
} from "../../schema/games/Inventory"
import { Ledger } from "../money/Ledger"
import { Realtime } from "../platform/Realtime"
import { firstOf, inTransaction, noneOnConflict, rowsOf, singleOf, windowOf } from "../platform/SqlRows"

/** The reference of an ITEM_SELL movement: the sold entry. */
const SALE_REFERENCE_TYPE = "INVENTORY_ITEM"

/** docs/rules.md#selling: a second sale of an entry, or a sale of someone else's entry. */
const notAvailable = () => new ItemNotAvailable({ message: "Item not available" })

const EntryRow = Schema.Struct({
  id: InventoryItemId,
  status: InventoryStatus,
  source: DropSource,
  acquiredAt: Schema.DateFromSelf,
  itemId: ItemId,
  name: Schema.String,
  rarity: Rarity,
  valueCents: Schema.BigInt,
  imageUrl: Schema.String
})

/**
 * A sold entry: its value, and when the money stake it comes from was made (`staked_at`, else when it was acquired):
 * a sale gives room back only in that play's windows (docs/responsible-gaming.md#loss).
 */
const SoldRow = Schema.Struct({ id: InventoryItemId, valueCents: Schema.BigInt, stakedAt: Schema.DateFromSelf })
const TotalsRow = Schema.Struct({ total: Schema.Number, totalValueCents: Schema.BigInt })
/** A one-statement sale: whether the entry was sold, and the balance after its credit (null when nothing moved). */
const CreditedRow = Schema.Struct({ sold: Schema.Boolean, balanceCents: Schema.NullOr(Schema.BigInt) })

/** The ITEM_SELL movement of a sold entry: its value, referencing it, staked when the play it comes from was. */
const saleOf = (userId: UserId, sold: typeof SoldRow.Type) => ({
  userId,
  type: "ITEM_SELL" as const,
  amountCents: sold.valueCents,
  reference: { type: SALE_REFERENCE_TYPE, id: sold.id },
  stakedAt: sold.stakedAt
})

const toEntry = (row: typeof EntryRow.Type): InventoryEntry => ({
  id: row.id,
  item: { id: row.itemId, name: row.name, rarity: row.rarity, valueCents: row.valueCents, imageUrl: row.imageUrl },
  status: row.status,
  source: row.source,
  acquiredAt: row.acquiredAt
})

export class Inventory extends Effect.Service<Inventory>()("app/Inventory", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const transaction = inTransaction(sql)
    const ledger = yield* Ledger
    const realtime = yield* Realtime
    /** SoldRow's columns of an entry `ii` and its item `i`. */
    const soldColumns = sql`ii.id, i.value_cents, COALESCE(ii.staked_at, ii.acquired_at) AS staked_at`

    /**
     * `GET /inventory` (docs/rules.md#inventory-entries): newest first; `totalValueCents` sums the AVAILABLE
     * entries' current values.
     */
    const list = Effect.fn("Inventory.list")(function*(userId: UserId, query: InventoryQuery) {
      const where = sql.and([
        sql`ii.user_id = ${userId}`,
        ...(query.status === undefined ? [] : [sql`ii.status = ${query.status}`])
      ])
      // Not `pageOf`: one statement counts the entries and sums the AVAILABLE ones' values.
      const { limit, offset } = windowOf(query)
      const rows = yield* rowsOf(EntryRow, sql`
        SELECT ii.id, ii.status, ii.source, ii.acquired_at, i.id AS item_id, i.name, i.rarity, i.value_cents, i.image_url
        FROM inventory_items ii JOIN items i ON i.id = ii.item_id
        WHERE ${where}
        ORDER BY ii.acquired_at DESC, ii.id DESC
        LIMIT ${limit} OFFSET ${offset}`)
      const totals = yield* singleOf(TotalsRow, sql`
        SELECT (SELECT count(*)::int FROM inventory_items ii WHERE ${where}) AS total,
               (SELECT COALESCE(SUM(i.value_cents), 0)::text FROM inventory_items ii JOIN items i ON i.id = ii.item_id
                WHERE ii.user_id = ${userId} AND ii.status = 'AVAILABLE') AS total_value_cents`)
      return {
        items: rows.map(toEntry),
        total: totals.total,
        page: query.page,
        totalValueCents: totals.totalValueCents
      } satisfies InventoryPage
    })

    /**
     * The user's entry marked SOLD at `now` while it is AVAILABLE (and `onlyIf` holds of it, `ii`, and its item, `i`):
     * the guard of every single sale. Returns the sold entry with its item's value and when its play was staked.
     */
    const markSold = (userId: UserId, entryId: InventoryItemId, now: Date, onlyIf: Statement.Fragment = sql`true`) => sql`
      UPDATE inventory_items ii SET status = 'SOLD', updated_at = ${now}
      FROM items i
      WHERE ii.id = ${entryId} AND ii.user_id = ${userId} AND ii.status = 'AVAILABLE' AND i.id = ii.item_id AND ${onlyIf}
      RETURNING ${soldColumns}`

    /**
     * `POST /inventory/:id/sell` (docs/rules.md#selling): one entry for its item's current value; 400 `Item not
     * available` otherwise. Usually one read and one statement (`sellAsRead`); the careful way, a transaction, when
     * the entry is not available as read (sold meanwhile, revalued, not the user's), which tells the cases apart.
     */
    const sell = Effect.fnUntraced(function*(userId: UserId, entryId: InventoryItemId) {
      // A deadlock wrote nothing either: the careful way then runs as a transaction (again on such a conflict).
      const quick = yield* noneOnConflict(sellAsRead(userId, entryId))
      const result = Option.isSome(quick) ? quick.value : yield* sellCarefully(userId, entryId)
      yield* realtime.balanceChanged(userId, result.balanceCents)
      return result
    }, (effect) => effect.pipe(hotSpan("Inventory.sell")))

    /**
     * The entry and its item's value read (no lock), then ONE statement: the entry marked SOLD only while it is
     * AVAILABLE and its item's value is as read, and the credit (with the responsible-gaming windows of the play
     * that won it, `stakedAt`) only when it was. None when the entry was not available as read.
     */
    const sellAsRead = Effect.fnUntraced(function*(userId: UserId, entryId: InventoryItemId) {
      const read = yield* firstOf(SoldRow, sql`
        SELECT ${soldColumns}
        FROM inventory_items ii JOIN items i ON i.id = ii.item_id
        WHERE ii.id = ${entryId} AND ii.user_id = ${userId} AND ii.status = 'AVAILABLE'`)
      if (read === undefined) return Option.none()
      const now = new Date(yield* Clock.currentTimeMillis)
      const written = yield* singleOf(CreditedRow, sql`
        WITH
        sold AS (${markSold(userId, entryId, now, sql`i.value_cents = ${read.valueCents}`)}),
        ${ledger.saleCreditSteps(saleOf(userId, read), now, sql`EXISTS (SELECT 1 FROM sold)`)}
        SELECT EXISTS (SELECT 1 FROM sold) AS sold, (SELECT balance_cents FROM moved) AS balance_cents`)
      if (!written.sold) return Option.none()
      // The credit has no condition but the sale's: an entry SOLD without it would be money lost, never an answer.
      if (written.balanceCents === null) return yield* Effect.dieMessage(`Inventory.sell: entry ${entryId} sold without its credit`)
      return Option.some({ soldItemId: read.id, creditedCents: read.valueCents, balanceCents: written.balanceCents } satisfies SaleResult)
    })

    /** The careful way of a sale: one transaction, the entry marked SOLD first, then its credit. */
    const sellCarefully = Effect.fnUntraced(function*(userId: UserId, entryId: InventoryItemId) {
      const now = new Date(yield* Clock.currentTimeMillis)
      return yield* transaction(sellInTransaction(userId, entryId, now))
    })

    /** What `sellCarefully` runs in its transaction: the entry marked SOLD at `now`, then its credit. */
    const sellInTransaction = Effect.fnUntraced(function*(userId: UserId, entryId: InventoryItemId, now: Date) {
      const sold = yield* firstOf(SoldRow, markSold(userId, entryId, now))
      if (sold === undefined) return yield* notAvailable()
      const posting = yield* ledger.credit(saleOf(userId, sold))
      return {
        soldItemId: sold.id,
        creditedCents: sold.valueCents,
        balanceCents: posting.balanceAfterCents
      } satisfies SaleResult
    })

    /**
     * `POST /inventory/sell-all` (docs/rules.md#selling): every AVAILABLE entry, one ITEM_SELL row each;
     * nothing to sell is not an error.
     */
    const sellAll = Effect.fn("Inventory.sellAll")(function*(userId: UserId) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const result = yield* transaction(sellAllInTransaction(userId, now))
      if (result.soldCount > 0) yield* realtime.balanceChanged(userId, result.balanceCents)
      return result
    })

    /** What `sellAll` runs in its transaction: every AVAILABLE entry locked in id order, marked SOLD, credited. */
    const sellAllInTransaction = Effect.fnUntraced(function*(userId: UserId, now: Date) {
      const marked = yield* rowsOf(SoldRow, sql`
        WITH picked AS (
          SELECT id FROM inventory_items WHERE user_id = ${userId} AND status = 'AVAILABLE' ORDER BY id FOR UPDATE
        )
        UPDATE inventory_items ii SET status = 'SOLD', updated_at = ${now}
        FROM items i
        WHERE ii.id IN (SELECT id FROM picked) AND ii.status = 'AVAILABLE' AND i.id = ii.item_id
        RETURNING ${soldColumns}`)
      const sold = [...marked].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      let creditedCents = 0n
      let balanceCents: bigint | undefined
      for (const entry of sold) {
        balanceCents = (yield* ledger.credit(saleOf(userId, entry))).balanceAfterCents
        creditedCents += entry.valueCents
      }
      if (balanceCents === undefined) {
        balanceCents = (yield* ledger.balanceOf(userId)) ?? 0n
      }
      return { soldCount: sold.length, creditedCents, balanceCents } satisfies SellAllResult
    })

    return { list, sell, sellAll } as const
  }),
  dependencies: [Ledger.Default, Realtime.Default]
}) {}
