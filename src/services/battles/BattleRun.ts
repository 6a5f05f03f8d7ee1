/**
 * Running a full battle (docs/rules.md#battle-rolls, docs/rules.md#battle-settlement), inside the transaction
 * of the join that filled its last slot: every player opens every round's case with a provably fair roll of the
 * battle's own server seed (committed when the battle was created) with the player's client seed and
 * the player's next nonces, one per round, the
 * winners are decided, the settlement (a pure function) is applied (inventory entries for what
 * winners receive, records for every movement, an audit entry per movement), and the battle is
 * FINISHED with its outbound webhook queued. No balance changes here: entries were paid at join.
 *
 * Rolls take each player's nonces in ascending user id order, so two battles finishing at once
 * with players in common never wait on each other in a cycle.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either, Schema } from "effect"
import type { BattleId, BattleMode } from "../../schema/battles/Battle"
import { ItemId, UserId } from "../../schema/platform/Ids"
import { Audit, type AuditEntry } from "../admin/Audit"
import { settle } from "./BattleSettlement"
import { itemForRoll } from "../games/CaseRanges"
import { LiveDrops } from "../games/LiveDrops"
import { caseRoll, ProvablyFair, type ServerSeed } from "../games/ProvablyFair"
import { execute, orUnavailable, rowsOf } from "../platform/SqlRows"
import { WebhookOutbox } from "../platform/WebhookOutbox"

interface BattlePlayer {
  readonly slot: number
  readonly userId: UserId
  readonly team: number | null
  readonly totalValueCents: bigint
}

/**
 * docs/rules.md#battle-winners: NORMAL the highest total wins, CRAZY the lowest, TEAM the team with the highest
 * sum; every tied player (or team) wins. Returns the winners in slot order.
 */
const winnersOf = (mode: BattleMode, players: ReadonlyArray<BattlePlayer>): ReadonlyArray<BattlePlayer> => {
  const bySlot = [...players].sort((a, b) => a.slot - b.slot)
  if (mode === "TEAM") {
    const teamTotal = (team: number) =>
      bySlot.filter((p) => p.team === team).reduce((sum, p) => sum + p.totalValueCents, 0n)
    const [one, two] = [teamTotal(1), teamTotal(2)]
    return bySlot.filter((p) => one === two || p.team === (one > two ? 1 : 2))
  }
  const totals = bySlot.map((p) => p.totalValueCents)
  const best = totals.reduce((a, b) => (mode === "NORMAL" ? (b > a ? b : a) : (b < a ? b : a)))
  return bySlot.filter((p) => p.totalValueCents === best)
}

/** A round's case as it was when the battle was created: its items' ranges and values (`battle_cases.items`). */
const RoundRow = Schema.Struct({
  roundNumber: Schema.Number,
  caseId: Schema.String,
  caseName: Schema.String,
  items: Schema.Array(Schema.Struct({ itemId: ItemId, rangeStart: Schema.Number, rangeEnd: Schema.Number, valueCents: Schema.BigInt }))
})
const PlayerRow = Schema.Struct({ slot: Schema.Number, userId: UserId, team: Schema.NullOr(Schema.Number) })
const PoolRow = Schema.Struct({ itemId: ItemId, valueCents: Schema.BigInt })

/** A player's roll in a round, as `battle_rolls` keeps it (with the battle's id, seed and time). */
interface Roll {
  readonly roundNumber: number
  readonly userId: UserId
  readonly caseId: string
  readonly itemId: ItemId
  readonly valueCents: bigint
  readonly clientSeed: string
  readonly nonce: number
  readonly roll: number
  readonly rangeStart: number
  readonly rangeEnd: number
}
const SavedRecordRow = Schema.Struct({
  id: Schema.String,
  userId: Schema.NullOr(UserId),
  itemId: ItemId,
  type: Schema.String,
  valueCents: Schema.BigInt,
  roundNumber: Schema.NullOr(Schema.Number),
  inventoryItemId: Schema.NullOr(Schema.String)
})

