/**
 * Raffles (docs/rules.md#raffles; docs/decisions.md "Raffles"). Commit-reveal: the server seed's hash is public from
 * creation; each purchase records the buyer's client seed; the seed is revealed by the draw, and anyone
 * can recompute the winning ticket from what `GET /raffles/:id` then shows:
 * `(HMAC-SHA256(serverSeed, "${raffleId}:${ticketsSold}:${ticketSeedsDigest}") mod ticketsSold) + 1`,
 * the digest being SHA-256 of every ticket's client seed in ticket order, joined by ":". The winning
 * number therefore depends on every ticket sold, and is unknown until the last one sells.
 *
 * A purchase reserves its block of consecutive numbers with one conditional increment of
 * `tickets_sold` (OPEN, before endsAt, not past maxTickets), which also locks the raffle row: buyers
 * are serialized and numbered 1..N without gaps. The debit (RAFFLE_TICKET) is in the same transaction,
 * so a refused or unpaid purchase takes no number. The purchase that sells out draws in its own
 * transaction; otherwise the draw job draws at endsAt (CANCELLED when nothing was sold).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { Rarity } from "../../schema/games/Catalog"
import { NotFound } from "../../schema/platform/Errors"
import { ItemId, UserId } from "../../schema/platform/Ids"
import type { Notification } from "../../schema/platform/Notification"
import {
  type CreateRaffleRequest,
  NotEnoughTickets,
  RaffleEndNotInFuture,
  RaffleId,
  RaffleNotOpen,
  RaffleStatus
} from "../../schema/raffles/Raffle"
import { Audit } from "../admin/Audit"
import { Ledger } from "../money/Ledger"
import { ResponsibleGaming } from "../identity/ResponsibleGaming"
import { LiveDrops } from "../games/LiveDrops"
import { Notifications } from "../platform/Notifications"
import { ProvablyFair, raffleTicket, ticketSeedsDigest } from "../games/ProvablyFair"
import { Realtime } from "../platform/Realtime"
import type { StatusPageRequest } from "../../schema/platform/Pagination"
import { execute, firstOf, inTransaction, newestPage, rowCountOf, rowsOf, singleOf } from "../platform/SqlRows"

const RaffleRow = Schema.Struct({
  id: RaffleId,
  itemId: ItemId,
  itemName: Schema.String,
  rarity: Rarity,
  valueCents: Schema.BigInt,
  imageUrl: Schema.String,
  ticketPriceCents: Schema.BigInt,
  maxTickets: Schema.Number,
  ticketsSold: Schema.Number,
  endsAt: Schema.DateFromSelf,
  status: RaffleStatus,
  serverSeed: Schema.String,
  serverSeedHash: Schema.String,
  winningTicket: Schema.NullOr(Schema.Number),
  winnerId: Schema.NullOr(UserId),
  winnerName: Schema.NullOr(Schema.String),
  ticketSeedsDigest: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf
})
type RaffleRow = typeof RaffleRow.Type

const COLUMNS = `r.id, r.item_id, i.name AS item_name, i.rarity, i.value_cents, i.image_url, r.ticket_price_cents,
  r.max_tickets, r.tickets_sold, r.ends_at, r.status, r.server_seed, r.server_seed_hash, r.winning_ticket, r.winner_id,
  w.username AS winner_name, r.ticket_seeds_digest, r.created_at`
const FROM = `raffles r JOIN items i ON i.id = r.item_id LEFT JOIN users w ON w.id = r.winner_id`

const BlockRow = Schema.Struct({ raffleId: Schema.String, firstTicket: Schema.Number, lastTicket: Schema.Number, userId: UserId })
const SeedBlockRow = Schema.Struct({ firstTicket: Schema.Number, lastTicket: Schema.Number, clientSeed: Schema.String })
const RaffleIdRow = Schema.Struct({ id: RaffleId })
/** The winner's new inventory entry; its id stays text, as the audit entry keeps it. */
const PrizeRow = Schema.Struct({ id: Schema.String })
const ReservedRow = Schema.Struct({ ticketsSold: Schema.Number, ticketPriceCents: Schema.BigInt })

