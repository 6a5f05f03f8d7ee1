/**
 * dayOf keeps the last day it found with its bounds (src/services/platform/ZonedCalendar.ts): over runs of
 * instants, including the days Brazil's clocks changed at midnight (2018-11-04 00:00 -> 01:00, 2019-02-17
 * 00:00 -> 2019-02-16 23:00), it answers exactly what Intl says of each instant.
 */
import { describe, expect, it } from "vitest"
import { zonedCalendar } from "../../src/services/platform/ZonedCalendar"

const intlDayOf = (timeZone: string, ms: number) =>
  new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date(ms))

/** Every `stepMinutes` from `from` for `hours`, in order, as a request stream would ask. */
const instants = (from: string, hours: number, stepMinutes: number) =>
  Array.from({ length: (hours * 60) / stepMinutes }, (_, i) => Date.parse(from) + i * stepMinutes * 60_000)

describe("ZonedCalendar.dayOf", () => {
  it.each([
    ["America/Sao_Paulo", "2018-11-02T00:00:00Z"],
    ["America/Sao_Paulo", "2019-02-15T00:00:00Z"],
    ["America/Sao_Paulo", "2026-11-25T00:00:00Z"],
    ["America/New_York", "2026-03-07T00:00:00Z"],
    ["America/New_York", "2026-10-31T00:00:00Z"],
    ["Asia/Kathmandu", "2026-11-25T00:00:00Z"],
    ["UTC", "2026-12-30T00:00:00Z"]
  ])("in %s from %s, every 7 minutes for four days, is the day Intl gives", (timeZone, from) => {
    const calendar = zonedCalendar(timeZone)
    const wrong = instants(from, 96, 7)
      .map((ms) => ({ at: new Date(ms).toISOString(), said: calendar.dayOf(ms), is: intlDayOf(timeZone, ms) }))
      .filter((answer) => answer.said !== answer.is)
    expect(wrong).toEqual([])
  })

  it("an instant asked out of order (an earlier day, then back) gets its own day", () => {
    const calendar = zonedCalendar("America/Sao_Paulo")
    const now = Date.parse("2026-11-26T12:00:00Z")
    expect(calendar.dayOf(now)).toBe("2026-11-26")
    expect(calendar.dayOf(Date.parse("2026-11-26T02:59:59.999Z"))).toBe("2026-11-25")
    expect(calendar.dayOf(Date.parse("2026-11-26T03:00:00.000Z"))).toBe("2026-11-26")
    expect(calendar.dayOf(now)).toBe("2026-11-26")
  })
})
