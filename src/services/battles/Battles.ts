/**
 * Case battles (docs/rules.md#battles; docs/decisions.md "Battles"): creation, joining, leaving, the views, the
 * settlement records and the verification of every roll.
 *
 * Money: the entry (sum of the round cases' prices) is debited through the Ledger (BATTLE_ENTRY) in
 * the write that takes the slot (the creator's: one statement with the battle; a joiner's: the statement or the
 * transaction of the join), and refunded (BATTLE_REFUND) in the transaction that gives it back.
 * Slots, the careful way: a join first increments `player_count` conditionally (`< max_players`, WAITING), which
 * locks the battle row, so concurrent joins are serialized and never exceed maxPlayers; a join that fails
 * afterwards (already joined, insufficient balance) rolls back with its increment, so a player who did
 * not get a slot is never charged. The join that fills the last slot runs the battle (BattleRun) in
 * the same transaction. A join usually goes in one statement instead, after one read (`joinAsRead`) or with none
 * when this instance keeps the battle (`joinAsKept`), which takes effect only while the battle row and the seats it
 * locks are as read or kept.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import {
  AlreadyJoined,
  type BattleId,
  BattleMode,
  BattleNotFinished,
  BattleNotOpen,
  BattleRollId,
  BattleStatus,
  type CreateBattleRequest,
  NotInBattle,
  SettlementType
} from "../../schema/battles/Battle"
import { CaseNotFound, Rarity } from "../../schema/games/Catalog"
import { InsufficientBalance, NotFound, PleaseRetry } from "../../schema/platform/Errors"
import { isPlayRefusal, type PlayRefusal } from "../../schema/identity/ResponsibleGaming"
import { CaseId, ItemId, UserId } from "../../schema/platform/Ids"
import type { Player, SignedInUser } from "../../schema/identity/User"
import { BattleRun, finishedEvent, RollingPlayer, RoundJson } from "./BattleRun"
import { Ledger } from "../money/Ledger"
import { ResponsibleGaming } from "../identity/ResponsibleGaming"
import { type ActiveCase, ActiveCases } from "../games/ActiveCases"
import { LiveDrops, RecordedDrops } from "../games/LiveDrops"
import { caseRoll, hashServerSeed, type NextRoll, NextRollRow, ProvablyFair, type ServerSeed } from "../games/ProvablyFair"
import { Realtime } from "../platform/Realtime"
import type { StatusPageRequest } from "../../schema/platform/Pagination"
import { afterCommit, execute, firstOf, inTransaction, newestPage, noneOnConflict, rowsOf, singleOf } from "../platform/SqlRows"
import { type Receivers, ReceiversJson, WebhookOutbox } from "../platform/WebhookOutbox"
import { gameRound } from "../../layers/AppMetrics"
import { hotSpan } from "../../layers/HotSpans"

const BattleRow = Schema.Struct({
  id: Schema.String,
  creatorId: UserId,
  mode: BattleMode,
  maxPlayers: Schema.Number,
  status: BattleStatus,
  entryPriceCents: Schema.BigInt,
  playerCount: Schema.Number,
  fairShareCents: Schema.NullOr(Schema.BigInt),
  winnersCount: Schema.NullOr(Schema.Number),
  createdAt: Schema.DateFromSelf,
  finishedAt: Schema.NullOr(Schema.DateFromSelf),
  // Null only for battles finished before seeds were committed per battle (their rolls hold their seeds).
  serverSeed: Schema.NullOr(Schema.String),
  serverSeedHash: Schema.NullOr(Schema.String)
})
type BattleRow = typeof BattleRow.Type

const PlayerJson = Schema.Struct({
  slot: Schema.Number,
  team: Schema.NullOr(Schema.Number),
  userId: UserId,
  username: Schema.String,
  totalValueCents: Schema.BigInt,
  isWinner: Schema.Boolean
})

const SeatRow = Schema.Struct({ userId: UserId, slot: Schema.Number })
const SlotRow = Schema.Struct({ slot: Schema.Number })
/** When a player paid a battle's entry (its BATTLE_ENTRY movement): a refund gives room back in that play's windows. */
const EntryRow = Schema.Struct({ userId: UserId, paidAt: Schema.DateFromSelf })
/** Whether the catalog is still at a version (a refused creation's second look). */
const CurrentRow = Schema.Struct({ current: Schema.Boolean })

/** How many times a battle's creation starts over when the catalog changes under it (see `create`). */
const CREATION_ATTEMPTS = 3

/** A stake's refusals (not an outage: a debit whose answer was lost may have been made). */
const isRefusal = (error: { readonly _tag: string }): error is InsufficientBalance | PlayRefusal =>
  error._tag === "InsufficientBalance" || isPlayRefusal(error)

const CaseJson = Schema.Struct({ id: CaseId, name: Schema.String, priceCents: Schema.BigInt })

const ItemColumns = { itemId: ItemId, itemName: Schema.String, rarity: Rarity, valueCents: Schema.BigInt, imageUrl: Schema.String }
const itemOf = (row: { itemId: ItemId; itemName: string; rarity: Rarity; valueCents: bigint; imageUrl: string }) => ({
  id: row.itemId,
  name: row.itemName,
  rarity: row.rarity,
  valueCents: row.valueCents,
  imageUrl: row.imageUrl
})

const RollColumns = {
  id: BattleRollId,
  roundNumber: Schema.Number,
  userId: UserId,
  roll: Schema.Number,
  serverSeed: Schema.String,
  serverSeedHash: Schema.String,
  clientSeed: Schema.String,
  nonce: Schema.Number,
  ...ItemColumns
}

/** A battle's players, cases and rolls, as `viewsOf` reads them. */
const DetailsRow = Schema.Struct({
  ...BattleRow.fields,
  players: Schema.Array(PlayerJson),
  cases: Schema.Array(CaseJson),
  rolls: Schema.Array(Schema.Struct(RollColumns))
})

