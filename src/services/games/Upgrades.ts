/**
 * Upgrades (docs/rules.md#upgrades): a user stakes one inventory entry for a chance at a
 * more valuable catalog item.
 *
 * Under the user's lock (`user:<id>`, the key case openings use, so a user's openings and upgrades
 * never interleave), in one atomic write:
 *   1. stakes the entry: a conditional update AVAILABLE -> UPGRADED of the user's oldest AVAILABLE
 *      entry of `fromItemId` (or of the given entry, which must be of `fromItemId`); no row: ItemNotAvailable;
 *   2. validates the target and the odds (`upgradeOdds`); a refusal stakes nothing;
 *   3. takes the committed server seed and the next nonce (only for an upgrade that goes ahead: a refused
 *      one consumes neither, docs/rules.md#nonce), commits a fresh seed in its place, and rolls;
 *   4. records the upgrade and, on success, adds the target to the inventory (source UPGRADE) and
 *      records a live drop, announced after the commit.
 * The usual upgrade is ONE statement, as an opening (`attempt`): the odds and the roll are computed from the
 * items and the user's fairness state as this instance last read them, and the statement writes only while
 * both are still current and the player's limits allow the play. Anything else (an item or a fairness state
 * that changed, a refusal of any kind) goes the careful way (`careful`): a transaction that reads, checks
 * in the order of the rules and writes.
 * Correctness does not depend on the lock: the conditional update lets exactly one of any number of
 * concurrent upgrades stake an entry (and migration 0006 makes a second upgrade row for it impossible).
 * No money moves (docs/rules.md#ledger-checks).
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect, Either, Option, Schema } from "effect"
import { Broadcast } from "../../layers/stores/Broadcast"
import { UserLock } from "../../layers/stores/UserLock"
import { NotFound } from "../../schema/platform/Errors"
import { ItemId, type UserId } from "../../schema/platform/Ids"
import type { PageRequest } from "../../schema/platform/Pagination"
import { InventoryItemId, ItemNotAvailable } from "../../schema/games/Inventory"
import {
  InvalidUpgrade,
  ItemNotUpgradable,
  MultiplierTooHigh,
  ProbabilityTooLow,
  type UpgradeHistory,
  UpgradeId,
  type UpgradeProbability,
  type UpgradeRequest,
  type UpgradeResult,
  type UpgradeVerification
} from "../../schema/games/Upgrade"
import { Rarity } from "../../schema/games/Catalog"
import type { Player, Role } from "../../schema/identity/User"
import { ResponsibleGaming } from "../identity/ResponsibleGaming"
import { LiveDrops } from "./LiveDrops"
import { hashServerSeed, type NextRoll, ProvablyFair, upgradeRoll, upgradeSucceeds, upgradeThreshold } from "./ProvablyFair"
import { afterCommit, firstOf, inTransaction, noneOnConflict, rowsOf, singleOf, windowOf } from "../platform/SqlRows"
import { gameRound } from "../../layers/AppMetrics"
import { hotSpan } from "../../layers/HotSpans"

interface UpgradeRules {
  /** The house edge in percent: 10 (docs/rules.md#upgrade-odds). */
  readonly houseEdgePercent: number
  /** The probability is clamped to 0.01 .. 0.90. */
  readonly minProbability: number
  readonly maxProbability: number
  /** The target may be worth at most 10 times the source. */
  readonly maxMultiplier: number
}

export const UPGRADE_RULES: UpgradeRules = {
  houseEdgePercent: 10,
  minProbability: 0.01,
  maxProbability: 0.9,
  maxMultiplier: 10
}

const clampProbability = (probability: number, rules: UpgradeRules = UPGRADE_RULES): number =>
  Math.min(rules.maxProbability, Math.max(rules.minProbability, probability))

interface UpgradeOdds {
  /** Clamped to 0.01 .. 0.90. */
  readonly probability: number
  /** floor(probability x 100000): the upgrade succeeds exactly when roll < threshold. */
  readonly threshold: number
}

type OddsError = InvalidUpgrade | MultiplierTooHigh | ProbabilityTooLow

