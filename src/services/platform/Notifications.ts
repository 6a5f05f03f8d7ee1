/**
 * User notifications (docs/rules.md#notifications): rows in `notifications`, pushed to the user's realtime channel
 * `user:<id>` as `{event: "notification", data: {id, type, title, message}}`.
 *
 * Inside a database transaction, `create` the row and `push` it after the commit, so a rolled-back
 * operation never announces anything; outside one, `notify` does both.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import { Broadcast } from "../../layers/stores/Broadcast"
import { NotFound } from "../../schema/platform/Errors"
import {
  Notification,
  NotificationId,
  type NotificationPage,
  type NotificationType
} from "../../schema/platform/Notification"
import { afterCommit, rowCountOf, rowsOf, singleOf, windowOf } from "./SqlRows"
import type { PageRequest } from "../../schema/platform/Pagination"

interface NewNotification {
  readonly type: NotificationType
  readonly title: string
  readonly message: string
}

/** The realtime channel of one user (docs/rules.md#realtime). */
export const userChannel = (userId: bigint) => `user:${userId}`

const Row = Schema.Struct({
  id: NotificationId,
  type: Notification.fields.type,
  title: Schema.String,
  message: Schema.String,
  read: Schema.Boolean,
  createdAt: Schema.DateFromSelf
})

const CountsRow = Schema.Struct({ total: Schema.NumberFromString, unread: Schema.NumberFromString })

export class Notifications extends Effect.Service<Notifications>()("app/Notifications", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const broadcast = yield* Broadcast

    const create = Effect.fn("Notifications.create")(function*(userId: bigint, notification: NewNotification) {
      const now = new Date(yield* Clock.currentTimeMillis)
      return new Notification(
        yield* singleOf(Row, sql`
          INSERT INTO notifications (user_id, type, title, message, created_at)
          VALUES (${userId}, ${notification.type}, ${notification.title}, ${notification.message}, ${now})
          RETURNING id, type, title, message, read, created_at`)
      )
    })

    const push = Effect.fn("Notifications.push")(function*(userId: bigint, n: Notification) {
      yield* afterCommit(broadcast.publish({
        channel: userChannel(userId),
        message: JSON.stringify({
          event: "notification",
          data: { id: String(n.id), type: n.type, title: n.title, message: n.message }
        })
      }))
    })

    const notify = Effect.fn("Notifications.notify")(function*(userId: bigint, notification: NewNotification) {
      const created = yield* create(userId, notification)
      yield* push(userId, created)
      return created
    })

    const list = Effect.fn("Notifications.list")(function*(userId: bigint, paging: PageRequest) {
      // Not `pageOf`: one statement counts both the total and the unread.
      const window = windowOf(paging)
      const rows = yield* rowsOf(Row, sql`
        SELECT id, type, title, message, read, created_at FROM notifications
        WHERE user_id = ${userId} ORDER BY id DESC LIMIT ${window.limit} OFFSET ${window.offset}`)
      const counts = yield* singleOf(CountsRow, sql`
        SELECT count(*) AS total, count(*) FILTER (WHERE NOT read) AS unread
        FROM notifications WHERE user_id = ${userId}`)
      return {
        notifications: rows.map((row) => new Notification(row)),
        unreadCount: counts.unread,
        total: counts.total,
        page: paging.page
      } satisfies NotificationPage
    })

    const markRead = Effect.fn("Notifications.markRead")(function*(userId: bigint, id: NotificationId) {
      const marked = yield* rowCountOf(sql`UPDATE notifications SET read = true WHERE id = ${id} AND user_id = ${userId} RETURNING id`)
      if (marked === 0) return yield* NotFound.of("Notification")
    })

    const markAllRead = Effect.fn("Notifications.markAllRead")(function*(userId: bigint) {
      return yield* rowCountOf(sql`UPDATE notifications SET read = true WHERE user_id = ${userId} AND NOT read RETURNING id`)
    })

    return { create, push, notify, list, markRead, markAllRead } as const
  })
}) {}
