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
import { settle, TOLERANCE } from "./BattleSettlement"
import { itemForRoll } from "../games/CaseRanges"
import { LiveDrops, RecordedDrops } from "../games/LiveDrops"
import { caseRoll, ProvablyFair, type ServerSeed } from "../games/ProvablyFair"
import { orUnavailable, rowsOf, singleOf } from "../platform/SqlRows"
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
const RoundJson = Schema.Struct({
  roundNumber: Schema.Number,
  caseId: Schema.String,
  caseName: Schema.String,
  items: Schema.Array(Schema.Struct({ itemId: ItemId, rangeStart: Schema.Number, rangeEnd: Schema.Number, valueCents: Schema.BigInt }))
})
/** A player with the client seed and the first of the nonces taken for the battle's rounds (null: no fairness state). */
const PlayerJson = Schema.Struct({
  slot: Schema.Number,
  userId: UserId,
  team: Schema.NullOr(Schema.Number),
  clientSeed: Schema.NullOr(Schema.String),
  firstNonce: Schema.NullOr(Schema.NumberFromString)
})
const BattleStateRow = Schema.Struct({ rounds: Schema.Array(RoundJson), players: Schema.Array(PlayerJson) })
const PoolRow = Schema.Struct({ itemId: ItemId, valueCents: Schema.BigInt })
const WrittenRow = Schema.Struct({ drops: RecordedDrops })

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

/** Whether a winner ends short of the fair share by more than the tolerance: only then does the catalog (the pool) count. */
const needsPool = <U extends bigint, I extends bigint>(settlement: ReturnType<typeof settle<U, I>>, winners: ReadonlyArray<U>) =>
  winners.some((winner) =>
    settlement.fairShare -
        settlement.records.filter((r) => r.type === "DROPPED" && r.userId === winner).reduce((sum, r) => sum + r.valueCents, 0n) >
      TOLERANCE
  )

