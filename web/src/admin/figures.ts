/** How the dashboard words and formats its figures (pt-BR money and dates, as the rest of the console). */

/** The recent activity's types (docs/rules.md#recent-activity), in words. */
const ACTIVITY_TYPES: Readonly<Record<string, string>> = {
  CASE_OPEN: "Case opened",
  DEPOSIT: "Deposit confirmed",
  WITHDRAWAL_REQUEST: "Withdrawal requested",
  UPGRADE: "Upgrade played",
  BATTLE: "Battle created"
}

/** A type of recent activity in words; a code the console does not know, as the API sends it. */
export const activityTypeText = (type: string): string =>
  Object.prototype.hasOwnProperty.call(ACTIVITY_TYPES, type) ? ACTIVITY_TYPES[type]! : type

/** What an activity's value is, by type (docs/rules.md#recent-activity). */
const ACTIVITY_VALUES: Readonly<Record<string, string>> = {
  CASE_OPEN: "price paid",
  DEPOSIT: "amount deposited",
  WITHDRAWAL_REQUEST: "amount requested",
  UPGRADE: "value of the item staked",
  BATTLE: "entry price"
}

/** What the value of an activity of `type` is; undefined for a type the console does not know. */
export const activityValueText = (type: string): string | undefined =>
  Object.prototype.hasOwnProperty.call(ACTIVITY_VALUES, type) ? ACTIVITY_VALUES[type] : undefined

// The chart's points are each day's midnight in UTC (its date as the API names it), so they are read in UTC.
const dayMonth = new Intl.DateTimeFormat("pt-BR", { day: "2-digit", month: "2-digit", timeZone: "UTC" })
const dayMonthTime = new Intl.DateTimeFormat("pt-BR", {
  day: "2-digit",
  month: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  timeZone: "UTC"
})
const fullDay = new Intl.DateTimeFormat("pt-BR", {
  weekday: "short",
  day: "2-digit",
  month: "2-digit",
  year: "numeric",
  timeZone: "UTC"
})

/** A tick of the chart's time axis (seconds): "26/11", or "26/11 12:00" between midnights. */
export const axisDay = (seconds: number): string => {
  const date = new Date(seconds * 1000)
  return seconds % 86_400 === 0 ? dayMonth.format(date) : dayMonthTime.format(date)
}

/** The day of a point (seconds) in the chart's legend: "qui., 26/11/2026". */
export const legendDay = (seconds: number): string => fullDay.format(new Date(seconds * 1000))

const wholeReais = new Intl.NumberFormat("pt-BR", { style: "currency", currency: "BRL", maximumFractionDigits: 0 })
const reaisAndCents = new Intl.NumberFormat("pt-BR", { style: "currency", currency: "BRL" })
const compactReais = new Intl.NumberFormat("pt-BR", {
  style: "currency",
  currency: "BRL",
  notation: "compact",
  minimumFractionDigits: 0,
  maximumFractionDigits: 1
})

/** A tick of the chart's money axis (reais): "R$ 50", "R$ 2,50", "R$ 12 mil", "R$ 1,5 mi". */
export const axisMoney = (reais: number): string =>
  Math.abs(reais) >= 10_000
    ? compactReais.format(reais)
    : Number.isInteger(reais)
    ? wholeReais.format(reais)
    : reaisAndCents.format(reais)

/** Today's date in `zone` ("26/11/2026"); undefined if this browser does not know the zone. */
export const dayInZone = (zone: string, now: number): string | undefined => {
  try {
    return new Intl.DateTimeFormat("pt-BR", { dateStyle: "short", timeZone: zone }).format(new Date(now))
  } catch {
    return undefined
  }
}
