/**
 * Calendar days of an IANA time zone, whatever the server's own zone: the local fields of an instant and the
 * instant a local day begins, computed with Intl (the responsible-gaming windows in America/Sao_Paulo,
 * src/services/identity/PlayWindows.ts; the dashboard's days in BUSINESS_TIMEZONE, docs/rules.md#business-timezone).
 * A day is named by its `YYYY-MM-DD`; it ends where the next one begins.
 */

export interface LocalFields {
  readonly year: number
  readonly month: number
  readonly day: number
  readonly hour: number
  readonly minute: number
  readonly second: number
}

export interface ZonedCalendar {
  /** The zone's canonical IANA name (as Intl spells it: `america/sao_paulo` is `America/Sao_Paulo`). */
  readonly timeZone: string
  /** The local calendar fields of an instant. */
  readonly fieldsOf: (at: Date) => LocalFields
  /** The instant local midnight begins on a calendar day (given as a UTC date of the same Y-M-D). */
  readonly midnightOf: (day: Date) => Date
  /** `YYYY-MM-DD` of the local day of an instant. */
  readonly dayOf: (ms: number) => string
  /** The instant (milliseconds) the local day `YYYY-MM-DD` begins. */
  readonly startOf: (day: string) => number
}

const formatOf = (timeZone: string) =>
  new Intl.DateTimeFormat("en-CA", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit"
  })

/**
 * The canonical name of an IANA time zone Intl knows, or undefined (an unknown or malformed name). Offsets
 * (`+03:00`, which some Intl versions take) are not zone names: PostgreSQL reads them with the opposite sign.
 */
export const canonicalTimeZone = (name: string): string | undefined => {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name.trim())) return undefined
  try {
    return formatOf(name.trim()).resolvedOptions().timeZone
  } catch {
    return undefined
  }
}

/** `YYYY-MM-DD` `days` calendar days after `day` (before, when negative). */
export const addDays = (day: string, days: number): string =>
  new Date(new Date(`${day}T00:00:00.000Z`).getTime() + days * 86_400_000).toISOString().slice(0, 10)

const calendars = new Map<string, ZonedCalendar>()

/** The calendar of a zone (one per zone, kept). Throws a RangeError for a zone Intl does not know. */
export const zonedCalendar = (timeZone: string): ZonedCalendar => {
  const known = calendars.get(timeZone)
  if (known !== undefined) return known
  const local = formatOf(timeZone)

  const fieldsOf = (at: Date): LocalFields => {
    const parts: Record<string, number> = {}
    for (const part of local.formatToParts(at)) if (part.type !== "literal") parts[part.type] = Number(part.value)
    return parts as unknown as LocalFields
  }

  /** How far local time is ahead of UTC at an instant, in milliseconds (negative in Brazil). */
  const offsetAt = (at: Date): number => {
    const f = fieldsOf(at)
    return Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second) - Math.floor(at.getTime() / 1000) * 1000
  }

  const midnightOf = (day: Date): Date => {
    const guess = day.getTime()
    const first = guess - offsetAt(new Date(guess))
    // Across an offset change the first guess is an hour out; the offset at the corrected instant settles it.
    return new Date(guess - offsetAt(new Date(first)))
  }

  const startOf = (day: string): number => midnightOf(new Date(`${day}T00:00:00.000Z`)).getTime()

  // Every authenticated request asks for today (Activity): the last day found is kept with its bounds, so
  // Intl is consulted once a day instead of once a request. Only a day of one offset throughout is kept (on
  // a day the clocks change, local time is not one line over it): there the bounds are exact.
  let today = { day: "", from: 0, to: 0 }
  const dayOf = (ms: number): string => {
    if (ms >= today.from && ms < today.to) return today.day
    const f = fieldsOf(new Date(ms))
    const day = new Date(Date.UTC(f.year, f.month - 1, f.day)).toISOString().slice(0, 10)
    const from = startOf(day)
    const to = startOf(addDays(day, 1))
    if (offsetAt(new Date(from)) === offsetAt(new Date(to - 1))) today = { day, from, to }
    return day
  }

  const calendar: ZonedCalendar = { timeZone: local.resolvedOptions().timeZone, fieldsOf, midnightOf, dayOf, startOf }
  calendars.set(timeZone, calendar)
  return calendar
}
