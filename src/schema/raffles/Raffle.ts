/** Raffles (docs/rules.md#raffles): ids, statuses and requests. */
import { Schema } from "effect"
import { message } from "../platform/Errors"
import { idFromString, ItemId } from "../platform/Ids"

export const RaffleId = idFromString("RaffleId")
export type RaffleId = typeof RaffleId.Type

export const RaffleStatus = Schema.Literal("OPEN", "DRAWN", "CANCELLED").annotations({
  message: () => ({ message: "must be one of OPEN, DRAWN, CANCELLED", override: true })
})
export type RaffleStatus = typeof RaffleStatus.Type

const MAX_RAFFLE_TICKETS = 10_000

export const CreateRaffleRequest = Schema.Struct({
  itemId: ItemId,
  ticketPriceCents: Schema.Int.pipe(
    Schema.between(1, 10_000_000, { message: () => "must be an integer from 1 to 10000000 cents" })
  ),
  maxTickets: Schema.Int.pipe(
    Schema.between(1, MAX_RAFFLE_TICKETS, { message: () => `must be an integer from 1 to ${MAX_RAFFLE_TICKETS}` })
  ),
  endsAt: Schema.Date.annotations({ message: () => ({ message: "must be an ISO 8601 timestamp", override: true }) })
}).annotations({ identifier: "CreateRaffleRequest", parseOptions: { errors: "all" } })
export type CreateRaffleRequest = typeof CreateRaffleRequest.Type

export const BuyTicketsRequest = Schema.Struct({
  count: Schema.Int.pipe(Schema.between(1, 100, { message: () => "must be an integer from 1 to 100" }))
}).annotations({ parseOptions: { errors: "all" } })

/** Buying tickets of a raffle that is not OPEN or has ended (docs/rules.md#raffle-tickets) (409). */
export class RaffleNotOpen extends Schema.TaggedError<RaffleNotOpen>()("RaffleNotOpen", message("Raffle is not open")) {}

/** A new raffle whose `endsAt` is not after now (docs/rules.md#raffle-creation) (400). */
export class RaffleEndNotInFuture extends Schema.TaggedError<RaffleEndNotInFuture>()(
  "RaffleEndNotInFuture",
  message("endsAt must be in the future")
) {}

/** More tickets asked for than are left; the message says how many are (docs/rules.md#raffle-tickets) (409). */
export class NotEnoughTickets extends Schema.TaggedError<NotEnoughTickets>()(
  "NotEnoughTickets",
  message("Not enough tickets left")
) {
  static left(count: number): NotEnoughTickets {
    return new NotEnoughTickets({ message: `Only ${count} tickets left` })
  }
}