/**
 * probability = (from / to) x (1 - houseEdge), clamped to 0.01 .. 0.90 (docs/rules.md#upgrade-odds).
 * Checked in this order: the target must be worth strictly more (InvalidUpgrade), at most 10 times
 * more (MultiplierTooHigh, compared in integers: to > 10 x from), and the UNCLAMPED probability must
 * be at least 0.01 (ProbabilityTooLow): a chance below the floor is refused rather than silently
 * raised to 1%, which would give the player better odds than the formula.
 *
 * With today's numbers both clamps and ProbabilityTooLow are unreachable: 1 < to/from <= 10 puts the
 * raw probability in [0.09, 0.90). They stay, as the rules state them (docs/rules.md#upgrade-refusals), for
 * other parameters (tests pass some).
 *
 * The raw probability is one correctly rounded division of integers, so a probability with a short
 * decimal form (0.45) is exactly that double and its threshold is exact (`upgradeThreshold`).
 */
export const upgradeOdds = (
  fromValueCents: bigint,
  toValueCents: bigint,
  rules: UpgradeRules = UPGRADE_RULES
): Either.Either<UpgradeOdds, OddsError> => {
  if (toValueCents <= fromValueCents) return Either.left(new InvalidUpgrade())
  if (Number.isFinite(rules.maxMultiplier) && toValueCents > BigInt(rules.maxMultiplier) * fromValueCents) {
    return Either.left(new MultiplierTooHigh())
  }
  const raw = Number(fromValueCents * BigInt(100 - rules.houseEdgePercent)) / Number(toValueCents * 100n)
  if (raw < rules.minProbability) return Either.left(new ProbabilityTooLow())
  const probability = clampProbability(raw, rules)
  return Either.right({ probability, threshold: upgradeThreshold(probability) })
}

/** An item as an upgrade records it. */
interface ItemRef {
  readonly id: ItemId
  readonly name: string
  readonly valueCents: bigint
}

/** "45.00" for 0.45. */
const probabilityPercent = (probability: number): string => (probability * 100).toFixed(2)

const ItemRow = Schema.Struct({
  id: ItemId,
  name: Schema.String,
  valueCents: Schema.BigInt,
  isUpgradable: Schema.Boolean
})

const VerifyRow = Schema.Struct({
  id: UpgradeId,
  userId: Schema.String,
  serverSeed: Schema.String,
  serverSeedHash: Schema.String,
  clientSeed: Schema.String,
  nonce: Schema.NumberFromString,
  roll: Schema.Number,
  probability: Schema.Number,
  threshold: Schema.Number,
  success: Schema.Boolean
})

const HistoryRow = Schema.Struct({
  id: UpgradeId,
  fromName: Schema.String,
  fromValueCents: Schema.BigInt,
  toName: Schema.String,
  toValueCents: Schema.BigInt,
  probability: Schema.Number,
  success: Schema.Boolean,
  createdAt: Schema.DateFromSelf
})

/** What the first statement of a careful upgrade found (`stake`); an item's columns are null when it does not exist. */
const StakedRow = Schema.Struct({
  played: Schema.Boolean,
  stakedId: Schema.NullOr(InventoryItemId),
  fairCurrent: Schema.Boolean,
  fromId: Schema.NullOr(ItemId),
  fromName: Schema.NullOr(Schema.String),
  fromValueCents: Schema.NullOr(Schema.BigInt),
  toId: Schema.NullOr(ItemId),
  toName: Schema.NullOr(Schema.String),
  toValueCents: Schema.NullOr(Schema.BigInt),
  toIsUpgradable: Schema.NullOr(Schema.Boolean)
})
const WrittenRow = Schema.Struct({ upgradeId: UpgradeId, dropId: Schema.NullOr(Schema.String), warnings: Schema.NullOr(Schema.String) })

/** What the one statement of an upgrade wrote: nothing (`upgradeId` null) unless all it was computed from held. */
const AttemptRow = Schema.Struct({
  fairCurrent: Schema.Boolean,
  catalogCurrent: Schema.Boolean,
  upgradeId: Schema.NullOr(UpgradeId),
  dropId: Schema.NullOr(Schema.String),
  warnings: Schema.NullOr(Schema.String)
})

/** A catalog item as an upgrade needs it, with the catalog's version it was read at. */
const CatalogItemRow = Schema.Struct({
  id: ItemId,
  name: Schema.String,
  rarity: Rarity,
  valueCents: Schema.BigInt,
  imageUrl: Schema.String,
  isUpgradable: Schema.Boolean,
  catalogVersion: Schema.NumberFromString
})
type CatalogItem = typeof CatalogItemRow.Type

