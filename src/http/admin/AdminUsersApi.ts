/**
 * Administration of users (docs/rules.md#user-administration): list, ban, unban, balance adjustments. ADMIN
 * sessions only.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { TransactionId, UserId } from "../../schema/platform/Ids"
import { ListPage, PageParams } from "../../schema/platform/Pagination"
import { Role } from "../../schema/identity/User"
import { STEP_UP, withStepUp } from "./AdminStepUp"
import { AdminAuthentication } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"
import { PlainString, Reason } from "../../schema/platform/Text"
import { documented } from "../platform/OpenApiDocs"

const AdminUser = Schema.Struct({
  id: UserId,
  username: Schema.String,
  idpId: Schema.String,
  role: Role,
  balanceCents: Schema.BigIntFromNumber,
  bannedAt: Schema.NullOr(Schema.Date),
  createdAt: Schema.Date,
  lastActiveAt: Schema.NullOr(Schema.Date),
  twoFactorEnabled: Schema.Boolean,
  /** Sessions not expired. */
  activeSessions: Schema.Int
})


export class AdminUsersApi extends HttpApiGroup.make("adminUsers")
  .annotate(
    OpenApi.Description,
    "Administration of users: list, ban, unban and balance adjustments. ADMIN sessions only."
  )
  .add(
    HttpApiEndpoint.get("list", "/admin/users")
      .setUrlParams(Schema.Struct({
        ...PageParams,
        search: Schema.optional(PlainString.pipe(Schema.maxLength(100, { message: () => "must be at most 100 characters" })))
      }).annotations({ parseOptions: { errors: "all" } }))
      .addSuccess(ListPage("users", AdminUser))
      .pipe(documented("List users (admin)", "Users, paged; `search` narrows the list."))
  )
  .add(
    HttpApiEndpoint.post("ban", "/admin/users/:id/ban").setPath(Schema.Struct({ id: UserId }))
      .setPayload(Schema.Struct({ reason: Reason }).annotations({ parseOptions: { errors: "all" } }))
      .addSuccess(Schema.Struct({ message: Schema.String, sessionsRevoked: Schema.Int }))
      .addError(HttpError.CannotBanSelf)
      .pipe(withStepUp)
      .pipe(documented("Ban a user (admin)", "Bans the user with a reason and revokes every session of theirs. " + STEP_UP))
  )
  .add(
    HttpApiEndpoint.post("unban", "/admin/users/:id/unban").setPath(Schema.Struct({ id: UserId }))
      .addSuccess(Schema.Struct({ message: Schema.String }))
      .pipe(withStepUp)
      .pipe(documented("Unban a user (admin)", "Lifts a ban; the user can sign in again. " + STEP_UP))
  )
  .add(
    HttpApiEndpoint.post("adjustBalance", "/admin/users/:id/adjust-balance").setPath(Schema.Struct({ id: UserId }))
      .setPayload(Schema.Struct({
        amountCents: Schema.BigIntFromNumber.pipe(
          Schema.filter((n) => n !== 0n, { message: () => "must not be zero" })
        ),
        reason: Reason
      }).annotations({ parseOptions: { errors: "all" } }))
      .addSuccess(Schema.Struct({ userId: UserId, balanceCents: Schema.BigIntFromNumber, transactionId: TransactionId }))
      .addError(HttpError.InsufficientBalance)
      .pipe(withStepUp)
      .pipe(documented("Adjust a user's balance (admin)", STEP_UP))
  )
  .middleware(AdminAuthentication)
{}
