/** Statistics of openings (docs/rules.md#opening-statistics): per user and per case. */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Rarity } from "../../schema/games/Catalog"
import { CaseNotFound } from "../../schema/platform/Errors"
import type { CaseId, UserId } from "../../schema/platform/Ids"
import { ItemId } from "../../schema/platform/Ids"
import { orUnavailable } from "../platform/SqlRows"

const BestDropRow = Schema.Struct({
  itemId: ItemId,
  name: Schema.String,
  rarity: Rarity,
  valueCents: Schema.BigInt,
  imageUrl: Schema.String,
  createdAt: Schema.DateFromSelf
})

/** Two decimals, for percentages. */
const round2 = (n: number) => Math.round(n * 100) / 100

export class GameStats extends Effect.Service<GameStats>()("app/GameStats", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** UserCaseStats: running totals kept by each opening, the favourite case and the best drop. */
    const userCaseStats = Effect.fn("GameStats.userCaseStats")(function*(userId: UserId) {
      const [totals] = yield* sql<{ totalOpened: number; totalSpentCents: string; totalWonCents: string; flipCount: number }>`
        SELECT total_opened, total_spent_cents, total_won_cents, flip_count FROM user_case_stats WHERE user_id = ${userId}`
        .pipe(orUnavailable)
      const [favorite] = yield* sql<{ name: string }>`
        SELECT c.name FROM case_openings o JOIN cases c ON c.id = o.case_id WHERE o.user_id = ${userId}
        GROUP BY c.id, c.name ORDER BY count(*) DESC, max(o.id) DESC LIMIT 1`.pipe(orUnavailable)
      const best = yield* SqlSchema.findOne({
        Request: Schema.Void,
        Result: BestDropRow,
        execute: () =>
          sql`SELECT i.id AS item_id, i.name, i.rarity, o.item_value_cents AS value_cents, i.image_url, o.created_at
              FROM user_case_stats s JOIN case_openings o ON o.id = s.best_drop_opening_id JOIN items i ON i.id = o.item_id
              WHERE s.user_id = ${userId}`
      })(undefined).pipe(orUnavailable)
      const spent = BigInt(totals?.totalSpentCents ?? 0)
      const won = BigInt(totals?.totalWonCents ?? 0)
      return {
        totalOpened: totals?.totalOpened ?? 0,
        totalSpent: spent,
        totalWon: won,
        profit: won - spent,
        favoriteCase: favorite?.name ?? null,
        bestDrop: Option.match(best, {
          onNone: () => null,
          onSome: (row) => ({
            item: { id: row.itemId, name: row.name, rarity: row.rarity, valueCents: row.valueCents, imageUrl: row.imageUrl },
            date: row.createdAt
          })
        }),
        flipCount: totals?.flipCount ?? 0
      }
    })

    /** CaseStats of any existing case (inactive ones too: their history stays). */
    const caseStats = Effect.fn("GameStats.caseStats")(function*(caseId: CaseId) {
      const [exists] = yield* sql`SELECT 1 FROM cases WHERE id = ${caseId}`.pipe(orUnavailable)
      if (exists === undefined) return yield* new CaseNotFound()
      const [totals] = yield* sql<{ totalOpened: string; uniqueOpeners: string; totalVolume: string; averageProfit: string }>`
        SELECT count(*)::text AS total_opened, count(DISTINCT user_id)::text AS unique_openers,
               COALESCE(sum(price_paid_cents), 0)::text AS total_volume,
               COALESCE(round(avg(profit)), 0)::text AS average_profit
        FROM case_openings WHERE case_id = ${caseId}`.pipe(orUnavailable)
      const distribution = yield* sql<{ rarity: string; count: string }>`
        SELECT i.rarity, count(*)::text AS count FROM case_openings o JOIN items i ON i.id = o.item_id
        WHERE o.case_id = ${caseId} GROUP BY i.rarity ORDER BY count(*) DESC, i.rarity`.pipe(orUnavailable)
      const totalOpened = Number(totals!.totalOpened)
      return {
        totalOpened,
        uniqueOpeners: Number(totals!.uniqueOpeners),
        totalVolume: BigInt(totals!.totalVolume),
        averageProfit: BigInt(totals!.averageProfit),
        dropDistribution: distribution.map((row) => ({
          rarity: row.rarity,
          count: Number(row.count),
          percentage: round2((Number(row.count) / totalOpened) * 100)
        }))
      }
    })

    return { userCaseStats, caseStats } as const
  })
}) {}
