/**
 * Active cases as this instance last read them, each kept with the catalog version it was read at (sql/0018: one
 * number moved by every change to items, cases and ranges). A write that uses a kept case takes effect only while
 * that version is current (`current`), so an edit made anywhere is never missed; a caller whose write found the
 * version moved calls `forget`, and the next use reads again. Openings and battle creations keep cases here.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Rarity } from "../../schema/games/Catalog"
import { type CaseId, ItemId } from "../../schema/platform/Ids"
import type { ItemRange } from "./CaseRanges"
import { rowsOf } from "../platform/SqlRows"

const RangeRow = Schema.Struct({
  itemId: ItemId,
  dropChance: Schema.NumberFromString,
  rangeStart: Schema.Number,
  rangeEnd: Schema.Number,
  name: Schema.String,
  rarity: Rarity,
  valueCents: Schema.BigInt,
  imageUrl: Schema.String
})
/** A case's range with its item, as an opening shows it. */
export type RangeRow = typeof RangeRow.Type

/** A range of a case, with the case's own fields and the catalog's version repeated on each row. */
const CaseRangeRow = Schema.extend(
  RangeRow,
  Schema.Struct({
    caseName: Schema.String,
    priceCents: Schema.BigInt,
    flipChance: Schema.Number,
    catalogVersion: Schema.NumberFromString
  })
)

/** An active case, at the catalog version it was read at; its ranges in roll order. */
export interface ActiveCase {
  readonly id: CaseId
  readonly version: number
  readonly name: string
  readonly priceCents: bigint
  readonly flipChance: number
  readonly ranges: ReadonlyArray<RangeRow & ItemRange>
}

export class ActiveCases extends Effect.Service<ActiveCases>()("app/ActiveCases", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const kept = new Map<CaseId, ActiveCase>()
    // Moved by `forget`: a read that began before it is not kept (it may hold what the caller found outdated).
    let generation = 0

    /** The case, kept or read (one query); none when it is absent or inactive. */
    const get = Effect.fnUntraced(function*(id: CaseId) {
      const known = kept.get(id)
      if (known !== undefined) return Option.some(known)
      const began = generation
      const ranges = yield* rowsOf(CaseRangeRow, sql`
          SELECT c.name AS case_name, c.price_cents, c.flip_chance, v.version AS catalog_version,
                 ci.item_id, ci.drop_chance, ci.range_start, ci.range_end, i.name, i.rarity, i.value_cents, i.image_url
          FROM cases c JOIN case_items ci ON ci.case_id = c.id JOIN items i ON i.id = ci.item_id CROSS JOIN catalog_version v
          WHERE c.id = ${id} AND c.is_active ORDER BY ci.range_start`)
      // A saved case always has items (docs/rules.md#case-validation), so no rows means no active case.
      const head = ranges[0]
      if (head === undefined) return Option.none<ActiveCase>()
      const kase: ActiveCase = {
        id,
        version: head.catalogVersion,
        name: head.caseName,
        priceCents: head.priceCents,
        flipChance: head.flipChance,
        ranges
      }
      if (began === generation) kept.set(id, kase)
      return Option.some(kase)
    })

    /** A statement's condition: the catalog is still at `version`. */
    const current = (version: number) => sql`EXISTS (SELECT 1 FROM catalog_version WHERE version = ${version})`

    /** Everything kept is read again at its next use (a write found the catalog changed). */
    const forget = Effect.sync(() => {
      generation++
      kept.clear()
    })

    return { get, current, forget } as const
  })
}) {}
