/** How the dashboard words and formats its figures, in the chosen language (money always BRL). */
import { locale, perLocale } from "../i18n"
import { dashboard } from "./text/dashboard"

const has = (table: Readonly<Record<string, string>>, key: string) => Object.prototype.hasOwnProperty.call(table, key)

/** A type of recent activity in words (docs/rules.md#recent-activity); a code the console does not know, as sent. */
export const activityTypeText = (type: string): string => {
  const words = dashboard().activityTypes
  return has(words, type) ? words[type]! : type
}

/** What the value of an activity of `type` is; undefined for a type the console does not know. */
export const activityValueText = (type: string): string | undefined => {
  const words = dashboard().activityValues
  return has(words, type) ? words[type] : undefined
}

// The chart's points are each day's midnight in UTC (its date as the API names it), so they are read in UTC.
const dayMonth = perLocale((l) => new Intl.DateTimeFormat(l, { day: "2-digit", month: "2-digit", timeZone: "UTC" }))
const dayMonthTime = perLocale((l) => new Intl.DateTimeFormat(l, {
  day: "2-digit",
  month: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  timeZone: "UTC"
}))
const fullDay = perLocale((l) => new Intl.DateTimeFormat(l, {
  weekday: "short",
  day: "2-digit",
  month: "2-digit",
  year: "numeric",
  timeZone: "UTC"
}))

/** A tick of the chart's time axis (seconds): "26/11" (English "11/26"), or with the time between midnights. */
export const axisDay = (seconds: number): string => {
  const date = new Date(seconds * 1000)
  return seconds % 86_400 === 0 ? dayMonth().format(date) : dayMonthTime().format(date)
}

/** The day of a point (seconds) in the chart's legend: "qui., 26/11/2026" (English "Thu, 11/26/2026"). */
export const legendDay = (seconds: number): string => fullDay().format(new Date(seconds * 1000))

const wholeReais = perLocale((l) => new Intl.NumberFormat(l, { style: "currency", currency: "BRL", maximumFractionDigits: 0 }))
const reaisAndCents = perLocale((l) => new Intl.NumberFormat(l, { style: "currency", currency: "BRL" }))
const compactReais = perLocale((l) =>
  new Intl.NumberFormat(l, {
    style: "currency",
    currency: "BRL",
    notation: "compact",
    minimumFractionDigits: 0,
    maximumFractionDigits: 1
  })
)

/** A tick of the chart's money axis (reais): "R$ 50", "R$ 2,50", "R$ 12 mil", "R$ 1,5 mi" (English "R$12K"). */
export const axisMoney = (reais: number): string =>
  Math.abs(reais) >= 10_000
    ? compactReais().format(reais)
    : Number.isInteger(reais)
    ? wholeReais().format(reais)
    : reaisAndCents().format(reais)

/** Today's date in `zone` ("26/11/2026", English "11/26/26"); undefined if this browser does not know the zone. */
export const dayInZone = (zone: string, now: number): string | undefined => {
  try {
    return new Intl.DateTimeFormat(locale(), { dateStyle: "short", timeZone: zone }).format(new Date(now))
  } catch {
    return undefined
  }
}
