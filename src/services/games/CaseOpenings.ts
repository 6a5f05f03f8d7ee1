/**
 * Opening a case (docs/rules.md#open-case), the service's hot path. Under the user's
 * lock, the roll is computed from the case and the user's committed seed (both usually known to this
 * instance already), then ONE statement writes everything at once: the debit through the Ledger's
 * steps, the next nonce and a fresh committed seed, the inventory entry, the opening, the user's
 * statistics and the live drop. Nothing of it exists unless all of it does; it takes effect only if
 * the balance covers the price and what the roll was computed from is still current (otherwise it
 * writes nothing, and the opening reads again). The balance push and the drop go out after it.
 *
 * FLIP (docs/rules.md#flip): with the opening's own seeds, a second HMAC over `${clientSeed}:${nonce}:flip`
 * decides whether FLIP happens; then a second roll of the same seed with the following nonce selects
 * item B, and the user receives the more valuable of A and B (A on a tie).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect, Either, Option, Schema } from "effect"
import { Broadcast } from "../../layers/stores/Broadcast"
import { UserLock } from "../../layers/stores/UserLock"
import { CaseNotFound, Rarity } from "../../schema/games/Catalog"
import { InsufficientBalance, NotFound, PleaseRetry } from "../../schema/platform/Errors"
import type { ItemView, OpeningResult } from "../../schema/games/Game"
import { CaseId, ItemId, type UserId } from "../../schema/platform/Ids"
import type { Player, SignedInUser } from "../../schema/identity/User"
import { ActiveCases, type RangeRow } from "./ActiveCases"
import { itemForRoll, type ItemRange } from "./CaseRanges"
import { Ledger } from "../money/Ledger"
import { LiveDrops } from "./LiveDrops"
import { ResponsibleGaming } from "../identity/ResponsibleGaming"
import { Realtime } from "../platform/Realtime"
import { caseRoll, flipTriggered, hashServerSeed, ProvablyFair } from "./ProvablyFair"
import { afterCommit, firstOf, pageOf, singleOf } from "../platform/SqlRows"
import { gameRound } from "../../layers/AppMetrics"
import { hotSpan } from "../../layers/HotSpans"
import type { PageRequest } from "../../schema/platform/Pagination"

/** Why an opening's write wrote nothing though the balance would have covered it: what it read had changed. */
class Outdated extends Data.TaggedError("Outdated") {}

/** What the one statement of an opening wrote (nulls when it wrote nothing). */
const WrittenRow = Schema.Struct({
  stateCurrent: Schema.Boolean,
  catalogCurrent: Schema.Boolean,
  balanceCents: Schema.NullOr(Schema.BigInt),
  openingId: Schema.NullOr(Schema.String),
  dropId: Schema.NullOr(Schema.String),
  /** The limits this opening took to 80 % of (docs/responsible-gaming.md#warnings), comma-separated. */
  warnings: Schema.NullOr(Schema.String)
})

const view = (row: RangeRow): ItemView => ({
  id: row.itemId,
  name: row.name,
  rarity: row.rarity,
  valueCents: row.valueCents,
  imageUrl: row.imageUrl
})

/**
 * The item a roll selects; a saved case always covers 1..10000000 (docs/rules.md#case-validation), so a miss is
 * InvalidRoll.
 */
const select = (ranges: ReadonlyArray<RangeRow & ItemRange>, roll: number) =>
  Either.match(itemForRoll(ranges, roll), { onLeft: Effect.fail, onRight: Effect.succeed })