export class BattleRun extends Effect.Service<BattleRun>()("app/BattleRun", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const fairness = yield* ProvablyFair
    const liveDrops = yield* LiveDrops
    const outbox = yield* WebhookOutbox

    /**
     * Call inside the transaction that filled the battle. Returns the live drops to announce after
     * the commit. Three statements whatever the numbers of players and rounds (the catalog is read
     * only for a settlement that compensates a winner), each with one text (the rows as arrays,
     * docs/decisions.md#prepared-statements).
     */
    const run = Effect.fn("BattleRun.run")(function*(battleId: BattleId, mode: BattleMode, seed: ServerSeed) {
      const now = new Date(yield* Clock.currentTimeMillis)
      // The rounds, and the players with their nonces taken, one per round: the fairness rows are locked
      // in ascending user id order (ORDER BY ... FOR UPDATE locks in the sorted order).
      const state = yield* singleOf(BattleStateRow, sql`
        WITH locked AS (
          SELECT f.user_id FROM fairness_seeds f
          WHERE f.user_id IN (SELECT user_id FROM battle_players WHERE battle_id = ${battleId})
          ORDER BY f.user_id FOR UPDATE OF f
        ), round_count AS (
          SELECT count(*)::bigint AS n FROM battle_cases WHERE battle_id = ${battleId}
        ), taken AS (
          UPDATE fairness_seeds f SET nonce = f.nonce + round_count.n, updated_at = ${now}
          FROM locked, round_count WHERE f.user_id = locked.user_id
          RETURNING f.user_id, f.client_seed, (f.nonce - round_count.n + 1)::text AS first_nonce
        )
        SELECT
          (SELECT COALESCE(json_agg(json_build_object('roundNumber', bc.round_number, 'caseId', bc.case_id::text,
                                                      'caseName', c.name, 'items', bc.items) ORDER BY bc.round_number), '[]')
           FROM battle_cases bc JOIN cases c ON c.id = bc.case_id WHERE bc.battle_id = ${battleId}) AS rounds,
          (SELECT COALESCE(json_agg(json_build_object('slot', p.slot, 'userId', p.user_id::text, 'team', p.team,
                                                      'clientSeed', t.client_seed, 'firstNonce', t.first_nonce) ORDER BY p.slot), '[]')
           FROM battle_players p LEFT JOIN taken t ON t.user_id = p.user_id WHERE p.battle_id = ${battleId}) AS players`)
      const { players, rounds } = state

      const rolls: Array<Roll> = []
      for (const player of [...players].sort((a, b) => (a.userId < b.userId ? -1 : 1))) {
        yield* fairness.forget(player.userId)
        const { clientSeed, firstNonce } = player
        if (clientSeed === null || firstNonce === null) return yield* Effect.dieMessage(`User ${player.userId} has no committed server seed`)
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
        }
      }

      const totals: ReadonlyArray<BattlePlayer> = players.map((p) => ({
        slot: p.slot,
        userId: p.userId,
        team: p.team,
        totalValueCents: rolls.filter((r) => r.userId === p.userId).reduce((sum, r) => sum + r.valueCents, 0n)
      }))
      const winners = winnersOf(mode, totals)
      const drops = rolls.map(({ itemId, roundNumber, userId, valueCents }) => ({ userId, itemId, valueCents, roundNumber }))
      const winnerList = winners.map(({ slot, userId }) => ({ userId, slot }))
      const withoutPool = settle({ drops, winners: winnerList, pool: [] })
      const settlement = needsPool(withoutPool, winners.map((w) => w.userId))
        ? settle({ drops, winners: winnerList, pool: yield* rowsOf(PoolRow, sql`SELECT id AS item_id, value_cents FROM items ORDER BY id`) })
        : withoutPool

      // Everything else in one statement: the rolls; the winners' inventory entries, then the settlement
      // records, each pointing to an entry of its user and item (entries of the same user and item are
      // interchangeable); an audit entry per record; the live drops; the players' totals; the battle FINISHED.
      const caseNameOfRound = new Map(rounds.map((r) => [r.roundNumber, r.caseName]))
      const rollColumn = <K extends keyof Roll>(key: K) => rolls.map((roll) => roll[key])
      const records = settlement.records
      const winnerSlots = new Set(winners.map((w) => w.slot))
      const { drops: recordedDrops } = yield* singleOf(WrittenRow, sql`
        WITH rolled AS (
          INSERT INTO battle_rolls (battle_id, round_number, user_id, case_id, item_id, value_cents, server_seed,
                                    server_seed_hash, client_seed, nonce, roll, range_start, range_end, created_at)
          SELECT ${battleId}::bigint, r.round_number, r.user_id, r.case_id, r.item_id, r.value_cents, ${seed.serverSeed}::text,
                 ${seed.serverSeedHash}::text, r.client_seed, r.nonce, r.roll, r.range_start, r.range_end, ${now}::timestamptz
          FROM unnest(
            ${rollColumn("roundNumber")}::integer[], ${rollColumn("userId")}::bigint[], ${rollColumn("caseId")}::bigint[],
            ${rollColumn("itemId")}::bigint[], ${rollColumn("valueCents")}::bigint[], ${rollColumn("clientSeed")}::text[],
            ${rollColumn("nonce")}::integer[], ${rollColumn("roll")}::integer[], ${rollColumn("rangeStart")}::integer[],
            ${rollColumn("rangeEnd")}::integer[]
          ) WITH ORDINALITY AS r(round_number, user_id, case_id, item_id, value_cents, client_seed, nonce, roll, range_start,
                                 range_end, n)
          ORDER BY r.n
        ), input AS (
          SELECT * FROM unnest(
            ${records.map((r) => r.userId)}::bigint[], ${records.map((r) => r.itemId)}::bigint[],
            ${records.map((r) => r.type)}::text[], ${records.map((r) => r.valueCents)}::bigint[],
            ${records.map((r) => r.roundNumber)}::integer[],
            ${records.map((r) => (r.roundNumber === null ? null : caseNameOfRound.get(r.roundNumber) ?? null))}::text[]
          ) WITH ORDINALITY AS r(user_id, item_id, type, value_cents, round_number, case_name, ord)
        ), entries AS (
          INSERT INTO inventory_items (user_id, item_id, source, acquired_at, updated_at)
          SELECT user_id, item_id, 'BATTLE', ${now}, ${now} FROM input WHERE user_id IS NOT NULL ORDER BY ord
          RETURNING id, user_id, item_id
        ), numbered_entries AS (
          SELECT id, user_id, item_id, row_number() OVER (PARTITION BY user_id, item_id ORDER BY id) AS n FROM entries
        ), numbered_input AS (
          SELECT ord, user_id, item_id, row_number() OVER (PARTITION BY user_id, item_id ORDER BY ord) AS n
          FROM input WHERE user_id IS NOT NULL
        ), settled AS (
          INSERT INTO battle_settlements (battle_id, user_id, item_id, type, value_cents, round_number, inventory_item_id,
                                          created_at)
          SELECT ${battleId}, i.user_id, i.item_id, i.type, i.value_cents, i.round_number, e.id, ${now}
          FROM input i
          LEFT JOIN numbered_input ni ON ni.ord = i.ord
          LEFT JOIN numbered_entries e ON e.user_id = ni.user_id AND e.item_id = ni.item_id AND e.n = ni.n
          ORDER BY i.ord
          RETURNING id, user_id, item_id, type, value_cents, round_number, inventory_item_id
        ), audited AS (
          INSERT INTO audit_logs (user_id, action, entity_type, entity_id, metadata, created_at)
          SELECT user_id, 'BATTLE_SETTLEMENT', 'BattleSettlement', id::text,
                 jsonb_build_object('battleId', ${String(battleId)}::text, 'type', type, 'itemId', item_id::text,
                                    'valueCents', value_cents, 'roundNumber', round_number,
                                    'inventoryItemId', inventory_item_id::text),
                 ${now}::timestamptz
          FROM settled ORDER BY id
        ), dropped AS (
          INSERT INTO live_drops (user_id, item_id, source, case_name, created_at)
          SELECT user_id, item_id, 'BATTLE', case_name, ${now}::timestamptz FROM input WHERE user_id IS NOT NULL ORDER BY ord
          RETURNING id, user_id, item_id, source, case_name, created_at
        ), totals AS (
          UPDATE battle_players p SET total_value_cents = t.total_value_cents, is_winner = t.is_winner
          FROM unnest(${totals.map((p) => p.slot)}::integer[], ${totals.map((p) => p.totalValueCents)}::bigint[],
                      ${totals.map((p) => winnerSlots.has(p.slot))}::boolean[]) AS t(slot, total_value_cents, is_winner)
          WHERE p.battle_id = ${battleId} AND p.slot = t.slot
        ), finished AS (
          UPDATE battles SET status = 'FINISHED', finished_at = ${now}, fair_share_cents = ${settlement.fairShare},
                             winners_count = ${winners.length}
          WHERE id = ${battleId}
        )
        SELECT ${liveDrops.recorded(sql`dropped`)} AS drops`)
      yield* outbox.enqueue("battle.finished", {
        battleId: String(battleId),
        winnerIds: winners.map((w) => String(w.userId)),
        totalValueCents: Number(settlement.summary.totalDropped)
      })
      return recordedDrops
    }, orUnavailable)

    return { run } as const
  }),
  dependencies: [ProvablyFair.Default, WebhookOutbox.Default, LiveDrops.Default]
}) {}
