/** The payment gateway's callback (docs/rules.md#gateway-callback): public, authenticated by its signature. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import * as HttpError from "../platform/HttpErrors"
import { documented } from "../platform/OpenApiDocs"

export class PaymentCallbackApi extends HttpApiGroup.make("paymentCallback")
  .annotate(OpenApi.Description, "The payment gateway's signed events (charges and payouts).")
  .add(
    HttpApiEndpoint.post("payment", "/webhooks/payment")
      .addSuccess(Schema.Struct({
        received: Schema.Literal(true),
        /** This event was taken before (a replay): nothing was done. */
        duplicate: Schema.optional(Schema.Literal(true))
      }))
      .addError(Schema.Union(HttpError.InvalidWebhookSignature, HttpError.InvalidWebhookTimestamp, HttpError.AddressNotAllowed))
      .pipe(documented("Payment gateway callback", "Body `{event, data: {id, failReason?, payerDocument?}}` signed in " +
        "`x-webhook-signature` (lowercase hex HMAC-SHA256 with the shared webhook secret of the body, or of " +
        "`timestamp + \".\" + body` when `x-webhook-timestamp` (whole seconds since the epoch) is sent; 401 `Invalid " +
        "webhook signature`). A timestamp more than 5 minutes from the server's clock, or none while " +
        "WEBHOOK_REQUIRE_TIMESTAMP is on (the default in production): 401 `Invalid webhook timestamp`. Callers " +
        "outside GATEWAY_ALLOWED_IPS get 403 before the signature is looked at; a signature header that is not 64 " +
        "hex characters, or a timestamp header that is not digits, is 401 before the body is read. At most 64 KiB " +
        "(413). Each event (the same signed content) is taken once: again, it answers `{received: true, duplicate: " +
        "true}` and does nothing. charge.paid confirms (once; under JURISDICTION=BR only when `data.payerDocument`, the " +
        "payer's CPF digits, is the account holder's, else the deposit is refunded), charge.failed fails, " +
        "charge.expired expires; " +
        "payout.paid and payout.failed `{data: {id, reference: \"withdrawal-<id>\", failReason?}}` settle a " +
        "withdrawal (a failed payout is refunded once); other events are acknowledged. An unknown charge id: 404 " +
        "`Deposit not found`; an unknown payout reference: 404 `Withdrawal not found`."))
  )
{}
