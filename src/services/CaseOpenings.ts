/**
 * Opening a case (SPEC open-case rules 1-6, D5, D7, D17). Under the user's lock, ONE database
 * transaction debits the price through the Ledger, takes the user's committed server seed and next
 * nonce (committing a fresh seed in its place), rolls, records the opening, adds the item to the
 * inventory, updates the user's statistics and records the live drop; nothing of it exists unless all
 * of it does. The drop is announced after the commit.
 *
 * FLIP (D7, D17): with the opening's own seeds, a second HMAC over `${clientSeed}:${nonce}:flip`
 * decides whether FLIP happens; then a second roll of the same seed with the following nonce selects
 * item B, and the user receives the more valuable of A and B (A on a tie).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Either, Option, Schema } from "effect"
import { UserLock } from "../layers/stores/UserLock"
import { Rarity } from "../schema/Catalog"
import { CaseNotFound, NotFound } from "../schema/Errors"
import type { ItemView, OpeningResult } from "../schema/Game"
import { CaseId, ItemId, type UserId } from "../schema/Ids"
import type { User } from "../schema/User"
import { itemForRoll, type ItemRange } from "./CaseRanges"
import { Ledger } from "./Ledger"
import { LiveDrops } from "./LiveDrops"
import { Realtime } from "./Realtime"
import { caseRoll, flipTriggered, hashServerSeed, ProvablyFair } from "./ProvablyFair"
import { inTransaction, orUnavailable } from "./SqlRows"

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
type RangeRow = typeof RangeRow.Type

/** A range of a case, with the case's own fields repeated on each row. */
const CaseRangeRow = Schema.extend(
  RangeRow,
  Schema.Struct({ caseName: Schema.String, priceCents: Schema.BigInt, flipChance: Schema.Number })
)

const view = (row: RangeRow): ItemView => ({
  id: row.itemId,
  name: row.name,
  rarity: row.rarity,
  valueCents: row.valueCents,
  imageUrl: row.imageUrl
})

