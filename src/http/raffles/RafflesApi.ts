/** Raffles (docs/rules.md#raffles): the list, one raffle, buying tickets. Their creation: AdminRafflesApi. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Rarity } from "../../schema/games/Catalog"
import { ItemId, UserId } from "../../schema/platform/Ids"
import { ListPage, StatusPageQuery } from "../../schema/platform/Pagination"
import { BuyTicketsRequest, RaffleId, RaffleStatus } from "../../schema/raffles/Raffle"
import { Authentication } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"
import { gameAction } from "../platform/Idempotent"
import { documented } from "../platform/OpenApiDocs"

export const Raffle = Schema.Struct({
  id: RaffleId,
  item: Schema.Struct({
    id: ItemId,
    name: Schema.String,
    rarity: Rarity,
    valueCents: Schema.BigIntFromNumber,
    imageUrl: Schema.String
  }),
  ticketPriceCents: Schema.BigIntFromNumber,
  maxTickets: Schema.Int,
  ticketsSold: Schema.Int,
  endsAt: Schema.Date,
  status: RaffleStatus,
  serverSeedHash: Schema.String,
  /** Revealed once the raffle is closed. */
  serverSeed: Schema.NullOr(Schema.String),
  winningTicket: Schema.NullOr(Schema.Int),
  /**
   * Once drawn: SHA-256 (hex) of every ticket's client seed in ticket order, joined by ":"; the draw is
   * (HMAC-SHA256(serverSeed, `${id}:${ticketsSold}:${ticketSeedsDigest}`) mod ticketsSold) + 1. Null
   * before the draw, and for raffles drawn before client seeds were recorded.
   */
  ticketSeedsDigest: Schema.NullOr(Schema.String),
  /** Once drawn, in `GET /raffles/:id` (null in lists): each purchase's tickets and the buyer's client seed. */
  ticketSeeds: Schema.NullOr(Schema.Array(Schema.Struct({
    firstTicket: Schema.Int,
    lastTicket: Schema.Int,
    clientSeed: Schema.String
  }))),
  winner: Schema.NullOr(Schema.Struct({ id: UserId, username: Schema.String })),
  /** The caller's ticket numbers. */
  myTickets: Schema.Array(Schema.Int)
})

/** `POST /raffles/:id/tickets`: the numbers bought, the balance after, and the raffle. */
export const TicketPurchase = Schema.Struct({ tickets: Schema.Array(Schema.Int), balanceCents: Schema.BigIntFromNumber, raffle: Raffle })

const IdPath = Schema.Struct({ id: RaffleId })

export class RafflesApi extends HttpApiGroup.make("raffles")
  .annotate(OpenApi.Description, "Raffles: tickets bought with balance, a provably fair draw at the end.")
  .add(
    HttpApiEndpoint.get("list", "/raffles").setUrlParams(StatusPageQuery(RaffleStatus))
      .addSuccess(ListPage("raffles", Raffle))
      .pipe(documented("List raffles", "Raffles, newest first, paged."))
  )
  .add(
    HttpApiEndpoint.get("get", "/raffles/:id").setPath(IdPath).addSuccess(Raffle)
      .pipe(documented("One raffle", "One raffle with the caller's tickets; once drawn, its result."))
  )
  .add(
    HttpApiEndpoint.post("buy", "/raffles/:id/tickets").setPath(IdPath).setPayload(BuyTicketsRequest)
      .addSuccess(TicketPurchase)
      .addError(Schema.Union(HttpError.RaffleNotOpen, HttpError.NotEnoughTickets, HttpError.InsufficientBalance))
      .pipe(gameAction)
      .pipe(documented("Buy raffle tickets", "Buys `count` (1 to 100) consecutive ticket numbers for count x " +
        "ticketPriceCents. 409 `Raffle is not open` after endsAt or the draw, 409 `Only N tickets left`. The " +
        "purchase that sells out draws the winner."))
  )
  .middleware(Authentication)
{}
