/**
 * The windows of the responsible-gaming limits (docs/responsible-gaming.md#windows): the current day, ISO week
 * (Monday to Sunday) and month in America/Sao_Paulo, whatever the server's own time zone, and the minute play
 * time is counted in. A window's key is its first day (`YYYY-MM-DD`); it ends where the next one starts.
 */
import { zonedCalendar } from "../platform/ZonedCalendar"

export const PLAY_TIME_ZONE = "America/Sao_Paulo"

export interface PlayWindow {
  /** The window's first local day, `YYYY-MM-DD`: what the tallies and warnings are keyed on. */
  readonly key: string
  readonly start: Date
  /** The next window's start: when a limit reached in this one lets go. */
  readonly end: Date
}

export interface PlayWindows {
  readonly day: PlayWindow
  readonly week: PlayWindow
  readonly month: PlayWindow
  /** The minute of the action (seconds dropped): one play minute, however many actions it holds. */
  readonly minute: Date
}

const calendar = zonedCalendar(PLAY_TIME_ZONE)

/** The local calendar fields of an instant. */
const fieldsOf = calendar.fieldsOf

/** The instant local midnight begins on a calendar day (given as a UTC date of the same Y-M-D). */
const localMidnight = calendar.midnightOf

const keyOf = (day: Date) => day.toISOString().slice(0, 10)
const addDays = (day: Date, days: number) => new Date(day.getTime() + days * 86_400_000)

const windowOf = (first: Date, next: Date): PlayWindow => ({
  key: keyOf(first),
  start: localMidnight(first),
  end: localMidnight(next)
})

let cached: { readonly minute: number; readonly windows: PlayWindows } | undefined

/** The windows an instant falls in (the last minute's answer is kept: the hot paths ask many times a minute). */
export const playWindowsAt = (at: Date): PlayWindows => {
  const minute = Math.floor(at.getTime() / 60_000) * 60_000
  if (cached?.minute === minute) return cached.windows
  const f = fieldsOf(at)
  const today = new Date(Date.UTC(f.year, f.month - 1, f.day))
  const monday = addDays(today, -((today.getUTCDay() + 6) % 7))
  const firstOfMonth = new Date(Date.UTC(f.year, f.month - 1, 1))
  const windows: PlayWindows = {
    day: windowOf(today, addDays(today, 1)),
    week: windowOf(monday, addDays(monday, 7)),
    month: windowOf(firstOfMonth, new Date(Date.UTC(f.year, f.month, 1))),
    minute: new Date(minute)
  }
  cached = { minute, windows }
  return windows
}
