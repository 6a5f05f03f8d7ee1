/** The signed-in user's notifications (docs/rules.md#notifications) through the public API. */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { signIn } from "../support/SignIn"
import { makeTestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const addNotifications = (userId: string, count: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
      sql`INSERT INTO notifications (user_id, type, title, message, created_at)
          VALUES (${userId}, 'DEPOSIT_CONFIRMED', ${`Deposit ${i}`}, ${`R$ ${i},00 credited`}, now())`))

layer(TestDatabase)("notifications", (it) => {
  it.scoped("list newest first with unread count and pages; mark one or all as read; others' are 404", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const owner = yield* signIn(client, "notified")
      const stranger = yield* signIn(client, "nosy")
      const ownerId = (yield* client.get("/api/auth/me", owner.auth)).body.id
      yield* addNotifications(ownerId, 3)

      const page = (yield* client.get("/api/notifications?limit=2", owner.auth)).body
      expect(page).toMatchObject({ unreadCount: 3, total: 3, page: 1 })
      expect(page.notifications.map((n: { title: string }) => n.title)).toEqual(["Deposit 2", "Deposit 1"])
      expect(Object.keys(page.notifications[0]).sort()).toEqual(["createdAt", "id", "message", "read", "title", "type"])
      const second = (yield* client.get("/api/notifications?limit=2&page=2", owner.auth)).body
      expect(second.notifications.map((n: { title: string }) => n.title)).toEqual(["Deposit 0"])

      const id = page.notifications[0].id
      const foreign = yield* client.post(`/api/notifications/${id}/read`, undefined, stranger.auth)
      expect(foreign.body).toEqual({ statusCode: 404, message: "Notification not found" })
      expect((yield* client.post(`/api/notifications/${id}/read`, undefined, owner.auth)).status).toBe(200)
      expect((yield* client.get("/api/notifications", owner.auth)).body.unreadCount).toBe(2)
      expect((yield* client.post("/api/notifications/read-all", undefined, owner.auth)).body).toEqual({
        message: "All notifications marked as read",
        updated: 2
      })
      expect((yield* client.get("/api/notifications", owner.auth)).body.unreadCount).toBe(0)
      expect((yield* client.get("/api/notifications", stranger.auth)).body).toEqual({
        notifications: [],
        unreadCount: 0,
        total: 0,
        page: 1
      })
      expect((yield* client.get("/api/notifications")).status).toBe(401)
    }))
})
