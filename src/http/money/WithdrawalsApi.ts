/** A user's withdrawals (docs/rules.md#withdrawals). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ListPage, PageQuery } from "../../schema/platform/Pagination"
import { WithdrawalId, WithdrawalRequest, WithdrawalRequested, WithdrawalView } from "../../schema/money/Withdrawal"
import { Authentication } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"
import { moneyMoving } from "../platform/Idempotent"
import * as Examples from "../platform/OpenApiExamples"
import { documented } from "../platform/OpenApiDocs"

export class WithdrawalsApi extends HttpApiGroup.make("withdrawals")
  .annotate(OpenApi.Description, "The user's withdrawals: request, list and cancel.")
  .add(
    HttpApiEndpoint.post("request", "/withdrawals/request").setPayload(WithdrawalRequest)
      .addSuccess(WithdrawalRequested, { status: 201 })
      .addError(Schema.Union(
        HttpError.TwoFactorRequired,
        HttpError.InvalidTwoFactorCode,
        HttpError.TwoFactorNotEnabled,
        HttpError.InsufficientBalance,
        HttpError.KeyNotOwned
      ))
      .pipe(moneyMoving)
      .annotateContext(Examples.requestWithdrawal)
      .pipe(documented("Request a withdrawal", "Debits the amount at once (refunded if the withdrawal is cancelled, " +
        "rejected or its payout fails). With 2FA on, `twoFactorCode` is needed when the amount plus the withdrawals " +
        "of the last 24 hours (PENDING, PROCESSING, COMPLETED) exceeds 10000 cents, and for a PIX key no payout has " +
        "gone to yet: without it 400 `{statusCode: 400, error: \"2FA_REQUIRED\", message}`, with a wrong one 400 " +
        "`Invalid 2FA code` (the 5th wrong code in 15 minutes locks 2FA for 15 minutes: 429). Every request sends " +
        "the owner a WITHDRAWAL_REQUESTED notification (amount, key type, masked key); its end sends WITHDRAWAL_COMPLETED, " +
        "WITHDRAWAL_REJECTED (with the administrator's reason) or WITHDRAWAL_FAILED (refunded). Under JURISDICTION=BR " +
        "the PIX key must belong to the account holder (the gateway's key directory is asked first): else 422 " +
        "`{statusCode: 422, error: \"KEY_NOT_OWNED\", message}`, and 503 while the directory is unavailable; nothing moves."))
  )
  .add(
    HttpApiEndpoint.get("list", "/withdrawals").setUrlParams(PageQuery)
      .addSuccess(ListPage("withdrawals", WithdrawalView))
      .pipe(documented("My withdrawals", "The user's withdrawals, newest first, with their status."))
  )
  .add(
    HttpApiEndpoint.post("cancel", "/withdrawals/:id/cancel").setPath(Schema.Struct({ id: WithdrawalId }))
      .addSuccess(Schema.extend(WithdrawalView, Schema.Struct({ balanceCents: Schema.BigIntFromNumber })))
      .addError(Schema.Union(HttpError.WithdrawalBeingProcessed, HttpError.WithdrawalNotPending))
      .pipe(documented("Cancel my withdrawal", "PENDING and not yet sent to the gateway -> CANCELLED, refunded. " +
        "Answers the withdrawal and the new balance."))
  )
  .middleware(Authentication)
{}
