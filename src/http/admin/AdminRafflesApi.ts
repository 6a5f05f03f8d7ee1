/**
 * Administration of raffles (docs/rules.md#raffle-creation): creation, which commits to the server seed by
 * publishing its hash.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { CreateRaffleRequest } from "../../schema/raffles/Raffle"
import { STEP_UP, withStepUp } from "./AdminStepUp"
import { AdminAuthentication } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"
import { Raffle } from "../raffles/RafflesApi"
import { documented } from "../platform/OpenApiDocs"

export class AdminRafflesApi extends HttpApiGroup.make("adminRaffles")
  .annotate(OpenApi.Description, "Creating raffles. ADMIN sessions only.")
  .add(
    HttpApiEndpoint.post("create", "/admin/raffles").setPayload(CreateRaffleRequest).addSuccess(Raffle, { status: 201 })
      .addError(HttpError.RaffleEndNotInFuture)
      .pipe(withStepUp)
      .pipe(documented("Create a raffle (admin)", "Publishes serverSeedHash now; the seed is revealed at the draw " +
        "(when sold out, or at endsAt). Winning ticket = (HMAC-SHA256(serverSeed, " +
        "`${raffleId}:${ticketsSold}:${ticketSeedsDigest}`) mod ticketsSold) + 1, the digest being SHA-256 of every " +
        "ticket's client seed at purchase, in ticket order, joined by \":\" (docs/fairness.md). " + STEP_UP))
  )
  .middleware(AdminAuthentication)
{}