const raffleNotFound = () => NotFound.of("Raffle")

/** What a draw leaves to do after its commit. */
interface Drawn {
  readonly winnerId: UserId
  readonly notification: Notification
  readonly dropId: string
}

export class Raffles extends Effect.Service<Raffles>()("app/Raffles", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const responsibleGaming = yield* ResponsibleGaming
    const fairness = yield* ProvablyFair
    const notifications = yield* Notifications
    const liveDrops = yield* LiveDrops
    const realtime = yield* Realtime
    const audit = yield* Audit
    const columns = sql.literal(COLUMNS)
    const from = sql.literal(FROM)

    const transaction = inTransaction(sql)
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const byId = (id: RaffleId) => sql`SELECT ${columns} FROM ${from} WHERE r.id = ${id}`
    const findRow = (id: RaffleId) => firstOf(RaffleRow, byId(id))

    /** Every purchase's block of tickets with the buyer's client seed, in ticket order. */
    const seedBlocks = (id: RaffleId) =>
      rowsOf(SeedBlockRow, sql`
        SELECT first_ticket, last_ticket, client_seed FROM raffle_tickets WHERE raffle_id = ${id} ORDER BY first_ticket`)

    /** A raffle as `GET /raffles/:id` shows it; `myTickets` are the viewer's numbers. `ticketSeeds` are only in `get`. */
    const viewsOf = Effect.fnUntraced(function*(rows: ReadonlyArray<RaffleRow>, viewerId: UserId) {
      if (rows.length === 0) return []
      const blocks = yield* rowsOf(BlockRow, sql`
          SELECT raffle_id::text AS raffle_id, first_ticket, last_ticket, user_id FROM raffle_tickets
          WHERE raffle_id = ANY(${rows.map((r) => r.id)}::bigint[]) AND user_id = ${viewerId} ORDER BY first_ticket`)
      return rows.map((row) => ({
        id: row.id,
        item: { id: row.itemId, name: row.itemName, rarity: row.rarity, valueCents: row.valueCents, imageUrl: row.imageUrl },
        ticketPriceCents: row.ticketPriceCents,
        maxTickets: row.maxTickets,
        ticketsSold: row.ticketsSold,
        endsAt: row.endsAt,
        status: row.status,
        serverSeedHash: row.serverSeedHash,
        serverSeed: row.status === "OPEN" ? null : row.serverSeed,
        winningTicket: row.winningTicket,
        ticketSeedsDigest: row.ticketSeedsDigest,
        ticketSeeds: null as ReadonlyArray<typeof SeedBlockRow.Type> | null,
        winner: row.winnerId === null ? null : { id: row.winnerId, username: row.winnerName! },
        myTickets: blocks
          .filter((b) => b.raffleId === String(row.id))
          .flatMap((b) => Array.from({ length: b.lastTicket - b.firstTicket + 1 }, (_, i) => b.firstTicket + i))
      }))
    })

    const get = Effect.fn("Raffles.get")(function*(id: RaffleId, viewerId: UserId) {
      const row = yield* findRow(id)
      if (row === undefined) return yield* raffleNotFound()
      const view = (yield* viewsOf([row], viewerId))[0]!
      // Once drawn, what the digest covers, so anyone can recompute the draw.
      return row.ticketSeedsDigest === null ? view : { ...view, ticketSeeds: yield* seedBlocks(id) }
    })

    const list = Effect.fn("Raffles.list")(function*(query: StatusPageRequest<RaffleStatus>, viewerId: UserId) {
      const { items, page, total } = yield* newestPage(
        sql,
        RaffleRow,
        { table: "raffles", alias: "r", select: sql`SELECT ${columns} FROM ${from}` },
        query,
        { status: query.status }
      )
      return { raffles: yield* viewsOf(items, viewerId), total, page }
    })

    const create = Effect.fn("Raffles.create")(function*(adminId: UserId, request: CreateRaffleRequest) {
      const at = yield* now
      if (request.endsAt.getTime() <= at.getTime()) return yield* new RaffleEndNotInFuture()
      const item = yield* rowCountOf(sql`SELECT 1 FROM items WHERE id = ${request.itemId}`)
      if (item === 0) return yield* NotFound.of("Item")
      const seeds = yield* fairness.newServerSeed
      const { id } = yield* singleOf(RaffleIdRow, sql`
        INSERT INTO raffles (item_id, ticket_price_cents, max_tickets, ends_at, server_seed, server_seed_hash, created_at)
        VALUES (${request.itemId}, ${request.ticketPriceCents}, ${request.maxTickets}, ${request.endsAt},
                ${seeds.serverSeed}, ${seeds.serverSeedHash}, ${at})
        RETURNING id`)
      yield* audit.record({ userId: adminId, action: "RAFFLE_CREATED", entityType: "Raffle", entityId: id, metadata: {} })
      return yield* get(id, adminId)
    })

    /** Inside a transaction, on a raffle row locked by the caller: the draw, or CANCELLED without tickets. */
    const close = Effect.fnUntraced(function*(raffle: RaffleRow, at: Date) {
      if (raffle.ticketsSold === 0) {
        yield* execute(sql`UPDATE raffles SET status = 'CANCELLED', closed_at = ${at} WHERE id = ${raffle.id}`)
        yield* audit.record({ userId: null, action: "RAFFLE_CANCELLED", entityType: "Raffle", entityId: raffle.id, metadata: {} })
        return Option.none<Drawn>()
      }
      const digest = ticketSeedsDigest(yield* seedBlocks(raffle.id))
      const winningTicket = raffleTicket(raffle.serverSeed, raffle.id, raffle.ticketsSold, digest)
      // The blocks cover 1..ticketsSold, so one holds the winning ticket.
      const holder = yield* singleOf(BlockRow, sql`
          SELECT raffle_id::text AS raffle_id, first_ticket, last_ticket, user_id FROM raffle_tickets
          WHERE raffle_id = ${raffle.id} AND first_ticket <= ${winningTicket} AND last_ticket >= ${winningTicket}`)
      const winnerId = holder.userId
      // Staked when the winning ticket was bought (docs/responsible-gaming.md#loss), not at the draw.
      const entry = yield* singleOf(PrizeRow, sql`
          INSERT INTO inventory_items (user_id, item_id, source, acquired_at, updated_at, staked_at)
          SELECT ${winnerId}, ${raffle.itemId}, 'RAFFLE', ${at}, ${at}, created_at FROM raffle_tickets
          WHERE raffle_id = ${raffle.id} AND first_ticket = ${holder.firstTicket}
          RETURNING id`)
      yield* execute(sql`UPDATE raffles SET status = 'DRAWN', closed_at = ${at}, winning_ticket = ${winningTicket},
                     winner_id = ${winnerId}, inventory_item_id = ${entry.id}, ticket_seeds_digest = ${digest},
                     prize_value_cents = ${raffle.valueCents}
                   WHERE id = ${raffle.id}`)
      const notification = yield* notifications.create(winnerId, {
        type: "RAFFLE_WON",
        title: "You won a raffle",
        message: `Ticket #${winningTicket} won ${raffle.itemName}. It is in your inventory.`
      })
      yield* audit.record({
        userId: winnerId,
        action: "RAFFLE_DRAWN",
        entityType: "Raffle",
        entityId: raffle.id,
        metadata: { winningTicket, ticketsSold: raffle.ticketsSold, inventoryItemId: entry.id }
      })
      const dropId = yield* liveDrops.record({ userId: winnerId, itemId: raffle.itemId, source: "RAFFLE", caseName: null })
      return Option.some<Drawn>({ winnerId, notification, dropId })
    })

    const announce = (drawn: Option.Option<Drawn>) =>
      Option.match(drawn, {
        onNone: () => Effect.void,
        onSome: (d) => Effect.zipRight(notifications.push(d.winnerId, d.notification), liveDrops.announce(d.dropId))
      })

    const buy = Effect.fn("Raffles.buy")(function*(userId: UserId, id: RaffleId, count: number) {
      const at = yield* now
      const bought = yield* transaction(buyInTransaction(userId, id, count, at))
      yield* realtime.balanceChanged(userId, bought.balanceCents)
      yield* announce(bought.drawn)
      return {
        tickets: Array.from({ length: bought.last - bought.first + 1 }, (_, i) => bought.first + i),
        balanceCents: bought.balanceCents,
        raffle: yield* get(id, userId)
      }
    })

    /** What `buy` runs in its transaction: the tickets reserved, recorded and paid; the raffle closed when sold out. */
    const buyInTransaction = Effect.fnUntraced(function*(userId: UserId, id: RaffleId, count: number, at: Date) {
      const reserved = yield* firstOf(ReservedRow, sql`
        UPDATE raffles SET tickets_sold = tickets_sold + ${count}
        WHERE id = ${id} AND status = 'OPEN' AND ends_at > ${at} AND tickets_sold + ${count} <= max_tickets
        RETURNING tickets_sold, ticket_price_cents`)
      if (reserved === undefined) {
        const raffle = yield* findRow(id)
        if (raffle === undefined) return yield* raffleNotFound()
        if (raffle.status !== "OPEN" || raffle.endsAt.getTime() <= at.getTime()) return yield* new RaffleNotOpen()
        return yield* NotEnoughTickets.left(raffle.maxTickets - raffle.ticketsSold)
      }
      const last = reserved.ticketsSold
      const first = last - count + 1
      // The buyer's client seed at purchase goes into the draw (docs/rules.md#raffle-draw).
      yield* fairness.ensure(userId)
      yield* execute(sql`INSERT INTO raffle_tickets (raffle_id, first_ticket, last_ticket, user_id, client_seed, created_at)
                 SELECT ${id}, ${first}, ${last}, ${userId}, client_seed, ${at} FROM fairness_seeds WHERE user_id = ${userId}`)
      const posting = yield* responsibleGaming.stake({
        userId,
        type: "RAFFLE_TICKET",
        amountCents: reserved.ticketPriceCents * BigInt(count),
        reference: { type: "RAFFLE", id }
      })
      const raffle = yield* singleOf(RaffleRow, byId(id))
      const drawn = raffle.ticketsSold === raffle.maxTickets ? yield* close(raffle, at) : Option.none<Drawn>()
      return { first, last, balanceCents: posting.balanceAfterCents, drawn }
    })

    /**
     * The draw job's run: every OPEN raffle past its endsAt is drawn (or cancelled), one transaction
     * each; rows another instance holds are skipped. Returns how many were closed.
     */
    const drawDue = Effect.fn("Raffles.drawDue")(function*() {
      let closed = 0
      while (true) {
        const at = yield* now
        const outcome = yield* transaction(drawNextDueInTransaction(at))
        if (outcome === undefined) return closed
        closed++
        yield* announce(outcome)
      }
    })

    /** What `drawDue` runs in each transaction: the next due raffle nobody else holds, closed; undefined if none. */
    const drawNextDueInTransaction = Effect.fnUntraced(function*(at: Date) {
      const due = yield* firstOf(RaffleIdRow, sql`
        SELECT id FROM raffles WHERE status = 'OPEN' AND ends_at <= ${at}
        ORDER BY ends_at LIMIT 1 FOR UPDATE SKIP LOCKED`)
      if (due === undefined) return undefined
      return yield* close(yield* singleOf(RaffleRow, byId(due.id)), at)
    })

    return { create, buy, get, list, drawDue } as const
  }),
  dependencies: [
    Ledger.Default,
    ProvablyFair.Default,
    Notifications.Default,
    LiveDrops.Default,
    Realtime.Default,
    Audit.Default,
    ResponsibleGaming.Default
  ]
}) {}
