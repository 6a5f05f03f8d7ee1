/**
 * Administration of withdrawals (docs/rules.md#withdrawal-payout): the queue, approval (payout through the gateway),
 * rejection, and reconciliation of a payout whose outcome is not known.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ListPage, StatusPageQuery } from "../../schema/platform/Pagination"
import { AdminWithdrawalView, WithdrawalId, WithdrawalStatus } from "../../schema/money/Withdrawal"
import { STEP_UP, withStepUp } from "./AdminStepUp"
import { AdminAuthentication } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"
import { Reason } from "../../schema/platform/Text"
import { documented } from "../platform/OpenApiDocs"

const IdPath = Schema.Struct({ id: WithdrawalId })

export class AdminWithdrawalsApi extends HttpApiGroup.make("adminWithdrawals")
  .annotate(
    OpenApi.Description,
    "Administration of withdrawals: approval with the payout, rejection with refund, reconciliation with the " +
      "gateway. ADMIN sessions only."
  )
  .add(
    HttpApiEndpoint.get("list", "/admin/withdrawals").setUrlParams(StatusPageQuery(WithdrawalStatus))
      .addSuccess(ListPage("withdrawals", AdminWithdrawalView))
      .pipe(documented("List withdrawals (admin)", "Withdrawals of every user, newest first, optionally of one " +
        "status, with payout attempts and the last error."))
  )
  .add(
    HttpApiEndpoint.post("approve", "/admin/withdrawals/:id/approve").setPath(IdPath).addSuccess(AdminWithdrawalView)
      .addError(Schema.Union(
        HttpError.WithdrawalPayoutInProgress,
        HttpError.WithdrawalNotPending,
        HttpError.PayoutFailed
      ))
      .pipe(withStepUp)
      .pipe(documented("Approve a withdrawal (admin)", "PENDING -> PROCESSING, then the payout through the gateway: " +
        "paid -> COMPLETED and webhook withdrawal.completed; refused -> 502 and PENDING again (approve again or " +
        "reject); no answer (timeout, 5xx) -> 200 still PROCESSING, settled by the gateway's payout event or by " +
        "reconcile. 409 while PROCESSING. " + STEP_UP))
  )
  .add(
    HttpApiEndpoint.post("reject", "/admin/withdrawals/:id/reject").setPath(IdPath)
      .setPayload(Schema.Struct({ reason: Reason }).annotations({ parseOptions: { errors: "all" } }))
      .addSuccess(AdminWithdrawalView)
      .addError(Schema.Union(HttpError.WithdrawalPayoutInProgress, HttpError.WithdrawalNotPending))
      .pipe(withStepUp)
      .pipe(documented("Reject a withdrawal (admin)", "PENDING -> REJECTED with the reason; the amount is refunded " +
        "and the owner notified (WITHDRAWAL_REJECTED, with the reason). 409 while PROCESSING. " + STEP_UP))
  )
  .add(
    HttpApiEndpoint.post("reconcile", "/admin/withdrawals/:id/reconcile").setPath(IdPath).addSuccess(AdminWithdrawalView)
      .addError(Schema.Union(HttpError.GatewayUnavailable, HttpError.WithdrawalNotProcessing))
      .pipe(documented("Reconcile a payout (admin)", "Asks the gateway about the payout of a PROCESSING withdrawal: " +
        "paid -> COMPLETED; failed -> FAILED and refunded; never received (handed over more than 2 minutes ago) -> " +
        "PENDING; still processing -> unchanged. Not PROCESSING: 400 `Withdrawal is not processing`; gateway " +
        "unreachable: 502."))
  )
  .middleware(AdminAuthentication)
{}