/**
 * A battle as a join reads it first (`joinAsRead`): its row, its players with their fairness states,
 * its rounds with their cases, the joiner's fairness state and the receivers of `battle.finished`.
 */
const JoinStateRow = Schema.Struct({
  ...BattleRow.fields,
  players: Schema.Array(Schema.Struct({ ...PlayerJson.fields, fairness: Schema.NullOr(NextRollRow) })),
  rounds: Schema.Array(Schema.Struct({ ...RoundJson.fields, id: CaseId, priceCents: Schema.BigInt })),
  joiner: Schema.NullOr(NextRollRow),
  receivers: ReceiversJson
})

/** What a seating join's statement wrote (one that leaves the battle WAITING): nulls, and `current` false, when it wrote nothing. */
const SeatedRow = Schema.Struct({
  current: Schema.Boolean,
  balanceCents: Schema.NullOr(Schema.BigInt),
  warnings: Schema.NullOr(Schema.String)
})

/** What a filling join's statement wrote: nulls, and `current` false, when it wrote nothing. */
const FilledRow = Schema.Struct({
  current: Schema.Boolean,
  balanceCents: Schema.NullOr(Schema.BigInt),
  warnings: Schema.NullOr(Schema.String),
  drops: RecordedDrops,
  rolls: Schema.Array(Schema.Struct(RollColumns))
})

/**
 * A battle waiting for players as a join works from it, read (`JoinStateRow`) or kept by this instance
 * (`waiting`): its row, its players and its rounds.
 */
interface WaitingBattle extends Omit<typeof JoinStateRow.Type, "players" | "joiner" | "receivers"> {
  readonly players: ReadonlyArray<typeof PlayerJson.Type>
}
/**
 * What a join knows besides the battle: each player's fairness state and the receivers (what a filling join rolls
 * and notifies with), and whether the battle was kept by this instance rather than read.
 */
interface Known {
  readonly stateOf: (userId: UserId) => NextRoll | undefined
  readonly receivers: Receivers | undefined
  /**
   * A kept battle's catalog version: its rounds' case names are that version's. The statement then also checks the
   * catalog is still at it and the receivers are still those remembered; a seating join keeps the battle it leaves.
   */
  readonly kept: { readonly catalogVersion: number } | undefined
}
/** What the join will be: the player, the lowest free slot, its team, the time. */
interface Joining {
  readonly player: Player
  readonly slot: number
  readonly team: number | null
  readonly at: Date
}

/** The most players a battle has: the seats and fairness states a join checks have this many places. */
const MAX_PLAYERS = 4

/** How many waiting battles an instance keeps for their joins (`waiting`; a few KB each, the rounds' ranges). */
const WAITING_KEPT = 10_000

const VerifiedRollRow = Schema.Struct({
  ...RollColumns,
  battleId: Schema.String,
  rangeStart: Schema.Number,
  rangeEnd: Schema.Number,
  battleSeedHash: Schema.NullOr(Schema.String)
})

const SettlementRow = Schema.Struct({
  id: Schema.String,
  type: SettlementType,
  userId: Schema.NullOr(UserId),
  roundNumber: Schema.NullOr(Schema.Number),
  ...ItemColumns
})

/** The seed a WAITING battle committed at creation (the database guarantees one). */
const seedOf = (battle: BattleRow): Effect.Effect<ServerSeed> =>
  battle.serverSeed === null || battle.serverSeedHash === null
    ? Effect.dieMessage(`Battle ${battle.id} has no committed server seed`)
    : Effect.succeed({ serverSeed: battle.serverSeed, serverSeedHash: battle.serverSeedHash })

const battleNotFound = () => NotFound.of("Battle")

