/**
 * The embedded sandbox gateway's controls (docs/rules.md#sandbox-gateway), for paying a deposit by hand on the embedded
 * defaults: each makes the sandbox send the matching signed event to our own callback over HTTP.
 * Only while the sandbox is the gateway (no PAYMENT_GATEWAY_URL); the deposit's owner or an admin.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../identity/Authentication"
import { DepositView, SandboxAction } from "../../schema/money/Deposit"
import * as HttpError from "../platform/HttpErrors"
import { PlainString } from "../../schema/platform/Text"
import { documented } from "../platform/OpenApiDocs"
import { STEP_UP, withStepUp } from "../admin/AdminStepUp"

export class SandboxApi extends HttpApiGroup.make("sandbox")
  .annotate(OpenApi.Description, "The embedded sandbox gateway's controls, for paying deposits by hand in development.")
  .add(
    HttpApiEndpoint.post("charge", "/sandbox/charges/:externalId/:action")
      .setPath(Schema.Struct({ externalId: PlainString, action: SandboxAction }))
      .addSuccess(Schema.Struct({
        /** The gateway event sent: charge.paid, charge.failed or charge.expired. */
        event: Schema.String,
        /** The HTTP status our callback answered. */
        callbackStatus: Schema.Int,
        /** The deposit after the callback. */
        deposit: DepositView
      }))
      .addError(Schema.Union(HttpError.GatewayUnavailable, HttpError.ChargeCancelled, HttpError.SandboxNotInUse))
      .pipe(withStepUp)
      .pipe(documented("Settle a sandbox charge", "Sandbox only: pay, fail or expire the charge of one of your " +
        "deposits (any deposit for an admin). The sandbox signs the gateway event and POSTs it to " +
        "/api/webhooks/payment, the path a real gateway takes. Settling someone else's charge is an " +
        "administrator's step-up action: " + STEP_UP))
  )
  .middleware(Authentication)
{}
