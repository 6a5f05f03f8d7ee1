/**
 * Users' activity (docs/rules.md#user-activity): every signed-in request notes it, and it is written
 * (`Users.recordActivity`: the day in BUSINESS_TIMEZONE for the dashboard's activeToday, and lastActiveAt) at
 * most once per user every ACTIVITY_THROTTLE_MS. The throttle's key names that day, so the first request of each
 * day is always recorded, even 5 minutes after one the day before. Each instance also remembers the
 * throttle keys it has seen set, so most requests skip the store.
 */
import { Clock, Effect } from "effect"
import { AppConfig } from "../../layers/AppConfig"
import { KeyValue } from "../../layers/stores/KeyValue"
import type { UserId } from "../../schema/platform/Ids"
import { zonedCalendar } from "../platform/ZonedCalendar"
import { Users } from "./Users"

const ACTIVITY_THROTTLE_MS = 5 * 60_000
const THROTTLES_KEPT = 10_000

export class Activity extends Effect.Service<Activity>()("app/Activity", {
  effect: Effect.gen(function*() {
    const users = yield* Users
    const kv = yield* KeyValue
    const calendar = zonedCalendar((yield* AppConfig).businessTimeZone)
    /** Throttle keys this instance knows are set in the store, and until when. */
    const throttledUntil = new Map<string, number>()

    const note = Effect.fnUntraced(function*(userId: UserId) {
      const now = yield* Clock.currentTimeMillis
      const throttle = `activity:${userId}:${calendar.dayOf(now)}`
      if ((throttledUntil.get(throttle) ?? 0) > now) return
      if (yield* kv.setIfAbsent(throttle, "1", ACTIVITY_THROTTLE_MS)) yield* users.recordActivity(userId)
      if (throttledUntil.size >= THROTTLES_KEPT) throttledUntil.clear()
      throttledUntil.set(throttle, now + ACTIVITY_THROTTLE_MS)
    })

    return { note } as const
  }),
  dependencies: [Users.Default]
}) {}