export class Battles extends Effect.Service<Battles>()("app/Battles", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* Ledger
    const responsibleGaming = yield* ResponsibleGaming
    const runner = yield* BattleRun
    const fairness = yield* ProvablyFair
    const realtime = yield* Realtime
    const liveDrops = yield* LiveDrops
    const activeCases = yield* ActiveCases
    const outbox = yield* WebhookOutbox

    const transaction = inTransaction(sql)
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /**
     * The battles this instance created and still waiting for players, as it created or last joined them, with the
     * catalog version they were created at, by id, for their next join here (`joinAsKept`). Only a hint: the join's
     * statement checks the battle and its seats are still so, and a battle changed elsewhere (a join or a leave on
     * another instance) costs a read, never a wrong join. Forgotten when it fills, when anyone leaves it or joins
     * it another way here, and when a join finds it changed. Small: the rounds' ranges are those ActiveCases keeps.
     */
    const waiting = new Map<string, { readonly battle: WaitingBattle; readonly catalogVersion: number }>()
    const keep = (battle: WaitingBattle, catalogVersion: number) => {
      if (waiting.size >= WAITING_KEPT) waiting.clear()
      waiting.set(battle.id, { battle, catalogVersion })
    }
    const casesOf = (battle: WaitingBattle) => battle.rounds.map((r) => ({ id: r.id, name: r.caseName, priceCents: r.priceCents }))

    const battleColumns = sql.literal(
      "id::text AS id, creator_id, mode, max_players, status, entry_price_cents, player_count, fair_share_cents, " +
        "winners_count, created_at, finished_at, server_seed, server_seed_hash"
    )

    /** `GET /battles/:id`'s view of a battle's details. */
    const viewOf = (battle: typeof DetailsRow.Type) => ({
      id: battle.id,
      status: battle.status,
      serverSeedHash: battle.serverSeedHash,
      serverSeed: battle.status === "FINISHED" ? battle.serverSeed : null,
      mode: battle.mode,
      maxPlayers: battle.maxPlayers,
      entryPriceCents: battle.entryPriceCents,
      players: battle.players.map((p) => ({
        slot: p.slot,
        team: p.team,
        user: { id: p.userId, username: p.username },
        totalValueCents: p.totalValueCents,
        isWinner: p.isWinner
      })),
      cases: battle.cases,
      rounds: battle.rolls.map((r) => ({
        id: r.id,
        roundNumber: r.roundNumber,
        userId: r.userId,
        item: itemOf(r),
        roll: r.roll,
        serverSeedHash: r.serverSeedHash,
        // Rolls exist only once the battle is FINISHED (rolled and settled at once), so the seed is revealed.
        serverSeed: battle.status === "FINISHED" ? r.serverSeed : null,
        clientSeed: r.clientSeed,
        nonce: r.nonce
      })),
      createdAt: battle.createdAt,
      finishedAt: battle.finishedAt
    })

    /**
     * The views of `GET /battles/:id` for these battles, in the order given: one statement, the players,
     * cases and (`withRounds`) rolls of each battle as JSON arrays on its row.
     */
    const viewsOf = Effect.fnUntraced(function*(ids: ReadonlyArray<string | BattleId>, withRounds: boolean) {
      if (ids.length === 0) return []
      const details = yield* rowsOf(DetailsRow, sql`
          SELECT ${battleColumns},
            (SELECT COALESCE(json_agg(json_build_object('slot', p.slot, 'team', p.team, 'userId', p.user_id::text,
                                                        'username', u.username, 'totalValueCents', p.total_value_cents::text,
                                                        'isWinner', p.is_winner) ORDER BY p.slot), '[]')
             FROM battle_players p JOIN users u ON u.id = p.user_id WHERE p.battle_id = b.id) AS players,
            (SELECT COALESCE(json_agg(json_build_object('id', c.id::text, 'name', c.name, 'priceCents', bc.price_cents::text)
                                      ORDER BY bc.round_number), '[]')
             FROM battle_cases bc JOIN cases c ON c.id = bc.case_id WHERE bc.battle_id = b.id) AS cases,
            ${runner.rollsView(sql`battle_rolls`, sql`r.battle_id = b.id AND ${withRounds}`)} AS rolls
          FROM battles b WHERE ${
          // One battle by a scalar: PostgreSQL then keeps one generic plan of this statement, where for an array
          // (estimated at 10 battles) it plans each execution afresh, which cost more than running it.
          ids.length === 1 ? sql`b.id = ${ids[0]!}` : sql`b.id = ANY(${ids}::bigint[])`}`)
      const detailsOf = new Map(details.map((d) => [d.id, d]))
      return ids.flatMap((id) => {
        const battle = detailsOf.get(String(id))
        return battle === undefined ? [] : [viewOf(battle)]
      })
    })

    const findRow = (id: BattleId, lock: boolean) =>
      firstOf(BattleRow, sql`SELECT ${battleColumns} FROM battles WHERE id = ${id} ${sql.literal(lock ? "FOR UPDATE" : "")}`)

    const get = Effect.fn("Battles.get")(function*(id: BattleId) {
      const [view] = yield* viewsOf([id], true)
      return view ?? (yield* battleNotFound())
    })

    const list = Effect.fn("Battles.list")(function*(query: StatusPageRequest<BattleStatus>) {
      const { items, page, total } = yield* newestPage(
        sql,
        BattleRow,
        { table: "battles", alias: "battles", select: sql`SELECT ${battleColumns} FROM battles` },
        query,
        { status: query.status }
      )
      return { battles: yield* viewsOf(items.map((battle) => battle.id), false), total, page }
    })

    const teamOf = (mode: BattleMode, slot: number) => (mode === "TEAM" ? (slot <= 2 ? 1 : 2) : null)

    /**
     * docs/rules.md#battle-creation; the battle's server seed is committed here, its hash shown from the start. The
     * cases come as this instance keeps them (ActiveCases, usually no query); then one statement: the entry's debit,
     * which takes the battle's id from its sequence for its reference, with the battle, its rounds and the creator's
     * seat, which are written only when the debit is, and only while the catalog is at the version the cases were
     * read at. The answer is made from what these know, as `get` would read it. A catalog changed in between (an
     * administrator, within milliseconds) makes the creation read the cases again and start over: then it is 404,
     * or the entry at the new price; after CREATION_ATTEMPTS, 409 PleaseRetry.
     */
    const create = Effect.fnUntraced(function*(creator: Player, request: CreateBattleRequest) {
      for (let attempt = 0; attempt < CREATION_ATTEMPTS; attempt++) {
        const created = yield* createAsRead(creator, request)
        if (Option.isSome(created)) return created.value
        yield* activeCases.forget
      }
      return yield* new PleaseRetry()
    }, (effect) => effect.pipe(hotSpan("Battles.create")))

    /** `create`, or none when the catalog is not (or no longer) at the version of the cases read. */
    const createAsRead = Effect.fnUntraced(function*(creator: Player, request: CreateBattleRequest) {
      const found: Array<ActiveCase> = []
      for (const caseId of new Set(request.caseIds)) {
        const kase = yield* activeCases.get(caseId)
        if (Option.isNone(kase)) return yield* new CaseNotFound()
        found.push(kase.value)
      }
      const caseOf = new Map(found.map((kase) => [kase.id, kase]))
      const version = found[0]!.version
      // Cases kept at different versions: the catalog changed since one of them was read.
      if (!found.every((kase) => kase.version === version)) return Option.none()
      const rounds = request.caseIds.map((id) => caseOf.get(id)!)
      const entry = rounds.reduce((sum, c) => sum + c.priceCents, 0n)
      const at = yield* now
      const seed = yield* fairness.newServerSeed
      const team = teamOf(request.mode, 1)
      // Each round keeps its case's ranges and values as they are now (`items`, in roll order), so that editing the
      // case later cannot change a battle its players already paid for.
      const items = rounds.map((c) =>
        JSON.stringify(c.ranges.map((r) => ({
          itemId: String(r.itemId),
          rangeStart: r.rangeStart,
          rangeEnd: r.rangeEnd,
          valueCents: String(r.valueCents)
        })))
      )
      const posting = yield* responsibleGaming.stake(
        {
          userId: creator.id,
          type: "BATTLE_ENTRY",
          amountCents: entry,
          reference: { type: "BATTLE", id: sql`(SELECT id FROM new_battle)` }
        },
        {
          before: sql`new_battle AS (SELECT nextval(pg_get_serial_sequence('battles', 'id')) AS id)`,
          steps: sql`
            battle AS (
              INSERT INTO battles (id, creator_id, mode, max_players, entry_price_cents, player_count, server_seed,
                                   server_seed_hash, created_at)
              OVERRIDING SYSTEM VALUE
              SELECT new_battle.id, ${creator.id}, ${request.mode}, ${request.maxPlayers}, ${entry}, 1, ${seed.serverSeed},
                     ${seed.serverSeedHash}, ${at}
              FROM moved, new_battle
              RETURNING id
            ), rounds AS (
              INSERT INTO battle_cases (battle_id, round_number, case_id, price_cents, items)
              SELECT battle.id, r.round_number, r.case_id, r.price_cents, r.items
              FROM battle, unnest(${request.caseIds}::bigint[], ${rounds.map((c) => c.priceCents)}::bigint[], ${items}::jsonb[])
                           WITH ORDINALITY AS r(case_id, price_cents, items, round_number)
            ), creator AS (
              INSERT INTO battle_players (battle_id, slot, user_id, team, joined_at)
              SELECT battle.id, 1, ${creator.id}, ${team}::integer, ${at} FROM battle
            )`,
          onlyIf: activeCases.current(version)
        }
      ).pipe(Effect.catchIf(isRefusal, (refusal) =>
        // Refused: for the player's reasons, or because the catalog moved (then none, to start over).
        Effect.flatMap(singleOf(CurrentRow, sql`SELECT ${activeCases.current(version)} AS current`), ({ current }) =>
          current ? Effect.fail(refusal) : Effect.succeed(undefined))
      ))
      if (posting === undefined) return Option.none()
      // The debit's reference is the battle's id the statement took: there is one whenever the debit is.
      if (posting.referenceId === null) return yield* Effect.dieMessage("Battles.create: the entry's debit has no battle id")
      const id = posting.referenceId
      yield* realtime.balanceChanged(creator.id, posting.balanceAfterCents)
      const battle: WaitingBattle = {
        id: String(id),
        creatorId: creator.id,
        mode: request.mode,
        maxPlayers: request.maxPlayers,
        status: "WAITING",
        entryPriceCents: entry,
        playerCount: 1,
        fairShareCents: null,
        winnersCount: null,
        createdAt: at,
        finishedAt: null,
        serverSeed: seed.serverSeed,
        serverSeedHash: seed.serverSeedHash,
        players: [{ slot: 1, team, userId: creator.id, username: creator.username, totalValueCents: 0n, isWinner: false }],
        rounds: rounds.map((c, i) => ({
          roundNumber: i + 1,
          caseId: String(c.id),
          caseName: c.name,
          // The case's ranges as ActiveCases keeps them, shared by every battle of that case kept here.
          items: c.ranges,
          id: c.id,
          priceCents: c.priceCents
        }))
      }
      keep(battle, version)
      return Option.some(viewOf({ ...battle, cases: casesOf(battle), rolls: [] }))
    })

    /**
     * docs/rules.md#battle-joining. A join goes in one statement when it can: with no read for a battle this instance
     * keeps (`joinAsKept`), else after one read (`joinAsRead`); when what it worked from changed, or the join is
     * refused (not found, not open, already seated), it goes the careful way (`joinCarefully`), which tells the
     * refusals apart.
     */
    const join = Effect.fnUntraced(function*(player: Player, id: BattleId) {
      // A deadlock or serialization failure wrote nothing either: the careful way runs as a transaction, again on
      // such a conflict (`inTransaction`).
      const quick = yield* noneOnConflict(Effect.flatMap(
        joinAsKept(player, id),
        (kept) => Option.isSome(kept) ? Effect.succeed(kept) : joinAsRead(player, id)
      ))
      const joined = Option.isSome(quick) ? quick.value : yield* joinCarefully(player.id, id)
      yield* gameRound("battle_join", joined.entryPriceCents)
      yield* realtime.balanceChanged(player.id, joined.balanceCents)
      yield* liveDrops.announceRecorded(joined.drops)
      // The careful way reads the battle back; the one statement's answer is made from what it knows.
      return joined.view ?? (yield* get(id))
    }, (effect) => effect.pipe(hotSpan("Battles.join")))

    /**
     * A join of a battle as this instance keeps it, with the players' fairness states and the receivers as it knows
     * them (a filling join's): no read. The statement checks them all as it checks what `joinAsRead` read, and the
     * catalog's version (the rounds' case names in the answer). None (the battle forgotten, and the join reads) when
     * one of them is not known here or is no longer so.
     */
    const joinAsKept = Effect.fnUntraced(function*(player: Player, id: BattleId) {
      const kept = waiting.get(String(id))
      if (kept === undefined) return Option.none()
      const receivers = outbox.remembered("battle.finished")
      const joined = yield* joinWith(player, id, kept.battle, {
        stateOf: fairness.remembered,
        receivers,
        kept: { catalogVersion: kept.catalogVersion }
      })
      if (Option.isNone(joined)) waiting.delete(String(id))
      return joined
    })

    /**
     * A join as an opening is made: the battle, its players with their fairness states and its rounds read at once (no
     * lock), then ONE statement that takes effect only while the battle and its seats are as read and the player's
     * balance and limits allow the entry: the battle row and the seats are locked (`battle_state`, `seats`; a player
     * who left and another who joined leave the count as it was, hence the seats), the entry debited (`moved`, the
     * limits in its WHERE), and only when the debit has its row is the rest written: `seatingWrite` when the battle
     * still waits for players, `fillingWrite` when this join fills it. Nothing of it exists unless all of it does,
     * without a transaction. The answer is made from what the read and the statement know. None (the careful way
     * then) when the battle is not open, the player is seated, the settlement needs the catalog, or what was read
     * changed.
     */
    const joinAsRead = Effect.fnUntraced(function*(player: Player, id: BattleId) {
      const read = yield* firstOf(JoinStateRow, sql`
        SELECT ${battleColumns},
          (SELECT COALESCE(json_agg(json_build_object('slot', p.slot, 'team', p.team, 'userId', p.user_id::text,
                                                      'username', u.username, 'totalValueCents', p.total_value_cents::text,
                                                      'isWinner', p.is_winner, 'fairness', ${nextRollJson(sql`f`)}) ORDER BY p.slot), '[]')
           FROM battle_players p JOIN users u ON u.id = p.user_id LEFT JOIN fairness_seeds f ON f.user_id = p.user_id
           WHERE p.battle_id = b.id) AS players,
          (SELECT COALESCE(json_agg(json_build_object('roundNumber', bc.round_number, 'caseId', bc.case_id::text,
                                                      'id', bc.case_id::text, 'caseName', c.name,
                                                      'priceCents', bc.price_cents::text, 'items', bc.items)
                                    ORDER BY bc.round_number), '[]')
           FROM battle_cases bc JOIN cases c ON c.id = bc.case_id WHERE bc.battle_id = b.id) AS rounds,
          (SELECT ${nextRollJson(sql`f`)} FROM fairness_seeds f WHERE f.user_id = ${player.id}) AS joiner,
          ${outbox.receiversOf("battle.finished")} AS receivers
        FROM battles b WHERE b.id = ${id}`)
      if (read === undefined) return Option.none()
      yield* outbox.remember("battle.finished", read.receivers)
      const stateOf = (userId: UserId) =>
        (userId === player.id ? read.joiner : read.players.find((p) => p.userId === userId)?.fairness) ?? undefined
      return yield* joinWith(player, id, read, { stateOf, receivers: read.receivers, kept: undefined })
    })

    /** A fairness state as a JSON column (`NextRollRow`), null when there is none; `f` is a `fairness_seeds` row. */
    const nextRollJson = (f: Statement.Fragment) => sql`
      CASE WHEN ${f}.user_id IS NOT NULL THEN json_build_object('clientSeed', ${f}.client_seed, 'nonce', ${f}.nonce::text,
                                                              'nextServerSeed', ${f}.next_server_seed,
                                                              'nextServerSeedHash', ${f}.next_server_seed_hash) END`

    /** The join of `battle` as kept or read: none when it is not open to the player; the seating or filling write. */
    const joinWith = Effect.fnUntraced(function*(player: Player, id: BattleId, battle: WaitingBattle, known: Known) {
      if (
        battle.status !== "WAITING" || battle.playerCount >= battle.maxPlayers ||
        battle.players.some((p) => p.userId === player.id)
      ) return Option.none()
      const taken = new Set(battle.players.map((p) => p.slot))
      const slot = Array.from({ length: battle.maxPlayers }, (_, i) => i + 1).find((n) => !taken.has(n))!
      const joining = { player, slot, team: teamOf(battle.mode, slot), at: yield* now }
      return yield* (battle.playerCount === battle.maxPlayers - 1
        ? fillingWrite(id, battle, joining, known)
        : seatingWrite(id, battle, joining, known))
    })

    /**
     * What was read or kept of the battle and its seats, still so (see `joinAsRead`); `battle_state` and `seats` as
     * steps. The battle's fixed fields that the join debits and rolls with are compared too (an id is never used
     * twice, but a restored database could give one to another battle), and for a kept battle, the catalog's version.
     */
    const battleAsRead = (id: BattleId, battle: WaitingBattle, { kept }: Known) => {
      const seat = (i: number) => battle.players[i] ?? null
      return {
        steps: sql`
          battle_state AS (
            SELECT id FROM battles
            WHERE id = ${id} AND status = 'WAITING' AND player_count = ${battle.playerCount}
              AND entry_price_cents = ${battle.entryPriceCents} AND server_seed_hash = ${battle.serverSeedHash}
            FOR UPDATE
          ),
          seats AS (
            SELECT slot FROM battle_players
            WHERE battle_id = ${id} AND EXISTS (SELECT 1 FROM battle_state)
              AND ${sql.or(Array.from({ length: MAX_PLAYERS }, (_, i) =>
                sql`(slot = ${seat(i)?.slot ?? null}::integer AND user_id = ${seat(i)?.userId ?? null}::bigint)`))}
            FOR SHARE
          )`,
        // Only rows a statement locks are checked at their latest version, hence the locks; the seats are looked at
        // only once the battle row is held.
        current: sql`EXISTS (SELECT 1 FROM battle_state) AND (SELECT count(*) FROM seats) = ${battle.players.length}${
          kept === undefined ? sql`` : sql` AND ${activeCases.current(kept.catalogVersion)}`}`
      }
    }

    /** The players as the answer shows them, the joiner among them. */
    const playersWith = (battle: WaitingBattle, joining: Joining, outcome?: { totalOf: ReadonlyMap<UserId, bigint>; winnerIds: ReadonlySet<UserId> }) =>
      [
        ...battle.players.map(({ slot, team, userId, username, totalValueCents, isWinner }) => ({ slot, team, userId, username, totalValueCents, isWinner })),
        { slot: joining.slot, team: joining.team, userId: joining.player.id, username: joining.player.username, totalValueCents: 0n, isWinner: false }
      ].map((p) => outcome === undefined ? p : { ...p, totalValueCents: outcome.totalOf.get(p.userId)!, isWinner: outcome.winnerIds.has(p.userId) })
        .sort((a, b) => a.slot - b.slot)

    /** A join that leaves the battle WAITING: the seat and the battle's count, written with the debit; a kept battle kept so. */
    const seatingWrite = Effect.fnUntraced(function*(id: BattleId, battle: WaitingBattle, joining: Joining, known: Known) {
      const { at, player, slot, team } = joining
      const entry = battle.entryPriceCents
      const asRead = battleAsRead(id, battle, known)
      const written = yield* singleOf(SeatedRow, sql`
        WITH
        ${asRead.steps},
        checked AS (SELECT ${asRead.current} AS current),
        ${ledger.debitSteps(
          { userId: player.id, type: "BATTLE_ENTRY", amountCents: entry, reference: { type: "BATTLE", id } },
          at,
          sql`(SELECT current FROM checked) AND ${responsibleGaming.within(entry)(at)}`
        )},
        seat AS (
          INSERT INTO battle_players (battle_id, slot, user_id, team, joined_at)
          SELECT ${id}, ${slot}, ${player.id}, ${team}::integer, ${at} FROM moved
        ),
        counted AS (
          UPDATE battles SET player_count = player_count + 1 WHERE id = ${id} AND EXISTS (SELECT 1 FROM moved)
        ),
        ${responsibleGaming.playWarningSteps(player.id, at, sql`moved`)}
        SELECT (SELECT current FROM checked) AS current, (SELECT balance_cents FROM moved) AS balance_cents,
               (SELECT limits FROM warned) AS warnings`)
      if (!written.current) return Option.none()
      if (written.balanceCents === null) return yield* responsibleGaming.refused(player.id, entry, at, new InsufficientBalance())
      yield* afterCommit(responsibleGaming.warn(player.id, written.warnings))
      const seated: WaitingBattle = { ...battle, playerCount: battle.playerCount + 1, players: playersWith(battle, joining) }
      if (known.kept !== undefined) keep(seated, known.kept.catalogVersion)
      const view = viewOf({ ...seated, cases: casesOf(battle), rolls: [] })
      return Option.some({ balanceCents: written.balanceCents, drops: [], entryPriceCents: entry, view })
    })

    /**
     * The join that fills the battle: the rolls and the settlement computed from the battle and the fairness states,
     * and besides the battle and its seats, every player's fairness state locked as known (`fair_state`), and the
     * receivers checked when the battle is kept; only when the debit has its row are the seat, the nonces, the rolls,
     * the settlement, the drops, the battle FINISHED and the webhook's deliveries written. None when a state or the
     * receivers are not known.
     */
    const fillingWrite = Effect.fnUntraced(function*(id: BattleId, battle: WaitingBattle, joining: Joining, known: Known) {
      const { at, player, slot, team } = joining
      const { kept, receivers, stateOf } = known
      if (receivers === undefined) return Option.none()
      const seed = yield* seedOf(battle)
      const rolling: Array<RollingPlayer & { readonly state: NextRoll }> = []
      for (const p of [...battle.players, { slot, team, userId: player.id }]) {
        const state = stateOf(p.userId)
        if (state === undefined) return Option.none()
        rolling.push({ slot: p.slot, team: p.team, userId: p.userId, clientSeed: state.clientSeed, firstNonce: state.nonce + 1, state })
      }
      const found = yield* runner.outcomeOf(battle.mode, seed, rolling, battle.rounds, false)
      if (Option.isNone(found)) return Option.none()
      const outcome = found.value
      const entry = battle.entryPriceCents
      const totalOf = new Map(outcome.totals.map((p) => [p.userId, p.totalValueCents]))
      const winnerIds = new Set(outcome.winners.map((w) => w.userId))
      const place = (i: number) => rolling[i] ?? null
      const asBattle = battleAsRead(id, battle, known)
      // Each fairness state as known too, looked at once the battle row is held; the receivers, for a kept battle.
      const asRead = sql`${asBattle.current} AND (SELECT count(*) FROM fair_state) = ${rolling.length}${
        kept === undefined ? sql`` : sql` AND ${outbox.unchanged("battle.finished", receivers)}`}`
      const written = yield* singleOf(FilledRow, sql`
        WITH
        ${asBattle.steps},
        fair_state AS (
          SELECT user_id FROM fairness_seeds
          WHERE EXISTS (SELECT 1 FROM battle_state)
            AND ${sql.or(Array.from({ length: MAX_PLAYERS }, (_, i) =>
              sql`(user_id = ${place(i)?.userId ?? null}::bigint AND nonce = ${place(i) === null ? null : place(i)!.firstNonce - 1}::bigint
                   AND client_seed = ${place(i)?.clientSeed ?? null}::text)`))}
          ORDER BY user_id FOR UPDATE
        ),
        checked AS (SELECT ${asRead} AS current),
        ${ledger.debitSteps(
          { userId: player.id, type: "BATTLE_ENTRY", amountCents: entry, reference: { type: "BATTLE", id } },
          at,
          sql`(SELECT current FROM checked) AND ${responsibleGaming.within(entry)(at)}`
        )},
        seat AS (
          INSERT INTO battle_players (battle_id, slot, user_id, team, joined_at, total_value_cents, is_winner)
          SELECT ${id}, ${slot}, ${player.id}, ${team}::integer, ${at}, ${totalOf.get(player.id)!}, ${winnerIds.has(player.id)}
          FROM moved
        ),
        nonces AS (
          UPDATE fairness_seeds SET nonce = nonce + ${battle.rounds.length}, updated_at = ${at}
          WHERE user_id IN (SELECT user_id FROM fair_state) AND EXISTS (SELECT 1 FROM moved)
        ),
        ${runner.finishSteps({
          battleId: id,
          seed,
          rounds: battle.rounds,
          outcome,
          seated: outcome.totals.filter((p) => p.userId !== player.id),
          joined: 1,
          at,
          onlyIf: sql`EXISTS (SELECT 1 FROM moved)`
        })},
        ${receivers.length === 0
          // No receiver, no step: one that inserts nothing still costs its start-up in every execution.
          ? sql``
          : sql`${outbox.deliveriesStep("battle.finished", finishedEvent(id, outcome), receivers, at, sql`EXISTS (SELECT 1 FROM moved)`)},`}
        ${responsibleGaming.playWarningSteps(player.id, at, sql`moved`)}
        SELECT (SELECT current FROM checked) AS current,
               (SELECT balance_cents FROM moved) AS balance_cents,
               (SELECT limits FROM warned) AS warnings,
               ${liveDrops.recorded(sql`dropped`)} AS drops,
               ${runner.rollsView(sql`rolled`)} AS rolls`)
      if (!written.current) return Option.none()
      if (written.balanceCents === null) return yield* responsibleGaming.refused(player.id, entry, at, new InsufficientBalance())
      waiting.delete(String(id))
      // The battle took each player's next nonces; the committed next seeds stay.
      yield* Effect.forEach(rolling, ({ state, userId }) =>
        fairness.rolled(userId, state, battle.rounds.length, { serverSeed: state.nextServerSeed, serverSeedHash: state.nextServerSeedHash }), { discard: true })
      yield* afterCommit(responsibleGaming.warn(player.id, written.warnings))
      const view = viewOf({
        ...battle,
        status: "FINISHED",
        playerCount: battle.maxPlayers,
        fairShareCents: outcome.settlement.fairShare,
        winnersCount: outcome.winners.length,
        finishedAt: at,
        players: playersWith(battle, joining, { totalOf, winnerIds }),
        cases: casesOf(battle),
        rolls: written.rolls
      })
      return Option.some({ balanceCents: written.balanceCents, drops: written.drops, entryPriceCents: entry, view })
    })

    /** The careful way of a join: one transaction, the battle row locked first (see the top of this file). */
    const joinCarefully = Effect.fnUntraced(function*(userId: UserId, id: BattleId) {
      waiting.delete(String(id))
      const at = yield* now
      return yield* transaction(joinInTransaction(userId, id, at))
    })

    /** What `joinCarefully` runs in its transaction: the battle locked by its update, a seat taken, the stake. */
    const joinInTransaction = Effect.fnUntraced(function*(userId: UserId, id: BattleId, at: Date) {
      const battle = yield* firstOf(BattleRow, sql`
        UPDATE battles SET player_count = player_count + 1
        WHERE id = ${id} AND status = 'WAITING' AND player_count < max_players
        RETURNING ${battleColumns}`)
      if (battle === undefined) {
        return yield* (yield* findRow(id, false)) === undefined ? battleNotFound() : new BattleNotOpen()
      }
      // The lowest free slot, unless the user already has one (read after the update above took the battle's
      // lock, so every join before this one is seen).
      const seated = yield* firstOf(SlotRow, sql`
        WITH seats AS (SELECT user_id, slot FROM battle_players WHERE battle_id = ${id})
        INSERT INTO battle_players (battle_id, slot, user_id, team, joined_at)
        SELECT ${id}, free.slot, ${userId}, (${[1, 2, 3, 4].map((slot) => teamOf(battle.mode, slot))}::integer[])[free.slot], ${at}
        FROM (SELECT min(n) AS slot FROM generate_series(1, 4) n WHERE n NOT IN (SELECT slot FROM seats)) free
        WHERE NOT EXISTS (SELECT 1 FROM seats WHERE user_id = ${userId})
        RETURNING slot`)
      if (seated === undefined) return yield* new AlreadyJoined()
      const posting = yield* responsibleGaming.stake({
        userId,
        type: "BATTLE_ENTRY",
        amountCents: battle.entryPriceCents,
        reference: { type: "BATTLE", id }
      })
      const drops = battle.playerCount === battle.maxPlayers ? yield* runner.run(id, battle.mode, yield* seedOf(battle)) : []
      return { balanceCents: posting.balanceAfterCents, drops, entryPriceCents: battle.entryPriceCents, view: undefined }
    })

    /**
     * WAITING only: a player gets the entry back; the creator leaving cancels and refunds everyone
     * (docs/rules.md#battle-joining).
     */
    const leave = Effect.fn("Battles.leave")(function*(userId: UserId, id: BattleId) {
      waiting.delete(String(id))
      const at = yield* now
      const refunds = yield* transaction(leaveInTransaction(userId, id, at))
      yield* Effect.forEach(refunds, (r) => realtime.balanceChanged(r.userId, r.balanceCents), { discard: true })
      return yield* get(id)
    })

    /** What `leave` runs in its transaction: the leaving seats (all of them when the creator leaves) refunded. */
    const leaveInTransaction = Effect.fnUntraced(function*(userId: UserId, id: BattleId, at: Date) {
      const battle = yield* findRow(id, true)
      if (battle === undefined) return yield* battleNotFound()
      if (battle.status !== "WAITING") return yield* new BattleNotOpen()
      const seats = yield* rowsOf(SeatRow, sql`SELECT user_id, slot FROM battle_players WHERE battle_id = ${id} ORDER BY slot`)
      if (!seats.some((s) => s.userId === userId)) return yield* new NotInBattle()
      const leaving = userId === battle.creatorId ? seats : seats.filter((s) => s.userId === userId)
      if (userId === battle.creatorId) {
        yield* execute(sql`UPDATE battles SET status = 'CANCELLED', finished_at = ${at} WHERE id = ${id}`)
      } else {
        yield* execute(sql`DELETE FROM battle_players WHERE battle_id = ${id} AND user_id = ${userId}`)
        yield* execute(sql`UPDATE battles SET player_count = player_count - 1 WHERE id = ${id}`)
      }
      const entries = yield* rowsOf(EntryRow, sql`
        SELECT DISTINCT ON (user_id) user_id, created_at AS paid_at FROM transactions
        WHERE type = 'BATTLE_ENTRY' AND reference_type = 'BATTLE' AND reference_id = ${id}
          AND user_id = ANY(${leaving.map((seat) => String(seat.userId))}::bigint[])
        ORDER BY user_id, id DESC`)
      const paidAt = new Map(entries.map((entry) => [entry.userId, entry.paidAt]))
      const refunds: Array<{ userId: UserId; balanceCents: bigint }> = []
      for (const seat of leaving) {
        const posting = yield* ledger.credit({
          userId: seat.userId,
          type: "BATTLE_REFUND",
          amountCents: battle.entryPriceCents,
          reference: { type: "BATTLE", id },
          stakedAt: paidAt.get(seat.userId) ?? at
        })
        refunds.push({ userId: seat.userId, balanceCents: posting.balanceAfterCents })
      }
      return refunds
    })

    /** `GET /battles/:id/settlements` (docs/rules.md#battle-settlement); 409 before the battle is FINISHED. */
    const settlements = Effect.fn("Battles.settlements")(function*(id: BattleId) {
      const battle = yield* findRow(id, false)
      if (battle === undefined) return yield* battleNotFound()
      if (battle.status !== "FINISHED") return yield* new BattleNotFinished()
      if (battle.fairShareCents === null) return yield* Effect.dieMessage(`Battle ${id} is FINISHED with no fair share`)
      const records = yield* rowsOf(SettlementRow, sql`
        SELECT s.id::text AS id, s.type, s.user_id, s.round_number, s.item_id, i.name AS item_name, i.rarity,
               s.value_cents, i.image_url
        FROM battle_settlements s JOIN items i ON i.id = s.item_id
        WHERE s.battle_id = ${id} ORDER BY s.id`)
      const sumOf = (type: SettlementType) =>
        records.filter((r) => r.type === type).reduce((sum, r) => sum + r.valueCents, 0n)
      return {
        battleId: battle.id,
        fairSharePerWinner: Number(battle.fairShareCents),
        settlements: records.map((r) => ({
          id: r.id,
          type: r.type,
          userId: r.userId,
          item: { id: r.itemId, name: r.itemName, valueCents: r.valueCents, imageUrl: r.imageUrl },
          roundNumber: r.roundNumber
        })),
        summary: {
          totalDropped: sumOf("DROPPED") + sumOf("REMOVED_TO_POOL"),
          removedToPool: sumOf("REMOVED_TO_POOL"),
          addedFromPool: sumOf("ADDED_FROM_POOL"),
          winnersCount: battle.winnersCount!
        }
      }
    })

    /**
     * `GET /provably-fair/verify/:id?type=battle-roll`: for the battle's players and administrators,
     * once the battle is FINISHED; anyone else (or earlier) gets 404 (docs/rules.md#verification-access).
     */
    const verifyRoll = Effect.fn("Battles.verifyRoll")(function*(requester: SignedInUser, rollId: BattleRollId) {
      const r = yield* firstOf(VerifiedRollRow, sql`
        SELECT r.id, r.battle_id::text AS battle_id, r.round_number, r.user_id, r.roll, r.server_seed, r.server_seed_hash,
               r.client_seed, r.nonce, r.range_start, r.range_end, r.item_id, i.name AS item_name, i.rarity,
               r.value_cents, i.image_url, b.server_seed_hash AS battle_seed_hash
        FROM battle_rolls r JOIN items i ON i.id = r.item_id JOIN battles b ON b.id = r.battle_id
        WHERE r.id = ${rollId} AND b.status = 'FINISHED'
          AND (${requester.role === "ADMIN"} OR EXISTS (
            SELECT 1 FROM battle_players p WHERE p.battle_id = r.battle_id AND p.user_id = ${requester.id}))`)
      if (r === undefined) return yield* NotFound.of("Battle roll")
      const calculatedRoll = caseRoll(r.serverSeed, r.clientSeed, r.nonce)
      return {
        rollId: r.id,
        battleId: r.battleId,
        roundNumber: r.roundNumber,
        userId: r.userId,
        serverSeed: r.serverSeed,
        serverSeedHash: r.serverSeedHash,
        clientSeed: r.clientSeed,
        nonce: r.nonce,
        roll: r.roll,
        calculatedRoll,
        item: itemOf(r),
        // A battle with a committed seed (every battle created since seeds are committed ahead) rolled every round with it.
        isValid: hashServerSeed(r.serverSeed) === r.serverSeedHash && calculatedRoll === r.roll &&
          r.rangeStart <= r.roll && r.roll <= r.rangeEnd &&
          (r.battleSeedHash === null || r.battleSeedHash === r.serverSeedHash)
      }
    })

    return { create, join, leave, get, list, settlements, verifyRoll } as const
  }),
  dependencies: [
    ActiveCases.Default,
    WebhookOutbox.Default,
    BattleRun.Default,
    Ledger.Default,
    ProvablyFair.Default,
    Realtime.Default,
    LiveDrops.Default,
    ResponsibleGaming.Default
  ]
}) {}
