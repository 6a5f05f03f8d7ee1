/**
 * Running a full battle (docs/rules.md#battle-rolls, docs/rules.md#battle-settlement) for the join that filled its
 * last slot: every player opens every round's case with a provably fair roll of the battle's own server seed
 * (committed when the battle was created) with the player's client seed and the player's next nonces, one per
 * round, the winners are decided, the settlement (a pure function) is applied (inventory entries for what
 * winners receive, records for every movement, an audit entry per movement), and the battle is
 * FINISHED with its outbound webhook queued. No balance changes here: entries were paid at join.
 * `run` does it inside the careful join's transaction; a filling join in one statement (Battles.fillingWrite)
 * computes the same `outcomeOf` and writes the same `finishSteps` in its statement.
 *
 * Rolls take each player's nonces in ascending user id order, so two battles finishing at once
 * with players in common never wait on each other in a cycle.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect, Either, Option, Schema } from "effect"
import type { BattleId, BattleMode } from "../../schema/battles/Battle"
import { ItemId, UserId } from "../../schema/platform/Ids"
import { settle, TOLERANCE } from "./BattleSettlement"
import { itemForRoll } from "../games/CaseRanges"
import { LiveDrops, RecordedDrops } from "../games/LiveDrops"
import { caseRoll, ProvablyFair, type ServerSeed } from "../games/ProvablyFair"
import { orUnavailable, rowsOf, singleOf } from "../platform/SqlRows"
import { WebhookOutbox } from "../platform/WebhookOutbox"

/** A player with the total of the player's rolls. */
export interface BattlePlayer {
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
export const RoundJson = Schema.Struct({
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
export interface Roll {
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

/** A battle's player as its rolls need it: the client seed and the first of the nonces taken for its rounds. */
export interface RollingPlayer {
  readonly slot: number
  readonly userId: UserId
  readonly team: number | null
  readonly clientSeed: string
  readonly firstNonce: number
}

/** How a full battle ends, before it is written: the rolls, the players' totals, the winners and the settlement. */
export interface Outcome {
  readonly rolls: ReadonlyArray<Roll>
  readonly totals: ReadonlyArray<BattlePlayer>
  readonly winners: ReadonlyArray<BattlePlayer>
  readonly settlement: ReturnType<typeof settle<UserId, ItemId>>
}

/** A round as the rolls need it: its case's ranges and values as kept at creation. */
export type Round = typeof RoundJson.Type

/** The `battle.finished` webhook's data (docs/rules.md#webhook-payload). */
export const finishedEvent = (battleId: BattleId, outcome: Outcome) => ({
  battleId: String(battleId),
  winnerIds: outcome.winners.map((w) => String(w.userId)),
  totalValueCents: Number(outcome.settlement.summary.totalDropped)
})

export class BattleRun extends Effect.Service<BattleRun>()("app/BattleRun", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const fairness = yield* ProvablyFair
    const liveDrops = yield* LiveDrops
    const outbox = yield* WebhookOutbox

    /**
     * Every player's roll of every round (players in ascending user id order, each with its nonces in round order),
     * the totals, the winners and the settlement. The catalog (the pool) is read only for a settlement that
     * compensates a winner; `pool: false` gives none then instead (the caller takes the way that reads it).
     */
    const outcomeOf = Effect.fnUntraced(function*<P extends boolean>(mode: BattleMode, seed: ServerSeed, players: ReadonlyArray<RollingPlayer>, rounds: ReadonlyArray<Round>, pool: P) {
      const rolls: Array<Roll> = []
      for (const player of [...players].sort((a, b) => (a.userId < b.userId ? -1 : 1))) {
        for (const [i, round] of rounds.entries()) {
          const nonce = player.firstNonce + i
          const roll = caseRoll(seed.serverSeed, player.clientSeed, nonce)
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
            clientSeed: player.clientSeed,
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
      if (!needsPool(withoutPool, winners.map((w) => w.userId))) {
        return Option.some<Outcome>({ rolls, totals, winners, settlement: withoutPool })
      }
      if (!pool) return Option.none<Outcome>()
      // Locked as a foreign key's check would (sql/0029): the settlement may name any of them.
      const items = yield* rowsOf(PoolRow, sql`SELECT id AS item_id, value_cents FROM items ORDER BY id FOR KEY SHARE`)
      return Option.some<Outcome>({ rolls, totals, winners, settlement: settle({ drops, winners: winnerList, pool: items }) })
    })

    /**
     * The steps of a statement that write a full battle's end, each only when `onlyIf` holds: the rolls; the winners'
     * inventory entries and the settlement records, each record pointing to its entry (the entries' ids taken from
     * their sequence first, as a battle's creation takes its own); an audit entry per record; the live drops (`dropped`, for
     * `LiveDrops.recorded`); the totals of the players in `seated` (already seated: the others are seated by the
     * caller's statement, with theirs); the battle FINISHED, with `joined` more players. The rolls as the battle's
     * view shows them are `rollsView(sql`rolled`)` in that statement.
     */
    const finishSteps = (finish: {
      readonly battleId: BattleId
      readonly seed: ServerSeed
      readonly rounds: ReadonlyArray<Round>
      readonly outcome: Outcome
      readonly seated: ReadonlyArray<BattlePlayer>
      readonly joined: number
      readonly at: Date
      readonly onlyIf: Statement.Fragment
    }) => {
      const { at, battleId, onlyIf, outcome, seed } = finish
      const caseNameOfRound = new Map(finish.rounds.map((r) => [r.roundNumber, r.caseName]))
      const rollColumn = <K extends keyof Roll>(key: K) => outcome.rolls.map((roll) => roll[key])
      const records = outcome.settlement.records
      const winnerSlots = new Set(outcome.winners.map((w) => w.slot))
      return sql`
        rolled AS (
          INSERT INTO battle_rolls (battle_id, round_number, user_id, case_id, item_id, value_cents, server_seed,
                                    server_seed_hash, client_seed, nonce, roll, range_start, range_end, created_at)
          SELECT ${battleId}::bigint, r.round_number, r.user_id, r.case_id, r.item_id, r.value_cents, ${seed.serverSeed}::text,
                 ${seed.serverSeedHash}::text, r.client_seed, r.nonce, r.roll, r.range_start, r.range_end, ${at}::timestamptz
          FROM unnest(
            ${rollColumn("roundNumber")}::integer[], ${rollColumn("userId")}::bigint[], ${rollColumn("caseId")}::bigint[],
            ${rollColumn("itemId")}::bigint[], ${rollColumn("valueCents")}::bigint[], ${rollColumn("clientSeed")}::text[],
            ${rollColumn("nonce")}::integer[], ${rollColumn("roll")}::integer[], ${rollColumn("rangeStart")}::integer[],
            ${rollColumn("rangeEnd")}::integer[]
          ) WITH ORDINALITY AS r(round_number, user_id, case_id, item_id, value_cents, client_seed, nonce, roll, range_start,
                                 range_end, n)
          WHERE ${onlyIf}
          ORDER BY r.n
          RETURNING id, round_number, user_id, item_id, value_cents, server_seed, server_seed_hash, client_seed, nonce, roll
        ), input AS (
          SELECT r.*, CASE WHEN r.user_id IS NOT NULL THEN nextval(pg_get_serial_sequence('inventory_items', 'id')) END AS entry_id
          FROM unnest(
            ${records.map((r) => r.userId)}::bigint[], ${records.map((r) => r.itemId)}::bigint[],
            ${records.map((r) => r.type)}::text[], ${records.map((r) => r.valueCents)}::bigint[],
            ${records.map((r) => r.roundNumber)}::integer[],
            ${records.map((r) => (r.roundNumber === null ? null : caseNameOfRound.get(r.roundNumber) ?? null))}::text[]
          ) WITH ORDINALITY AS r(user_id, item_id, type, value_cents, round_number, case_name, ord)
          WHERE ${onlyIf}
        ), entries AS (
          -- Staked when the receiver paid its entry (docs/responsible-gaming.md#loss); a seat this statement writes (the
          -- filling join's) is not visible here, and was paid now.
          INSERT INTO inventory_items (id, user_id, item_id, source, acquired_at, updated_at, staked_at)
          OVERRIDING SYSTEM VALUE
          SELECT entry_id, user_id, item_id, 'BATTLE', ${at}, ${at},
                 COALESCE((SELECT bp.joined_at FROM battle_players bp WHERE bp.battle_id = ${battleId} AND bp.user_id = input.user_id), ${at})
          FROM input WHERE entry_id IS NOT NULL ORDER BY ord
        ), settled AS (
          INSERT INTO battle_settlements (battle_id, user_id, item_id, type, value_cents, round_number, inventory_item_id,
                                          created_at)
          SELECT ${battleId}, user_id, item_id, type, value_cents, round_number, entry_id, ${at}
          FROM input ORDER BY ord
          RETURNING id, user_id, item_id, type, value_cents, round_number, inventory_item_id
        ), audited AS (
          INSERT INTO audit_logs (user_id, action, entity_type, entity_id, metadata, created_at)
          SELECT user_id, 'BATTLE_SETTLEMENT', 'BattleSettlement', id::text,
                 jsonb_build_object('battleId', ${String(battleId)}::text, 'type', type, 'itemId', item_id::text,
                                    'valueCents', value_cents, 'roundNumber', round_number,
                                    'inventoryItemId', inventory_item_id::text),
                 ${at}::timestamptz
          FROM settled ORDER BY id
        ), dropped AS (
          INSERT INTO live_drops (user_id, item_id, source, case_name, created_at)
          SELECT user_id, item_id, 'BATTLE', case_name, ${at}::timestamptz FROM input WHERE user_id IS NOT NULL ORDER BY ord
          RETURNING id, user_id, item_id, source, case_name, created_at
        ), totals AS (
          UPDATE battle_players p SET total_value_cents = t.total_value_cents, is_winner = t.is_winner
          FROM unnest(${finish.seated.map((p) => p.slot)}::integer[], ${finish.seated.map((p) => p.totalValueCents)}::bigint[],
                      ${finish.seated.map((p) => winnerSlots.has(p.slot))}::boolean[]) AS t(slot, total_value_cents, is_winner)
          WHERE p.battle_id = ${battleId} AND p.slot = t.slot AND ${onlyIf}
        ), finished AS (
          UPDATE battles SET status = 'FINISHED', finished_at = ${at}, fair_share_cents = ${outcome.settlement.fairShare},
                             winners_count = ${outcome.winners.length}, player_count = player_count + ${finish.joined}
          WHERE id = ${battleId} AND ${onlyIf}
        )`
    }

    /**
     * A battle's rolls as its view shows them (a JSON array, in round and user order), as a column: from `battle_rolls`
     * (`where` picks the battle's), or from what `finishSteps` just wrote (`rolled`).
     */
    const rollsView = (rolls: Statement.Fragment, where: Statement.Fragment = sql`true`) => sql`
      (SELECT COALESCE(json_agg(json_build_object('id', r.id::text, 'roundNumber', r.round_number, 'userId', r.user_id::text,
                                                  'roll', r.roll, 'serverSeed', r.server_seed,
                                                  'serverSeedHash', r.server_seed_hash, 'clientSeed', r.client_seed,
                                                  'nonce', r.nonce, 'itemId', r.item_id::text, 'itemName', i.name,
                                                  'rarity', i.rarity, 'valueCents', r.value_cents::text,
                                                  'imageUrl', i.image_url) ORDER BY r.round_number, r.user_id), '[]')
       FROM ${rolls} r JOIN items i ON i.id = r.item_id WHERE ${where})`

    /**
     * Call inside the transaction that filled the battle. Returns the live drops to announce after
     * the commit. Three statements whatever the numbers of players and rounds (the catalog is read
     * only for a settlement that compensates a winner), each with one text (the rows as arrays,
     * docs/decisions.md#prepared-statements).
     */
    const run = Effect.fn("BattleRun.run")(function*(battleId: BattleId, mode: BattleMode, seed: ServerSeed) {
      const at = new Date(yield* Clock.currentTimeMillis)
      // The rounds, and the players with their nonces taken, one per round: the fairness rows are locked
      // in ascending user id order (ORDER BY ... FOR UPDATE locks in the sorted order).
      const { players, rounds } = yield* singleOf(BattleStateRow, sql`
        WITH locked AS (
          SELECT f.user_id FROM fairness_seeds f
          WHERE f.user_id IN (SELECT user_id FROM battle_players WHERE battle_id = ${battleId})
          ORDER BY f.user_id FOR UPDATE OF f
        ), round_count AS (
          SELECT count(*)::bigint AS n FROM battle_cases WHERE battle_id = ${battleId}
        ), taken AS (
          UPDATE fairness_seeds f SET nonce = f.nonce + round_count.n, updated_at = ${at}
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
      const rolling: Array<RollingPlayer> = []
      for (const player of players) {
        yield* fairness.forget(player.userId)
        const { clientSeed, firstNonce } = player
        if (clientSeed === null || firstNonce === null) return yield* Effect.dieMessage(`User ${player.userId} has no committed server seed`)
        rolling.push({ ...player, clientSeed, firstNonce })
      }
      const outcome = Option.getOrThrow(yield* outcomeOf(mode, seed, rolling, rounds, true))
      const { drops } = yield* singleOf(WrittenRow, sql`
        WITH ${finishSteps({ battleId, seed, rounds, outcome, seated: outcome.totals, joined: 0, at, onlyIf: sql`true` })}
        SELECT ${liveDrops.recorded(sql`dropped`)} AS drops`)
      yield* outbox.enqueue("battle.finished", finishedEvent(battleId, outcome))
      return drops
    }, orUnavailable)

    return { run, outcomeOf, finishSteps, rollsView } as const
  }),
  dependencies: [ProvablyFair.Default, WebhookOutbox.Default, LiveDrops.Default]
}) {}