export class BattleRun extends Effect.Service<BattleRun>()("app/BattleRun", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const fairness = yield* ProvablyFair
    const audit = yield* Audit
    const liveDrops = yield* LiveDrops
    const outbox = yield* WebhookOutbox

    /**
     * Call inside the transaction that filled the battle. Returns the live drops to announce after
     * the commit.
     */
    const run = Effect.fn("BattleRun.run")(function*(battleId: BattleId, mode: BattleMode, seed: ServerSeed) {
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* execute(sql`UPDATE battles SET status = 'RUNNING' WHERE id = ${battleId}`)
      const rounds = yield* rowsOf(RoundRow, sql`
        SELECT bc.round_number, bc.case_id::text AS case_id, c.name AS case_name, bc.items
        FROM battle_cases bc JOIN cases c ON c.id = bc.case_id WHERE bc.battle_id = ${battleId} ORDER BY bc.round_number`)
      const players = yield* rowsOf(PlayerRow, sql`
        SELECT slot, user_id, team FROM battle_players WHERE battle_id = ${battleId} ORDER BY slot`)

      const drops: Array<{ userId: UserId; itemId: ItemId; valueCents: bigint; roundNumber: number; caseName: string }> = []
      const rolls: Array<Roll> = []
      for (const player of [...players].sort((a, b) => (a.userId < b.userId ? -1 : 1))) {
        const { clientSeed, firstNonce } = yield* fairness.takeNonces(player.userId, rounds.length)
        for (const [i, round] of rounds.entries()) {
          const nonce = firstNonce + i
          const roll = caseRoll(seed.serverSeed, clientSeed, nonce)
          const won = yield* Either.match(itemForRoll(round.items, roll), {
            onLeft: (error) => Effect.die(error),
            onRight: Effect.succeed
          })
          rolls.push({
            roundNumber: round.roundNumber,
            userId: player.userId,
            caseId: round.caseId,
            itemId: won.itemId,
            valueCents: won.valueCents,
            clientSeed,
            nonce,
            roll,
            rangeStart: won.rangeStart,
            rangeEnd: won.rangeEnd
          })
          drops.push({ userId: player.userId, itemId: won.itemId, valueCents: won.valueCents, roundNumber: round.roundNumber, caseName: round.caseName })
        }
      }
      // One statement text whatever the numbers of players and rounds: the columns as arrays
      // (docs/decisions.md#prepared-statements).
      const column = <K extends keyof Roll>(key: K) => rolls.map((roll) => roll[key])
      yield* execute(sql`
        INSERT INTO battle_rolls (battle_id, round_number, user_id, case_id, item_id, value_cents, server_seed,
                                  server_seed_hash, client_seed, nonce, roll, range_start, range_end, created_at)
        SELECT ${battleId}::bigint, r.round_number, r.user_id, r.case_id, r.item_id, r.value_cents, ${seed.serverSeed}::text,
               ${seed.serverSeedHash}::text, r.client_seed, r.nonce, r.roll, r.range_start, r.range_end, ${now}::timestamptz
        FROM unnest(
          ${column("roundNumber")}::integer[], ${column("userId")}::bigint[], ${column("caseId")}::bigint[],
          ${column("itemId")}::bigint[], ${column("valueCents")}::bigint[], ${column("clientSeed")}::text[],
          ${column("nonce")}::integer[], ${column("roll")}::integer[], ${column("rangeStart")}::integer[],
          ${column("rangeEnd")}::integer[]
        ) WITH ORDINALITY AS r(round_number, user_id, case_id, item_id, value_cents, client_seed, nonce, roll, range_start,
                               range_end, n)
        ORDER BY r.n`)

      const totals: ReadonlyArray<BattlePlayer> = players.map((p) => ({
        ...p,
        totalValueCents: drops.filter((d) => d.userId === p.userId).reduce((sum, d) => sum + d.valueCents, 0n)
      }))
      const winners = winnersOf(mode, totals)
      const pool = yield* rowsOf(PoolRow, sql`SELECT id AS item_id, value_cents FROM items ORDER BY id`)
      const settlement = settle({
        drops: drops.map(({ itemId, roundNumber, userId, valueCents }) => ({ userId, itemId, valueCents, roundNumber })),
        winners: winners.map(({ slot, userId }) => ({ userId, slot })),
        pool
      })

      // One statement for all records: the winners' inventory entries, then the records, each pointing
      // to an entry of its user and item (entries of the same user and item are interchangeable).
      const caseNameOfRound = new Map(drops.map((d) => [d.roundNumber, d.caseName]))
      const input = settlement.records.map((record, ord) => ({
        ord,
        user_id: record.userId === null ? null : String(record.userId),
        item_id: String(record.itemId),
        type: record.type,
        value_cents: String(record.valueCents),
        round_number: record.roundNumber
      }))
      const saved = yield* rowsOf(SavedRecordRow, sql`
          WITH input AS (
            SELECT * FROM jsonb_to_recordset(${JSON.stringify(input)}::jsonb)
              AS r(ord integer, user_id bigint, item_id bigint, type text, value_cents bigint, round_number integer)
          ), entries AS (
            INSERT INTO inventory_items (user_id, item_id, source, acquired_at, updated_at)
            SELECT user_id, item_id, 'BATTLE', ${now}, ${now} FROM input WHERE user_id IS NOT NULL ORDER BY ord
            RETURNING id, user_id, item_id
          ), numbered_entries AS (
            SELECT id, user_id, item_id, row_number() OVER (PARTITION BY user_id, item_id ORDER BY id) AS n FROM entries
          ), numbered_input AS (
            SELECT ord, user_id, item_id, row_number() OVER (PARTITION BY user_id, item_id ORDER BY ord) AS n
            FROM input WHERE user_id IS NOT NULL
          )
          INSERT INTO battle_settlements (battle_id, user_id, item_id, type, value_cents, round_number, inventory_item_id, created_at)
          SELECT ${battleId}, i.user_id, i.item_id, i.type, i.value_cents, i.round_number, e.id, ${now}
          FROM input i
          LEFT JOIN numbered_input ni ON ni.ord = i.ord
          LEFT JOIN numbered_entries e ON e.user_id = ni.user_id AND e.item_id = ni.item_id AND e.n = ni.n
          ORDER BY i.ord
          RETURNING id::text, user_id, item_id, type, value_cents, round_number, inventory_item_id::text`)
      const movements: Array<AuditEntry> = saved.map((record) => ({
        userId: record.userId,
        action: "BATTLE_SETTLEMENT",
        entityType: "BattleSettlement",
        entityId: record.id,
        metadata: {
          battleId: String(battleId),
          type: record.type,
          itemId: String(record.itemId),
          valueCents: Number(record.valueCents),
          roundNumber: record.roundNumber,
          inventoryItemId: record.inventoryItemId
        }
      }))
      yield* audit.recordMany(movements)
      const dropIds = yield* liveDrops.recordMany(
        settlement.records.flatMap((record) =>
          record.userId === null ? [] : [{
            userId: record.userId,
            itemId: record.itemId,
            source: "BATTLE" as const,
            caseName: record.roundNumber === null ? null : caseNameOfRound.get(record.roundNumber) ?? null
          }]
        )
      )

      const winnerSlots = new Set(winners.map((w) => w.slot))
      for (const player of totals) {
        yield* execute(sql`UPDATE battle_players SET total_value_cents = ${player.totalValueCents}, is_winner = ${winnerSlots.has(player.slot)}
                   WHERE battle_id = ${battleId} AND slot = ${player.slot}`)
      }
      yield* execute(sql`UPDATE battles SET status = 'FINISHED', finished_at = ${now}, fair_share_cents = ${settlement.fairShare},
                   winners_count = ${winners.length} WHERE id = ${battleId}`)
      yield* outbox.enqueue("battle.finished", {
        battleId: String(battleId),
        winnerIds: winners.map((w) => String(w.userId)),
        totalValueCents: Number(settlement.summary.totalDropped)
      })
      return dropIds
    }, orUnavailable)

    return { run } as const
  }),
  dependencies: [ProvablyFair.Default, Audit.Default, LiveDrops.Default, WebhookOutbox.Default]
}) {}