/** The item a roll selects; a saved case always covers 1..10000000 (D6), so a miss is InvalidRoll. */
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

    /** An active case with its ranges, in one query: no rows when the case is absent or inactive. */
    const activeCaseRanges = SqlSchema.findAll({
      Request: CaseId,
      Result: CaseRangeRow,
      execute: (id) =>
        sql`SELECT c.name AS case_name, c.price_cents, c.flip_chance,
                   ci.item_id, ci.drop_chance, ci.range_start, ci.range_end, i.name, i.rarity, i.value_cents, i.image_url
            FROM cases c JOIN case_items ci ON ci.case_id = c.id JOIN items i ON i.id = ci.item_id
            WHERE c.id = ${id} AND c.is_active ORDER BY ci.range_start`
    })

    const open = Effect.fn("CaseOpenings.open")(function*(userId: UserId, caseId: CaseId) {
      return yield* lock.withLock(
        `user:${userId}`,
        Effect.gen(function*() {
          // A saved case always has items (D6), so no rows means no active case.
          const ranges = yield* activeCaseRanges(caseId).pipe(orUnavailable)
          if (ranges.length === 0) return yield* new CaseNotFound()
          const kase = { name: ranges[0]!.caseName, priceCents: ranges[0]!.priceCents, flipChance: ranges[0]!.flipChance }

          const { balanceCents, dropId, result } = yield* Effect.gen(function*() {
            const debit = yield* ledger.debit({
              userId,
              type: "CASE_OPEN",
              amountCents: kase.priceCents,
              reference: { type: "CASE", id: caseId }
            })
            const seeds = yield* fairness.takeCommittedRoll(userId)
            const roll = caseRoll(seeds.serverSeed, seeds.clientSeed, seeds.nonce)
            const first = yield* select(ranges, roll)
            // FLIP rolls the same committed seed with the following nonce.
            let flip: { readonly nonce: number; readonly roll: number; readonly item: RangeRow & ItemRange } | undefined
            if (kase.flipChance > 0 && flipTriggered(seeds.serverSeed, seeds.clientSeed, seeds.nonce, kase.flipChance)) {
              const { firstNonce } = yield* fairness.takeNonces(userId, 1)
              const flipRoll = caseRoll(seeds.serverSeed, seeds.clientSeed, firstNonce)
              flip = { nonce: firstNonce, roll: flipRoll, item: yield* select(ranges, flipRoll) }
            }
            const won = flip !== undefined && flip.item.valueCents > first.valueCents ? flip.item : first
            const now = new Date(yield* Clock.currentTimeMillis)

            const profit = won.valueCents - kase.priceCents
            // The inventory entry and the opening that points to it, in one statement.
            const [opening] = yield* sql<{ id: string }>`
              WITH entry AS (
                INSERT INTO inventory_items (user_id, item_id, source, acquired_at, updated_at)
                VALUES (${userId}, ${won.itemId}, 'CASE_OPEN', ${now}, ${now}) RETURNING id
              )
              INSERT INTO case_openings (case_id, user_id, item_id, inventory_item_id, server_seed, server_seed_hash,
                client_seed, nonce, roll, roll_item_id, roll_range_start, roll_range_end, roll_item_value_cents,
                flip_chance, is_flip, flip_server_seed, flip_client_seed, flip_nonce, flip_roll, flip_item_id,
                flip_range_start, flip_range_end, flip_item_value_cents, price_paid_cents, item_value_cents, profit,
                created_at)
              SELECT ${caseId}, ${userId}, ${won.itemId}, entry.id, ${seeds.serverSeed}, ${seeds.serverSeedHash},
                ${seeds.clientSeed}, ${seeds.nonce}, ${roll}, ${first.itemId}, ${first.rangeStart}, ${first.rangeEnd},
                ${first.valueCents}, ${kase.flipChance}, ${flip !== undefined}, ${flip === undefined ? null : seeds.serverSeed},
                ${flip === undefined ? null : seeds.clientSeed}, ${flip?.nonce ?? null}, ${flip?.roll ?? null},
                ${flip?.item.itemId ?? null}, ${flip?.item.rangeStart ?? null}, ${flip?.item.rangeEnd ?? null},
                ${flip?.item.valueCents ?? null}, ${kase.priceCents}, ${won.valueCents}, ${profit}, ${now}
              FROM entry
              RETURNING id`
            // Atomic increments: parallel openings of one user (other instances, no lock) still add up.
            yield* sql`
              INSERT INTO user_case_stats AS s (user_id, total_opened, total_spent_cents, total_won_cents, flip_count,
                                                best_drop_opening_id, best_drop_value_cents)
              VALUES (${userId}, 1, ${kase.priceCents}, ${won.valueCents}, ${flip ? 1 : 0}, ${opening!.id}, ${won.valueCents})
              ON CONFLICT (user_id) DO UPDATE SET
                total_opened = s.total_opened + 1,
                total_spent_cents = s.total_spent_cents + EXCLUDED.total_spent_cents,
                total_won_cents = s.total_won_cents + EXCLUDED.total_won_cents,
                flip_count = s.flip_count + EXCLUDED.flip_count,
                best_drop_opening_id = CASE WHEN EXCLUDED.best_drop_value_cents > s.best_drop_value_cents
                  THEN EXCLUDED.best_drop_opening_id ELSE s.best_drop_opening_id END,
                best_drop_value_cents = GREATEST(s.best_drop_value_cents, EXCLUDED.best_drop_value_cents)`
            const dropId = yield* liveDrops.record({ userId, itemId: won.itemId, source: "CASE_OPEN", caseName: kase.name })
            const result: OpeningResult = {
              openingId: opening!.id,
              item: view(won),
              roll,
              serverSeedHash: seeds.serverSeedHash,
              nextServerSeedHash: seeds.nextServerSeedHash,
              isFlip: flip !== undefined,
              ...(flip === undefined ? {} : { flipRoll: flip.roll, flipItems: [view(first), view(flip.item)] })
            }
            return { dropId, result, balanceCents: debit.balanceAfterCents }
          }).pipe(inTransaction(sql))

          yield* realtime.balanceChanged(userId, balanceCents)
          yield* liveDrops.announce(dropId)
          return result
        })
      )
    })

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

    /** D7 `GET /cases/openings`: the user's openings, newest first. */
    const history = Effect.fn("CaseOpenings.history")(function*(userId: UserId, page: number, limit: number) {
      const rows = yield* SqlSchema.findAll({
        Request: Schema.Void,
        Result: OpeningRow,
        execute: () =>
          sql`SELECT o.id, o.case_id, c.name AS case_name, o.item_id, i.name, i.rarity, i.value_cents, i.image_url,
                     o.roll, o.is_flip, o.price_paid_cents, o.item_value_cents, o.profit, o.created_at
              FROM case_openings o JOIN cases c ON c.id = o.case_id JOIN items i ON i.id = o.item_id
              WHERE o.user_id = ${userId} ORDER BY o.id DESC LIMIT ${limit} OFFSET ${(page - 1) * limit}`
      })(undefined).pipe(orUnavailable)
      const [count] = yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM case_openings WHERE user_id = ${userId}`
        .pipe(orUnavailable)
      return {
        openings: rows.map((row) => ({
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
        total: Number(count!.n),
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
     * D5 verification, for the owner and administrators (anyone else: 404). Recomputes every roll from
     * the revealed seeds as they were recorded; isValid needs the hash, the roll, the selected item's
     * block, the FLIP trigger with the flip chance of that moment, and with FLIP the second roll (the
     * next nonce) and the better-of-two award by the values of that moment. (Openings since D17 roll
     * FLIP with their own seed; older ones recorded a seed of its own, and verify as recorded.)
     */
    const verify = Effect.fn("CaseOpenings.verify")(function*(requester: User, openingId: string) {
      const found = yield* SqlSchema.findOne({
        Request: Schema.String,
        Result: VerifyRow,
        execute: (id) =>
          sql`SELECT o.id, o.user_id, o.case_id, o.item_id, o.server_seed, o.server_seed_hash, o.client_seed, o.nonce, o.roll,
                     o.roll_item_id, o.roll_range_start, o.roll_range_end, o.is_flip, o.flip_server_seed, o.flip_client_seed,
                     o.flip_nonce, o.flip_roll, o.flip_item_id, o.flip_range_start, o.flip_range_end, o.flip_chance, o.committed_seed,
                     o.roll_item_value_cents, o.flip_item_value_cents
              FROM case_openings o WHERE o.id = ${id}`
      })(openingId).pipe(orUnavailable)
      if (Option.isNone(found) || (found.value.userId !== String(requester.id) && requester.role !== "ADMIN")) {
        return yield* NotFound.of("Opening")
      }
      const o = found.value
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
  })
}) {}
