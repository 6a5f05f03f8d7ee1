/** The signed-in user's notifications (D11). */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Notification, NotificationId } from "../schema/Notification"
import { PageQuery } from "../schema/Pagination"
import { Authentication } from "./Authentication"

export class NotificationsApi extends HttpApiGroup.make("notifications")
  .add(
    HttpApiEndpoint.get("list", "/notifications")
      .setUrlParams(PageQuery)
      .addSuccess(Schema.Struct({
        notifications: Schema.Array(Notification),
        unreadCount: Schema.Int,
        total: Schema.Int,
        page: Schema.Int
      }))
  )
  .add(
    HttpApiEndpoint.post("read", "/notifications/:id/read")
      .setPath(Schema.Struct({ id: NotificationId }))
      .addSuccess(Schema.Struct({ message: Schema.String }))
  )
  .add(
    HttpApiEndpoint.post("readAll", "/notifications/read-all")
      .addSuccess(Schema.Struct({ message: Schema.String, updated: Schema.Int }))
  )
  .middleware(Authentication)
{}
