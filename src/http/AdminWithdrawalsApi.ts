/** Administration of withdrawals (D9): the queue, approval (payout through the gateway) and rejection. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { UserId } from "../schema/Ids"
import { PageParams } from "../schema/Pagination"
import { PixKeyType, WithdrawalId, WithdrawalStatus } from "../schema/Withdrawal"
import { AdminAuthentication } from "./Authentication"
import * as HttpError from "./HttpErrors"
import { WithdrawalView } from "./WithdrawalsApi"
import { Reason } from "../schema/Text"

const AdminWithdrawal = Schema.extend(
  WithdrawalView,
  Schema.Struct({
    user: Schema.Struct({ id: UserId, username: Schema.String }),
    pixKeyType: PixKeyType,
    pixKey: Schema.String,
    payoutId: Schema.NullOr(Schema.String),
    /** Gateway calls started; after a failed one the owner can no longer cancel. */
    payoutAttempts: Schema.Int,
    /** The gateway's message for the last failed payout. */
    payoutError: Schema.NullOr(Schema.String),
    /** An approval is calling the gateway right now. */
    payoutInProgress: Schema.Boolean
  })
)


const IdPath = Schema.Struct({ id: WithdrawalId })

export class AdminWithdrawalsApi extends HttpApiGroup.make("adminWithdrawals")
  .add(
    HttpApiEndpoint.get("list", "/admin/withdrawals")
      .setUrlParams(
        Schema.Struct({ ...PageParams, status: Schema.optional(WithdrawalStatus) })
          .annotations({ parseOptions: { errors: "all" } })
      )
      .addSuccess(Schema.Struct({ withdrawals: Schema.Array(AdminWithdrawal), total: Schema.Int, page: Schema.Int }))
  )
  .add(
    HttpApiEndpoint.post("approve", "/admin/withdrawals/:id/approve")
      .setPath(IdPath)
      .addSuccess(AdminWithdrawal)
      .addError(HttpError.Conflict)
      .addError(HttpError.PayoutFailed)
      .annotate(
        OpenApi.Description,
        "Pays out through the gateway, then COMPLETED and webhook withdrawal.completed. 409 while another approval " +
          "is paying it out; 502 when the gateway fails (the withdrawal stays PENDING and can be approved again)."
      )
  )
  .add(
    HttpApiEndpoint.post("reject", "/admin/withdrawals/:id/reject")
      .setPath(IdPath)
      .setPayload(Schema.Struct({ reason: Reason }).annotations({ parseOptions: { errors: "all" } }))
      .addSuccess(AdminWithdrawal)
      .addError(HttpError.Conflict)
      .annotate(OpenApi.Description, "PENDING -> REJECTED with the reason; the amount is refunded.")
  )
  .middleware(AdminAuthentication)
{}
