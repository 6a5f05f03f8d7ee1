/** The payment gateway's callback (docs/rules.md#gateway-callback): public, authenticated by its signature. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import * as HttpError from "../platform/HttpErrors"
import { documented } from "../platform/OpenApiDocs"

export class PaymentCallbackApi extends HttpApiGroup.make("paymentCallback")
  .annotate(OpenApi.Description, "The payment gateway's signed events (charges and payouts).")
  .add(
    HttpApiEndpoint.post("payment", "/webhooks/payment").addSuccess(Schema.Struct({ received: Schema.Literal(true) }))
      .addError(Schema.Union(HttpError.InvalidWebhookSignature, HttpError.AddressNotAllowed))
      .pipe(documented("Payment gateway callback", "Body `{event, data: {id, failReason?}}` signed in " +
        "`x-webhook-signature` (lowercase hex HMAC-SHA256 of the body with the shared webhook secret; 401 `Invalid " +
        "webhook signature`). Callers outside GATEWAY_ALLOWED_IPS get 403 before the signature is looked at; a " +
        "header that is not 64 hex characters is 401 before the body is read. At most 64 KiB (413). charge.paid " +
        "confirms (once), charge.failed fails, charge.expired expires; payout.paid and payout.failed `{data: {id, " +
        "reference: \"withdrawal-<id>\", failReason?}}` settle a withdrawal (a failed payout is refunded once); " +
        "other events are acknowledged. An unknown charge id: 404 `Deposit not found`; an unknown payout reference: " +
        "404 `Withdrawal not found`."))
  )
{}