/** The seeds an upgrade rolls with. */
interface Seeds {
  readonly serverSeed: string
  readonly serverSeedHash: string
  readonly clientSeed: string
  readonly nonce: number
  readonly nextServerSeedHash: string
}

/** What an upgrade did, for what follows its commit. */
interface Outcome {
  readonly result: UpgradeResult
  /** The user's fairness state as this write left it, remembered. */
  readonly rolled: Effect.Effect<void>
  readonly warnings: string | null
  readonly stakeCents: bigint
  readonly awardCents: bigint
  /** The live drop's publication (none on failure). */
  readonly announce: Effect.Effect<void>
}

const StatsRow = Schema.Struct({
  totalUpgrades: Schema.Number,
  successCount: Schema.Number,
  totalValueWon: Schema.BigInt,
  totalValueLost: Schema.BigInt,
  totalStaked: Schema.BigInt
})

const fromEither = <A, E>(either: Either.Either<A, E>) => Either.match(either, { onLeft: Effect.fail, onRight: Effect.succeed })

export class Upgrades extends Effect.Service<Upgrades>()("app/Upgrades", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const transaction = inTransaction(sql)
    const lock = yield* UserLock
    const fairness = yield* ProvablyFair
    const responsibleGaming = yield* ResponsibleGaming
    const liveDrops = yield* LiveDrops
    const broadcast = yield* Broadcast

    const itemById = (id: ItemId) => sql`SELECT id, name, value_cents, is_upgradable FROM items WHERE id = ${id}`
    const findItem = (id: ItemId) => firstOf(ItemRow, itemById(id))

    /** docs/rules.md#upgrade-refusals, then the odds: the target, and the odds of `from` against it. */
    const oddsAgainst = Effect.fnUntraced(function*(from: typeof ItemRow.Type, toItemId: ItemId) {
      const to = yield* findItem(toItemId)
      if (to === undefined || !to.isUpgradable) return yield* new ItemNotUpgradable()
      const odds = yield* fromEither(upgradeOdds(from.valueCents, to.valueCents))
      return { to, odds }
    })

    /**
     * `GET /upgrades/probability`. Order: the source item exists (404 `Item not found`), the target
     * exists and is upgradable, then `upgradeOdds` (value, multiplier, probability too low).
     */
    const probability = Effect.fn("Upgrades.probability")(function*(fromItemId: ItemId, toItemId: ItemId) {
      const from = yield* findItem(fromItemId)
      if (from === undefined) return yield* NotFound.of("Item")
      const { odds, to } = yield* oddsAgainst(from, toItemId)
      return {
        fromItem: { id: from.id, name: from.name, valueCents: from.valueCents },
        toItem: { id: to.id, name: to.name, valueCents: to.valueCents },
        probability: odds.probability,
        probabilityPercent: probabilityPercent(odds.probability)
      } satisfies UpgradeProbability
    })

    /** The entry an upgrade stakes: the user's oldest AVAILABLE one of the item, or the one asked for (of that item). */
    const stakeable = (userId: UserId, request: UpgradeRequest) => sql`
      SELECT id FROM inventory_items
      WHERE ${
      sql.and([
        sql`user_id = ${userId}`,
        sql`item_id = ${request.fromItemId}`,
        sql`status = 'AVAILABLE'`,
        ...(request.inventoryItemId === undefined ? [] : [sql`id = ${request.inventoryItemId}`])
      ])
    }
      ORDER BY acquired_at, id
      LIMIT 1
      FOR UPDATE SKIP LOCKED`

    /**
     * The steps that record an upgrade of the entry in `staked` (a relation with its `id`; nothing when it is empty):
     * `upgrade`, on success the target's inventory `entry`, and its live drop `dropped`.
     */
    const recordSteps = (
      userId: UserId,
      staked: Statement.Fragment,
      play: { readonly from: ItemRef; readonly to: ItemRef; readonly odds: UpgradeOdds; readonly seeds: Seeds },
      roll: number,
      success: boolean,
      now: Date
    ) => {
      const { from, odds, seeds, to } = play
      return sql`
        upgrade AS (
          INSERT INTO upgrades (user_id, inventory_item_id, from_item_id, to_item_id, from_value_cents, to_value_cents,
            probability, threshold, roll, success, server_seed, server_seed_hash, client_seed, nonce, created_at)
          SELECT ${userId}, staked.id, ${from.id}, ${to.id}, ${from.valueCents}, ${to.valueCents},
            ${odds.probability}, ${odds.threshold}, ${roll}, ${success}, ${seeds.serverSeed}, ${seeds.serverSeedHash},
            ${seeds.clientSeed}, ${seeds.nonce}, ${now}
          FROM ${staked} staked
          RETURNING id, inventory_item_id
        ),
        entry AS (
          -- Staked when the staked entry's play was (docs/responsible-gaming.md#loss): not now, or one upgrade would
          -- make last month's item "won today" and its sale open today's loss limit.
          INSERT INTO inventory_items (user_id, item_id, source, acquired_at, updated_at, staked_at)
          SELECT ${userId}, ${to.id}, 'UPGRADE', ${now}, ${now},
                 (SELECT COALESCE(ii.staked_at, ii.acquired_at) FROM inventory_items ii WHERE ii.id = upgrade.inventory_item_id)
          FROM upgrade WHERE ${success}
          RETURNING id
        ),
        ${liveDrops.recordStep({ userId, itemId: to.id, source: "UPGRADE", caseName: null }, now, sql`EXISTS (SELECT 1 FROM entry)`)}`
    }

    const resultOf = (
      upgradeId: UpgradeId,
      play: { readonly from: ItemRef; readonly to: ItemRef; readonly odds: UpgradeOdds; readonly seeds: Seeds },
      roll: number,
      success: boolean
    ): UpgradeResult => ({
      upgradeId,
      success,
      probability: play.odds.probability,
      roll,
      serverSeedHash: play.seeds.serverSeedHash,
      nextServerSeedHash: play.seeds.nextServerSeedHash,
      fromItem: { id: play.from.id, name: play.from.name },
      toItem: success ? { id: play.to.id, name: play.to.name } : null
    })

    /**
     * Catalog items as last read, at the catalog's version they were read at (as CaseOpenings keeps its cases): an
     * upgrade's one statement takes effect only while that version is current (sql/0018), so an edit anywhere is never
     * missed; a statement that finds it moved clears them. The map holds one version's items at a time.
     */
    const catalog = { version: 0, items: new Map<ItemId, CatalogItem>() }
    const knownItems = Effect.fnUntraced(function*(fromId: ItemId, toId: ItemId) {
      if (!catalog.items.has(fromId) || !catalog.items.has(toId)) {
        const rows = yield* rowsOf(CatalogItemRow, sql`
            SELECT i.id, i.name, i.rarity, i.value_cents, i.image_url, i.is_upgradable, v.version AS catalog_version
            FROM items i CROSS JOIN catalog_version v WHERE i.id IN (${fromId}, ${toId})`)
        for (const row of rows) {
          if (row.catalogVersion !== catalog.version) {
            catalog.items.clear()
            catalog.version = row.catalogVersion
          }
          catalog.items.set(row.id, row)
        }
      }
      const from = catalog.items.get(fromId)
      const to = catalog.items.get(toId)
      return from === undefined || to === undefined ? undefined : { version: catalog.version, from, to }
    })

    /**
     * An upgrade in one statement, from the items and the fairness state as this instance knows them: the entry
     * picked and locked, the play counted when the limits allow it and all that was read is current, then the stake,
     * the seed's rotation and the records, each only once the step before it has its row. None when the items do not
     * allow the upgrade or the statement wrote nothing: `careful` then finds out why, in the order of the rules.
     */
    const attempt = Effect.fnUntraced(function*(player: Player, request: UpgradeRequest) {
      const known = yield* knownItems(request.fromItemId, request.toItemId)
      if (known === undefined || !known.to.isUpgradable) return Option.none<Outcome>()
      const odds = upgradeOdds(known.from.valueCents, known.to.valueCents)
      if (Either.isLeft(odds)) return Option.none<Outcome>()
      const { from, to } = known
      const now = new Date(yield* Clock.currentTimeMillis)
      const expected = yield* fairness.nextRoll(player.id)
      const next = yield* fairness.newServerSeed
      const play = {
        from,
        to,
        odds: odds.right,
        seeds: {
          serverSeed: expected.nextServerSeed,
          serverSeedHash: expected.nextServerSeedHash,
          clientSeed: expected.clientSeed,
          nonce: expected.nonce + 1,
          nextServerSeedHash: next.serverSeedHash
        }
      }
      const roll = upgradeRoll(play.seeds.serverSeed, play.seeds.clientSeed, play.seeds.nonce)
      const success = upgradeSucceeds(roll, play.odds.threshold)
      const written = yield* singleOf(AttemptRow, sql`
          WITH ${fairness.lockStep(player.id, expected)},
          picked AS (${stakeable(player.id, request)}),
          ${
          responsibleGaming.playStep(
            player.id,
            now,
            sql`EXISTS (SELECT 1 FROM picked) AND EXISTS (SELECT 1 FROM fair_state)
              AND EXISTS (SELECT 1 FROM catalog_version WHERE version = ${known.version})`
          )
        },
          staked AS (
            UPDATE inventory_items SET status = 'UPGRADED', updated_at = ${now}
            WHERE id = (SELECT id FROM picked) AND status = 'AVAILABLE' AND EXISTS (SELECT 1 FROM played)
            RETURNING id
          ),
          ${fairness.rotateStep(player.id, 1, next, now, sql`EXISTS (SELECT 1 FROM staked)`)},
          ${recordSteps(player.id, sql`staked`, play, roll, success, now)},
          ${responsibleGaming.playWarningSteps(player.id, now, sql`played`)}
          SELECT EXISTS (SELECT 1 FROM fair_state) AS fair_current,
                 EXISTS (SELECT 1 FROM catalog_version WHERE version = ${known.version}) AS catalog_current,
                 (SELECT id FROM upgrade) AS upgrade_id, (SELECT id::text FROM dropped) AS drop_id,
                 (SELECT limits FROM warned) AS warnings`)
      if (!written.fairCurrent) yield* fairness.forget(player.id)
      if (!written.catalogCurrent) catalog.items.clear()
      if (written.upgradeId === null) return Option.none<Outcome>()
      const dropId = written.dropId
      return Option.some<Outcome>({
        result: resultOf(written.upgradeId, play, roll, success),
        rolled: fairness.rolled(player.id, expected, 1, next),
        warnings: written.warnings,
        stakeCents: from.valueCents,
        awardCents: success ? to.valueCents : 0n,
        announce: dropId === null ? Effect.void : afterCommit(broadcast.publish(liveDrops.publication({
          id: dropId,
          user: { id: String(player.id), username: player.username },
          item: { id: to.id, name: to.name, rarity: to.rarity, valueCents: to.valueCents, imageUrl: to.imageUrl },
          source: "UPGRADE",
          caseName: null,
          createdAt: now
        })))
      })
    })

    /**
     * The first statement of a careful upgrade: the play counted (`played`), the stake (the user's oldest AVAILABLE
     * entry of the item, or the given one, now UPGRADED; only once `played` has its row), the user's fairness row
     * locked when it is still as `expected` (`fair_state`), and both items read. SKIP LOCKED: an entry another
     * transaction is staking or selling is not waited for (that one decides its fate); the outer status check is the
     * guard in any case.
     */
    const stake = (userId: UserId, request: UpgradeRequest, expected: NextRoll, now: Date) =>
      singleOf(StakedRow, sql`
        WITH ${responsibleGaming.playStep(userId, now)},
        staked AS (
          UPDATE inventory_items SET status = 'UPGRADED', updated_at = ${now}
          WHERE id = (${stakeable(userId, request)}) AND status = 'AVAILABLE' AND EXISTS (SELECT 1 FROM played)
          RETURNING id
        ),
        ${fairness.lockStep(userId, expected)}
        SELECT EXISTS (SELECT 1 FROM played) AS played, (SELECT id FROM staked) AS staked_id,
               EXISTS (SELECT 1 FROM fair_state) AS fair_current,
               f.id AS from_id, f.name AS from_name, f.value_cents AS from_value_cents,
               t.id AS to_id, t.name AS to_name, t.value_cents AS to_value_cents, t.is_upgradable AS to_is_upgradable
        FROM (SELECT ${request.fromItemId}::bigint AS from_id, ${request.toItemId}::bigint AS to_id) wanted
        LEFT JOIN LATERAL (SELECT * FROM items WHERE id = wanted.from_id FOR KEY SHARE) f ON true
        LEFT JOIN LATERAL (SELECT * FROM items WHERE id = wanted.to_id FOR KEY SHARE) t ON true`)

    /**
     * An upgrade as a transaction that reads what it needs and checks the rules in their order (the way every
     * refusal takes): two statements when the user's fairness state is the one this instance knows
     * (`ProvablyFair.nextRoll`), one more otherwise.
     */
    const careful = Effect.fnUntraced(function*(userId: UserId, request: UpgradeRequest) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const expected = yield* fairness.nextRoll(userId)
      const staked = yield* stake(userId, request, expected, now)
      // A game action: the player's exclusion and limits allow it, and its minute counts as played.
      if (!staked.played) return yield* responsibleGaming.playRefusal(userId, now)
      if (staked.stakedId === null) return yield* new ItemNotAvailable()
      // The staked entry is of this item, so it exists.
      if (staked.fromId === null || staked.fromName === null || staked.fromValueCents === null) {
        return yield* Effect.dieMessage(`Upgrades: item ${request.fromItemId} of a staked entry is gone`)
      }
      const from = { id: staked.fromId, name: staked.fromName, valueCents: staked.fromValueCents }
      if (staked.toId === null || staked.toName === null || staked.toValueCents === null || staked.toIsUpgradable !== true) {
        return yield* new ItemNotUpgradable()
      }
      const to = { id: staked.toId, name: staked.toName, valueCents: staked.toValueCents }
      const odds = yield* fromEither(upgradeOdds(from.valueCents, to.valueCents))

      // The committed seed and the next nonce, taken only now: a refused upgrade consumes neither.
      const next = yield* fairness.newServerSeed
      const seeds: Seeds = staked.fairCurrent
        ? {
          serverSeed: expected.nextServerSeed,
          serverSeedHash: expected.nextServerSeedHash,
          clientSeed: expected.clientSeed,
          nonce: expected.nonce + 1,
          nextServerSeedHash: next.serverSeedHash
        }
        : yield* fairness.takeCommittedRoll(userId)
      const play = { from, to, odds, seeds }
      const roll = upgradeRoll(seeds.serverSeed, seeds.clientSeed, seeds.nonce)
      const success = upgradeSucceeds(roll, odds.threshold)
      const written = yield* singleOf(WrittenRow, sql`
        WITH ${fairness.rotateStep(userId, 1, next, now, sql`${staked.fairCurrent}::boolean`)},
        ${recordSteps(userId, sql`(SELECT ${staked.stakedId}::bigint AS id)`, play, roll, success, now)},
        ${responsibleGaming.playWarningSteps(userId, now)}
        SELECT (SELECT id FROM upgrade) AS upgrade_id, (SELECT id::text FROM dropped) AS drop_id,
               (SELECT limits FROM warned) AS warnings`)
      const dropId = written.dropId
      return {
        result: resultOf(written.upgradeId, play, roll, success),
        rolled: staked.fairCurrent ? fairness.rolled(userId, expected, 1, next) : Effect.void,
        warnings: written.warnings,
        stakeCents: from.valueCents,
        awardCents: success ? to.valueCents : 0n,
        // Read back and announced once committed, so nobody sees a drop that was rolled back.
        announce: dropId === null ? Effect.void : liveDrops.announce(dropId)
      } satisfies Outcome
    }, (effect) => effect.pipe(transaction))

    /** `POST /upgrades` (docs/rules.md#upgrade-stake; see the top of this file). */
    const upgrade = Effect.fnUntraced(function*(player: Player, request: UpgradeRequest) {
      const outcome = yield* lock.withLock(
        `user:${player.id}`,
        // A deadlock or serialization failure wrote nothing either: the careful way runs it as a transaction, again
        // on such a conflict (`inTransaction`).
        noneOnConflict(attempt(player, request)).pipe(
          Effect.flatMap(Option.match({ onSome: Effect.succeed, onNone: () => careful(player.id, request) }))
        )
      )
      // Committed: the user's next roll is known without reading it.
      yield* outcome.rolled
      yield* responsibleGaming.warn(player.id, outcome.warnings)
      yield* gameRound("upgrade", outcome.stakeCents, outcome.awardCents)
      yield* outcome.announce
      return outcome.result
    }, (effect) => effect.pipe(hotSpan("Upgrades.upgrade")))

    /**
     * `GET /upgrades/:id/verify` (docs/rules.md#verification), for the owner and administrators (anyone else: 404
     * `Upgrade not found`). Recomputes the roll from the revealed seed and the threshold from the
     * recorded probability; isValid needs sha256(serverSeed) = serverSeedHash, calculatedRoll = roll,
     * the recorded threshold = floor(probability x 100000), and success = (roll < threshold).
     */
    const verify = Effect.fn("Upgrades.verify")(function*(
      requester: { readonly id: UserId; readonly role: Role },
      upgradeId: bigint
    ) {
      const u = yield* firstOf(VerifyRow, sql`
        SELECT id, user_id, server_seed, server_seed_hash, client_seed, nonce, roll, probability, threshold, success
        FROM upgrades WHERE id = ${upgradeId}`)
      if (u === undefined || (u.userId !== String(requester.id) && requester.role !== "ADMIN")) {
        return yield* NotFound.of("Upgrade")
      }
      const calculatedRoll = upgradeRoll(u.serverSeed, u.clientSeed, u.nonce)
      const threshold = upgradeThreshold(u.probability)
      const isValid = hashServerSeed(u.serverSeed) === u.serverSeedHash &&
        calculatedRoll === u.roll &&
        threshold === u.threshold &&
        u.success === upgradeSucceeds(u.roll, threshold)
      return {
        upgradeId: u.id,
        serverSeed: u.serverSeed,
        serverSeedHash: u.serverSeedHash,
        clientSeed: u.clientSeed,
        nonce: u.nonce,
        roll: u.roll,
        calculatedRoll,
        probability: u.probability,
        threshold,
        success: u.success,
        isValid
      } satisfies UpgradeVerification
    })

    /**
     * `GET /upgrades/history` (docs/rules.md#upgrade-history): newest first, values as they were at each
     * upgrade; stats over all of the user's upgrades. netProfit = totalValueWon - the source values of ALL
     * upgrades: what the user holds now against what they staked (a success consumes its source too).
     */
    const history = Effect.fn("Upgrades.history")(function*(userId: UserId, page: PageRequest) {
      // Not `pageOf`: the statistics give the total.
      const { limit, offset } = windowOf(page)
      const rows = yield* rowsOf(HistoryRow, sql`
        SELECT u.id, f.name AS from_name, u.from_value_cents, t.name AS to_name, u.to_value_cents,
               u.probability, u.success, u.created_at
        FROM upgrades u JOIN items f ON f.id = u.from_item_id JOIN items t ON t.id = u.to_item_id
        WHERE u.user_id = ${userId}
        ORDER BY u.id DESC LIMIT ${limit} OFFSET ${offset}`)
      const stats = yield* singleOf(StatsRow, sql`
        SELECT count(*)::int AS total_upgrades,
               (count(*) FILTER (WHERE success))::int AS success_count,
               (COALESCE(SUM(to_value_cents) FILTER (WHERE success), 0))::text AS total_value_won,
               (COALESCE(SUM(from_value_cents) FILTER (WHERE NOT success), 0))::text AS total_value_lost,
               (COALESCE(SUM(from_value_cents), 0))::text AS total_staked
        FROM upgrades WHERE user_id = ${userId}`)
      return {
        upgrades: rows.map((row) => ({
          id: row.id,
          fromItem: { name: row.fromName, valueCents: row.fromValueCents },
          toItem: { name: row.toName, valueCents: row.toValueCents },
          probability: row.probability,
          success: row.success,
          createdAt: row.createdAt
        })),
        stats: {
          totalUpgrades: stats.totalUpgrades,
          successCount: stats.successCount,
          successRate: stats.totalUpgrades === 0
            ? 0
            : Math.round((stats.successCount * 10_000) / stats.totalUpgrades) / 100,
          totalValueWon: stats.totalValueWon,
          totalValueLost: stats.totalValueLost,
          netProfit: stats.totalValueWon - stats.totalStaked
        },
        total: stats.totalUpgrades,
        page: page.page
      } satisfies UpgradeHistory
    })

    return { probability, upgrade, verify, history } as const
  }),
  dependencies: [ProvablyFair.Default, LiveDrops.Default, ResponsibleGaming.Default]
}) {}
