/** Administration of deposits (docs/rules.md#admin-deposit-confirmation): the list and manual confirmation. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AdminDepositView, DepositId, DepositStatus } from "../../schema/money/Deposit"
import { ListPage, StatusPageQuery } from "../../schema/platform/Pagination"
import { STEP_UP, withStepUp } from "./AdminStepUp"
import { AdminAuthentication } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"
import { documented } from "../platform/OpenApiDocs"

export class AdminDepositsApi extends HttpApiGroup.make("adminDeposits")
  .annotate(OpenApi.Description, "Administration of deposits: the list and manual confirmation. ADMIN sessions only.")
  .add(
    HttpApiEndpoint.get("list", "/admin/deposits").setUrlParams(StatusPageQuery(DepositStatus))
      .addSuccess(ListPage("deposits", AdminDepositView))
      .pipe(documented("List deposits (admin)", "Deposits of every user, newest first, optionally of one status."))
  )
  .add(
    HttpApiEndpoint.post("confirm", "/admin/deposits/:id/confirm").setPath(Schema.Struct({ id: DepositId }))
      .addSuccess(Schema.Struct({ id: DepositId, status: DepositStatus, confirmedAt: Schema.Date }))
      .pipe(withStepUp)
      .addError(HttpError.DepositNotPending)
      .addError(HttpError.SelfExcluded)
      .pipe(documented("Confirm a deposit by hand (admin)", "Confirms a PENDING deposit as the gateway's charge.paid " +
        "would (credit, notification, audit, webhook) and records ADMIN_CONFIRM_DEPOSIT. Any other status: 400 " +
        "`Deposit is not pending`. The deposit's owner self-excluded (or listed by the registry): 403 " +
        "`SELF_EXCLUDED`, nothing credited. " + STEP_UP))
  )
  .middleware(AdminAuthentication)
{}
