/**
 * The user's client seed, nonce and committed next server seed, and the generic verification endpoint
 * (docs/rules.md#fairness).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { IdString } from "../../schema/platform/Ids"
import { Authentication } from "../identity/Authentication"
import { UpgradeVerification } from "../../schema/games/Upgrade"
import { BattleRollVerification } from "../../schema/battles/Battle"
import { OpeningVerification } from "../../schema/games/Game"
import { FairnessState } from "../../schema/games/Fairness"
import * as HttpError from "../platform/HttpErrors"
import * as Examples from "../platform/OpenApiExamples"
import { documented } from "../platform/OpenApiDocs"

export class ProvablyFairApi extends HttpApiGroup.make("provablyFair")
  .annotate(
    OpenApi.Description,
    "The user's seeds and nonce, and the verification of any roll from its revealed seeds."
  )
  .add(
    HttpApiEndpoint.get("clientSeed", "/provably-fair/client-seed").addSuccess(FairnessState)
      .annotateContext(Examples.clientSeedState)
      .pipe(documented("My fairness state", "The user's client seed, the current nonce and the SHA-256 of the server " +
        "seed committed for the next roll."))
  )
  .add(
    HttpApiEndpoint.put("setClientSeed", "/provably-fair/client-seed")
      .setPayload(Schema.Struct({
        clientSeed: Schema.String.pipe(
          Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/, { message: () => "must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -" })
        )
      }))
      .addSuccess(FairnessState)
      .addError(HttpError.InvalidClientSeed)
      .annotateContext(Examples.clientSeedState)
      .pipe(documented("Set my client seed", "Replaces the client seed used by the next rolls; answers the new " +
        "fairness state."))
  )
  .add(
    HttpApiEndpoint.get("verify", "/provably-fair/verify/:id")
      .setPath(Schema.Struct({
        id: IdString
      }))
      .setUrlParams(Schema.Struct({
        type: Schema.optionalWith(Schema.Literal("opening", "upgrade", "battle-roll"), { default: () => "opening" as const })
      }))
      .addSuccess(Schema.Union(OpeningVerification, UpgradeVerification, BattleRollVerification))
      .pipe(documented("Verify any roll", "Recomputes a roll (`type`: opening, upgrade or battle-roll; opening when " +
        "absent) from its seeds and nonce and answers whether it matches the record."))
  )
  .middleware(Authentication)
{}
