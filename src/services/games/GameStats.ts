/** Statistics of openings (docs/rules.md#opening-statistics): per user and per case. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { CaseNotFound, Rarity } from "../../schema/games/Catalog"
import type { CaseId, UserId } from "../../schema/platform/Ids"
import { ItemId } from "../../schema/platform/Ids"
import { firstOf, rowCountOf, rowsOf, singleOf } from "../platform/SqlRows"

const BestDropRow = Schema.Struct({
  itemId: ItemId,
  name: Schema.String,
  rarity: Rarity,
  valueCents: Schema.BigInt,
  imageUrl: Schema.String,
  createdAt: Schema.DateFromSelf
})

const UserTotalsRow = Schema.Struct({
  totalOpened: Schema.Number,
  totalSpentCents: Schema.BigInt,
  totalWonCents: Schema.BigInt,
  flipCount: Schema.Number
})
const FavoriteRow = Schema.Struct({ name: Schema.String })
const CaseTotalsRow = Schema.Struct({
  totalOpened: Schema.NumberFromString,
  uniqueOpeners: Schema.NumberFromString,
  totalVolume: Schema.BigInt,
  averageProfit: Schema.BigInt
})
const DistributionRow = Schema.Struct({ rarity: Schema.String, count: Schema.NumberFromString })

/** Two decimals, for percentages. */
const round2 = (n: number) => Math.round(n * 100) / 100

export class GameStats extends Effect.Service<GameStats>()("app/GameStats", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** UserCaseStats: running totals kept by each opening, the favourite case and the best drop. */
    const userCaseStats = Effect.fn("GameStats.userCaseStats")(function*(userId: UserId) {
      const totals = yield* firstOf(UserTotalsRow, sql`
        SELECT total_opened, total_spent_cents, total_won_cents, flip_count FROM user_case_stats WHERE user_id = ${userId}`)
      const favorite = yield* firstOf(FavoriteRow, sql`
        SELECT c.name FROM case_openings o JOIN cases c ON c.id = o.case_id WHERE o.user_id = ${userId}
        GROUP BY c.id, c.name ORDER BY count(*) DESC, max(o.id) DESC LIMIT 1`)
      const best = yield* firstOf(BestDropRow, sql`
        SELECT i.id AS item_id, i.name, i.rarity, o.item_value_cents AS value_cents, i.image_url, o.created_at
        FROM user_case_stats s JOIN case_openings o ON o.id = s.best_drop_opening_id JOIN items i ON i.id = o.item_id
        WHERE s.user_id = ${userId}`)
      const spent = totals?.totalSpentCents ?? 0n
      const won = totals?.totalWonCents ?? 0n
      return {
        totalOpened: totals?.totalOpened ?? 0,
        totalSpent: spent,
        totalWon: won,
        profit: won - spent,
        favoriteCase: favorite?.name ?? null,
        bestDrop: best === undefined ? null : {
          item: { id: best.itemId, name: best.name, rarity: best.rarity, valueCents: best.valueCents, imageUrl: best.imageUrl },
          date: best.createdAt
        },
        flipCount: totals?.flipCount ?? 0
      }
    })

    /** CaseStats of any existing case (inactive ones too: their history stays). */
    const caseStats = Effect.fn("GameStats.caseStats")(function*(caseId: CaseId) {
      const exists = yield* rowCountOf(sql`SELECT 1 FROM cases WHERE id = ${caseId}`)
      if (exists === 0) return yield* new CaseNotFound()
      const totals = yield* singleOf(CaseTotalsRow, sql`
        SELECT count(*)::text AS total_opened, count(DISTINCT user_id)::text AS unique_openers,
               COALESCE(sum(price_paid_cents), 0)::text AS total_volume,
               COALESCE(round(avg(profit)), 0)::text AS average_profit
        FROM case_openings WHERE case_id = ${caseId}`)
      const distribution = yield* rowsOf(DistributionRow, sql`
        SELECT i.rarity, count(*)::text AS count FROM case_openings o JOIN items i ON i.id = o.item_id
        WHERE o.case_id = ${caseId} GROUP BY i.rarity ORDER BY count(*) DESC, i.rarity`)
      const { totalOpened } = totals
      return {
        totalOpened,
        uniqueOpeners: totals.uniqueOpeners,
        totalVolume: totals.totalVolume,
        averageProfit: totals.averageProfit,
        dropDistribution: distribution.map((row) => ({
          rarity: row.rarity,
          count: row.count,
          percentage: round2((row.count / totalOpened) * 100)
        }))
      }
    })

    return { userCaseStats, caseStats } as const
  })
}) {}
