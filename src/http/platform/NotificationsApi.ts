/** The signed-in user's notifications (docs/rules.md#notifications). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { NotificationId, NotificationPage } from "../../schema/platform/Notification"
import { PageQuery } from "../../schema/platform/Pagination"
import { Authentication } from "../identity/Authentication"
import { documented } from "./OpenApiDocs"

export class NotificationsApi extends HttpApiGroup.make("notifications")
  .annotate(OpenApi.Description, "The user's notifications (deposits confirmed, withdrawals, security alerts, wins).")
  .add(
    HttpApiEndpoint.get("list", "/notifications").setUrlParams(PageQuery)
      .addSuccess(NotificationPage)
      .pipe(documented("List my notifications", "The user's notifications, newest first, with the number still " +
        "unread."))
  )
  .add(
    HttpApiEndpoint.post("read", "/notifications/:id/read").setPath(Schema.Struct({ id: NotificationId }))
      .addSuccess(Schema.Struct({ message: Schema.String }))
      .pipe(documented("Mark a notification read", "Marks one of the user's notifications read; another user's id " +
        "answers 404."))
  )
  .add(
    HttpApiEndpoint.post("readAll", "/notifications/read-all")
      .addSuccess(Schema.Struct({ message: Schema.String, updated: Schema.Int }))
      .pipe(documented("Mark all notifications read", "Marks every unread notification of the user read and answers " +
        "how many changed."))
  )
  .middleware(Authentication)
{}