export class CaseOpenings extends Effect.Service<CaseOpenings>()("app/CaseOpenings", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const lock = yield* UserLock
    const ledger = yield* Ledger
    const fairness = yield* ProvablyFair
    const liveDrops = yield* LiveDrops
    const realtime = yield* Realtime
    const broadcast = yield* Broadcast
    const responsibleGaming = yield* ResponsibleGaming
    const activeCases = yield* ActiveCases

    /** One attempt: the roll from what is known, then everything written in one statement. */
    const attempt = Effect.fnUntraced(function*(player: Player, caseId: CaseId) {
      const found = yield* activeCases.get(caseId)
      if (Option.isNone(found)) return yield* new CaseNotFound()
      const kase = found.value
      const state = yield* fairness.nextRoll(player.id)
      const seeds = { serverSeed: state.nextServerSeed, clientSeed: state.clientSeed, nonce: state.nonce + 1 }
      const roll = caseRoll(seeds.serverSeed, seeds.clientSeed, seeds.nonce)
      const first = yield* select(kase.ranges, roll)
      // FLIP rolls the same committed seed with the following nonce.
      const flip = kase.flipChance > 0 && flipTriggered(seeds.serverSeed, seeds.clientSeed, seeds.nonce, kase.flipChance)
        ? yield* Effect.map(
          select(kase.ranges, caseRoll(seeds.serverSeed, seeds.clientSeed, seeds.nonce + 1)),
          (item) => ({ nonce: seeds.nonce + 1, roll: caseRoll(seeds.serverSeed, seeds.clientSeed, seeds.nonce + 1), item })
        )
        : undefined
      const won = flip !== undefined && flip.item.valueCents > first.valueCents ? flip.item : first
      const next = yield* fairness.newServerSeed
      const nonces = flip === undefined ? 1 : 2
      const now = new Date(yield* Clock.currentTimeMillis)

      // Checks, debit, commitment, inventory entry, opening, statistics, live drop, limit warnings: one
      // statement, so one round trip and no transaction to open. Each step needs the one before it to
      // have a row; the first two need what was read to be current, and the player's limits to allow it.
      const current = sql`EXISTS (SELECT 1 FROM fair_state)
          AND ${activeCases.current(kase.version)}
          AND ${responsibleGaming.within(kase.priceCents)(now)}`
      const written = yield* singleOf(WrittenRow, sql`
          WITH
          ${fairness.lockStep(player.id, state)},
          ${ledger.debitSteps({ userId: player.id, type: "CASE_OPEN", amountCents: kase.priceCents, reference: { type: "CASE", id: caseId } }, now, current)},
          ${fairness.rotateStep(player.id, nonces, next, now, sql`EXISTS (SELECT 1 FROM moved)`)},
          entry AS (
            INSERT INTO inventory_items (user_id, item_id, source, acquired_at, updated_at)
            SELECT ${player.id}, ${won.itemId}, 'CASE_OPEN', ${now}, ${now} FROM moved
            RETURNING id
          ),
          opening AS (
            INSERT INTO case_openings (case_id, user_id, item_id, inventory_item_id, server_seed, server_seed_hash,
              client_seed, nonce, roll, roll_item_id, roll_range_start, roll_range_end, roll_item_value_cents,
              flip_chance, is_flip, flip_server_seed, flip_client_seed, flip_nonce, flip_roll, flip_item_id,
              flip_range_start, flip_range_end, flip_item_value_cents, price_paid_cents, item_value_cents, profit,
              created_at)
            SELECT ${caseId}, ${player.id}, ${won.itemId}, entry.id, ${seeds.serverSeed}, ${state.nextServerSeedHash},
              ${seeds.clientSeed}, ${seeds.nonce}, ${roll}, ${first.itemId}, ${first.rangeStart}, ${first.rangeEnd},
              ${first.valueCents}, ${kase.flipChance}, ${flip !== undefined}, ${flip === undefined ? null : seeds.serverSeed},
              ${flip === undefined ? null : seeds.clientSeed}, ${flip?.nonce ?? null}, ${flip?.roll ?? null},
              ${flip?.item.itemId ?? null}, ${flip?.item.rangeStart ?? null}, ${flip?.item.rangeEnd ?? null},
              ${flip?.item.valueCents ?? null}, ${kase.priceCents}, ${won.valueCents}, ${won.valueCents - kase.priceCents}, ${now}
            FROM entry
            RETURNING id
          ),
          stats AS (
            -- Atomic increments: parallel openings of one user (other instances, no lock) still add up.
            INSERT INTO user_case_stats AS s (user_id, total_opened, total_spent_cents, total_won_cents, flip_count,
                                              best_drop_opening_id, best_drop_value_cents)
            SELECT ${player.id}, 1, ${kase.priceCents}, ${won.valueCents}, ${flip === undefined ? 0 : 1}, opening.id,
                   ${won.valueCents}
            FROM opening
            ON CONFLICT (user_id) DO UPDATE SET
              total_opened = s.total_opened + 1,
              total_spent_cents = s.total_spent_cents + EXCLUDED.total_spent_cents,
              total_won_cents = s.total_won_cents + EXCLUDED.total_won_cents,
              flip_count = s.flip_count + EXCLUDED.flip_count,
              best_drop_opening_id = CASE WHEN EXCLUDED.best_drop_value_cents > s.best_drop_value_cents
                THEN EXCLUDED.best_drop_opening_id ELSE s.best_drop_opening_id END,
              best_drop_value_cents = GREATEST(s.best_drop_value_cents, EXCLUDED.best_drop_value_cents)
          ),
          ${liveDrops.recordStep({ userId: player.id, itemId: won.itemId, source: "CASE_OPEN", caseName: kase.name }, now, sql`EXISTS (SELECT 1 FROM opening)`)},
          ${responsibleGaming.playWarningSteps(player.id, now, sql`moved`)}
          SELECT EXISTS (SELECT 1 FROM fair_state) AS state_current,
                 ${activeCases.current(kase.version)} AS catalog_current,
                 (SELECT balance_cents FROM moved) AS balance_cents,
                 (SELECT id FROM opening) AS opening_id,
                 (SELECT id FROM dropped) AS drop_id,
                 (SELECT limits FROM warned) AS warnings`)
      if (!written.stateCurrent || !written.catalogCurrent) {
        if (!written.catalogCurrent) yield* activeCases.forget
        yield* fairness.forget(player.id)
        return yield* new Outdated()
      }
      if (written.balanceCents === null || written.openingId === null || written.dropId === null) {
        return yield* responsibleGaming.refused(player.id, kase.priceCents, now, new InsufficientBalance())
      }
      yield* fairness.rolled(player.id, state, nonces, next)
      const result: OpeningResult = {
        openingId: written.openingId,
        item: view(won),
        roll,
        serverSeedHash: state.nextServerSeedHash,
        nextServerSeedHash: next.serverSeedHash,
        isFlip: flip !== undefined,
        ...(flip === undefined ? {} : { flipRoll: flip.roll, flipItems: [view(first), view(flip.item)] })
      }
      // Published once the write stands (sent together, not waited for: Broadcast.publish), never when it did not.
      yield* afterCommit(broadcast.publish(
        realtime.balanceUpdate(player.id, written.balanceCents),
        liveDrops.publication({
          id: written.dropId,
          user: { id: String(player.id), username: player.username },
          item: view(won),
          source: "CASE_OPEN",
          caseName: kase.name,
          createdAt: now
        })
      ))
      yield* afterCommit(responsibleGaming.warn(player.id, written.warnings))
      yield* gameRound("case_open", kase.priceCents, won.valueCents)
      return result
    })

    /**
     * Opens a case for the player (see the top of this file). What the attempt read is rechecked by
     * its write; when something had changed (rarely: another instance, an administrator, the player's
     * own new client seed), it reads again and tries once more, twice; then 409 Please retry
     * (docs/rules.md#please-retry), never a 500.
     */
    const open = (player: Player, caseId: CaseId) =>
      lock.withLock(
        `user:${player.id}`,
        attempt(player, caseId).pipe(
          Effect.catchTag("Outdated", () => attempt(player, caseId)),
          Effect.catchTag("Outdated", () => attempt(player, caseId)),
          Effect.catchTag("Outdated", () => new PleaseRetry())
        )
      ).pipe(hotSpan("CaseOpenings.open"))

    const OpeningRow = Schema.Struct({
      id: Schema.String,
      caseId: Schema.String,
      caseName: Schema.String,
      itemId: ItemId,
      name: Schema.String,
      rarity: Rarity,
      valueCents: Schema.BigInt,
      imageUrl: Schema.String,
      roll: Schema.Number,
      isFlip: Schema.Boolean,
      pricePaidCents: Schema.BigInt,
      itemValueCents: Schema.BigInt,
      profit: Schema.BigInt,
      createdAt: Schema.DateFromSelf
    })

    /** `GET /cases/openings` (docs/rules.md#opening-history): the user's openings, newest first. */
    const history = Effect.fn("CaseOpenings.history")(function*(userId: UserId, paging: PageRequest) {
      const { items, page, total } = yield* pageOf(
        OpeningRow,
        paging,
        (window) =>
          sql`SELECT o.id, o.case_id, c.name AS case_name, o.item_id, i.name, i.rarity, i.value_cents, i.image_url,
                     o.roll, o.is_flip, o.price_paid_cents, o.item_value_cents, o.profit, o.created_at
              FROM case_openings o JOIN cases c ON c.id = o.case_id JOIN items i ON i.id = o.item_id
              WHERE o.user_id = ${userId} ORDER BY o.id DESC LIMIT ${window.limit} OFFSET ${window.offset}`,
        sql`SELECT count(*) AS n FROM case_openings WHERE user_id = ${userId}`
      )
      return {
        openings: items.map((row) => ({
          id: row.id,
          case: { id: row.caseId, name: row.caseName },
          item: { id: row.itemId, name: row.name, rarity: row.rarity, valueCents: row.valueCents, imageUrl: row.imageUrl },
          roll: row.roll,
          isFlip: row.isFlip,
          pricePaidCents: row.pricePaidCents,
          itemValueCents: row.itemValueCents,
          profit: row.profit,
          createdAt: row.createdAt
        })),
        total,
        page
      }
    })

    const VerifyRow = Schema.Struct({
      id: Schema.String,
      userId: Schema.String,
      caseId: CaseId,
      itemId: Schema.String,
      serverSeed: Schema.String,
      serverSeedHash: Schema.String,
      clientSeed: Schema.String,
      nonce: Schema.NumberFromString,
      roll: Schema.Number,
      rollItemId: Schema.String,
      rollRangeStart: Schema.Number,
      rollRangeEnd: Schema.Number,
      isFlip: Schema.Boolean,
      flipServerSeed: Schema.NullOr(Schema.String),
      flipClientSeed: Schema.NullOr(Schema.String),
      flipNonce: Schema.NullOr(Schema.NumberFromString),
      flipRoll: Schema.NullOr(Schema.Number),
      flipItemId: Schema.NullOr(Schema.String),
      flipRangeStart: Schema.NullOr(Schema.Number),
      flipRangeEnd: Schema.NullOr(Schema.Number),
      flipChance: Schema.Number,
      committedSeed: Schema.Boolean,
      rollItemValueCents: Schema.BigInt,
      flipItemValueCents: Schema.NullOr(Schema.BigInt)
    })

    /**
     * Verification (docs/rules.md#verification), for the owner and administrators (anyone else: 404).
     * Recomputes every roll from the revealed seeds as they were recorded; isValid needs the hash, the roll,
     * the selected item's block, the FLIP trigger with the flip chance of that moment, and with FLIP the second
     * roll (the next nonce) and the better-of-two award by the values of that moment. (Openings made since seeds are
     * committed ahead roll FLIP with their own seed; older ones recorded a seed of its own, and verify as recorded.)
     */
    const verify = Effect.fn("CaseOpenings.verify")(function*(requester: SignedInUser, openingId: string) {
      const o = yield* firstOf(VerifyRow, sql`
        SELECT o.id, o.user_id, o.case_id, o.item_id, o.server_seed, o.server_seed_hash, o.client_seed, o.nonce, o.roll,
               o.roll_item_id, o.roll_range_start, o.roll_range_end, o.is_flip, o.flip_server_seed, o.flip_client_seed,
               o.flip_nonce, o.flip_roll, o.flip_item_id, o.flip_range_start, o.flip_range_end, o.flip_chance, o.committed_seed,
               o.roll_item_value_cents, o.flip_item_value_cents
        FROM case_openings o WHERE o.id = ${openingId}`)
      if (o === undefined || (o.userId !== String(requester.id) && requester.role !== "ADMIN")) {
        return yield* NotFound.of("Opening")
      }
      const calculatedRoll = caseRoll(o.serverSeed, o.clientSeed, o.nonce)
      const inBlock = (roll: number, start: number, end: number) => start <= roll && roll <= end
      let isValid = hashServerSeed(o.serverSeed) === o.serverSeedHash &&
        calculatedRoll === o.roll &&
        inBlock(o.roll, o.rollRangeStart, o.rollRangeEnd) &&
        flipTriggered(o.serverSeed, o.clientSeed, o.nonce, o.flipChance) === o.isFlip
      let flipFields = {}
      if (o.isFlip && o.flipServerSeed !== null && o.flipClientSeed !== null && o.flipNonce !== null) {
        const calculatedFlipRoll = caseRoll(o.flipServerSeed, o.flipClientSeed, o.flipNonce)
        const better = o.flipItemValueCents !== null && o.flipItemValueCents > o.rollItemValueCents ? o.flipItemId : o.rollItemId
        // Since seeds are committed, a FLIP is the same seed and client seed with the next nonce.
        const sameSeed = !o.committedSeed || (o.flipServerSeed === o.serverSeed && o.flipClientSeed === o.clientSeed)
        isValid = isValid && sameSeed && calculatedFlipRoll === o.flipRoll && o.flipNonce === o.nonce + 1 &&
          inBlock(o.flipRoll ?? 0, o.flipRangeStart ?? 1, o.flipRangeEnd ?? 0) && better === o.itemId
        flipFields = {
          flipServerSeed: o.flipServerSeed,
          flipServerSeedHash: hashServerSeed(o.flipServerSeed),
          flipClientSeed: o.flipClientSeed,
          flipNonce: o.flipNonce,
          flipRoll: o.flipRoll,
          calculatedFlipRoll,
          flipItemId: o.flipItemId ?? undefined,
          flipRangeStart: o.flipRangeStart ?? undefined,
          flipRangeEnd: o.flipRangeEnd ?? undefined
        }
      } else {
        isValid = isValid && o.itemId === o.rollItemId
      }
      return {
        openingId: o.id,
        serverSeed: o.serverSeed,
        serverSeedHash: o.serverSeedHash,
        clientSeed: o.clientSeed,
        nonce: o.nonce,
        roll: o.roll,
        calculatedRoll,
        rollItemId: o.rollItemId,
        rangeStart: o.rollRangeStart,
        rangeEnd: o.rollRangeEnd,
        flipChance: o.flipChance,
        isFlip: o.isFlip,
        ...flipFields,
        isValid
      }
    })

    return { open, history, verify } as const
  }),
  dependencies: [
    ActiveCases.Default,
    Ledger.Default,
    ProvablyFair.Default,
    LiveDrops.Default,
    Realtime.Default,
    ResponsibleGaming.Default
  ]
}) {}
