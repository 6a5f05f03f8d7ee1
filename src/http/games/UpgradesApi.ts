/** Upgrades: the odds, the upgrade itself, its verification and the user's history (docs/rules.md#upgrades). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ItemId } from "../../schema/platform/Ids"
import { PageQuery } from "../../schema/platform/Pagination"
import {
  UpgradeHistory,
  UpgradeId,
  UpgradeProbability,
  UpgradeRequest,
  UpgradeResult,
  UpgradeVerification
} from "../../schema/games/Upgrade"
import { Authentication } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"
import { gameAction } from "../platform/Idempotent"
import { documented } from "../platform/OpenApiDocs"

const ProbabilityQuery = Schema.Struct({ fromItemId: ItemId, toItemId: ItemId }).annotations({
  parseOptions: { errors: "all" }
})

/** Why an upgrade of one item into another is refused: answered alike by the chance and by the upgrade itself. */
const UpgradeRefused = Schema.Union(
  HttpError.ItemNotUpgradable,
  HttpError.InvalidUpgrade,
  HttpError.MultiplierTooHigh,
  HttpError.ProbabilityTooLow
)

export class UpgradesApi extends HttpApiGroup.make("upgrades")
  .annotate(OpenApi.Description, "Staking items for a chance at a more valuable one (provably fair).")
  .add(
    HttpApiEndpoint.get("probability", "/upgrades/probability").setUrlParams(ProbabilityQuery)
      .addSuccess(UpgradeProbability)
      .addError(UpgradeRefused)
      .pipe(documented("Upgrade chance", "The chance of upgrading one item into another, from their values; rolls " +
        "nothing."))
  )
  .add(
    HttpApiEndpoint.post("upgrade", "/upgrades").setPayload(UpgradeRequest).addSuccess(UpgradeResult)
      .addError(Schema.Union(HttpError.ItemNotAvailable, UpgradeRefused))
      .pipe(gameAction)
      .pipe(documented("Upgrade items", "Stakes an inventory item for a more valuable target item: a provably fair " +
        "roll decides whether the target is won."))
  )
  .add(
    HttpApiEndpoint.get("verify", "/upgrades/:id/verify").setPath(Schema.Struct({ id: UpgradeId }))
      .addSuccess(UpgradeVerification)
      .pipe(documented("Verify an upgrade", "Recomputes the upgrade's roll from its seeds and nonce and answers " +
        "whether it matches the record."))
  )
  .add(
    HttpApiEndpoint.get("history", "/upgrades/history").setUrlParams(PageQuery).addSuccess(UpgradeHistory)
      .pipe(documented("My upgrades", "The user's upgrades, newest first, paged."))
  )
  .middleware(Authentication)
{}
