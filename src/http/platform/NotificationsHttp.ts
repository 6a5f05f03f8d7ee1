/** Handlers of the notification endpoints. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Notifications } from "../../services/platform/Notifications"
import { Api } from "../Api"
import { Authentication, CurrentUser } from "../identity/Authentication"
import { buildOnly } from "./RequestContext"

export const NotificationsLive = HttpApiBuilder.group(Api, "notifications", Effect.fnUntraced(function*(handlers) {
  const notifications = yield* Notifications
  return handlers
    .handle("list", ({ urlParams }) =>
      Effect.flatMap(CurrentUser, ({ user }) => notifications.list(user.id, urlParams)))
    .handle("read", ({ path }) =>
      Effect.flatMap(CurrentUser, ({ user }) =>
        Effect.as(notifications.markRead(user.id, path.id), { message: "Notification marked as read" })))
    .handle("readAll", () =>
      Effect.flatMap(CurrentUser, ({ user }) =>
        Effect.map(notifications.markAllRead(user.id), (updated) => ({
          message: "All notifications marked as read",
          updated
        }))))
})).pipe(buildOnly([Authentication, Notifications]))
