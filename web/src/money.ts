/**
 * Money is integer cents (a JSON number, or a string for the largest amounts), always BRL; shown with two decimals
 * in the chosen language's way ("R$ 1.234,56", "R$1,234.56"), as are percentages and dates.
 */
import { currencyFormat, dateTimeFormat, percentFormat } from "./i18n"

export const formatCents = (cents: number | string | bigint): string => {
  // Averages may come with a fraction of a cent: shown to the nearest cent.
  const value = BigInt(typeof cents === "number" && !Number.isInteger(cents) ? Math.round(cents) : cents)
  const negative = value < 0n
  const abs = negative ? -value : value
  // As an exact decimal string, so no amount goes through floating point.
  const decimal = `${negative ? "-" : ""}${abs / 100n}.${String(abs % 100n).padStart(2, "0")}`
  return currencyFormat().format(decimal as Intl.StringNumericLiteral)
}

/** "12,34", "12.34" or "1.234,56" (reais) -> 1234 cents; undefined when it is not an amount. */
export const parseReais = (text: string): bigint | undefined => {
  const trimmed = text.trim().replace(/^R\$\s*/, "")
  const match = /^(-)?(\d{1,3}(?:\.\d{3})+|\d+)(?:[,.](\d{1,2}))?$/.exec(trimmed)
  if (match === null) return undefined
  const whole = BigInt(match[2]!.replace(/\./g, ""))
  const fraction = BigInt((match[3] ?? "0").padEnd(2, "0"))
  const cents = whole * 100n + fraction
  return match[1] === "-" ? -cents : cents
}

/** A fraction as a percentage with two decimals: "12,34 %" / "12.34%". */
export const formatPercent = (fraction: number): string => percentFormat().format(fraction)

export const formatDateTime = (iso: string): string => dateTimeFormat().format(new Date(iso))

/** "3 min", "2 h", "4 d" since `iso`. */
export const age = (iso: string, now = Date.now()): string => {
  const minutes = Math.max(0, Math.floor((now - Date.parse(iso)) / 60_000))
  if (minutes < 60) return `${minutes} min`
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)} h`
  return `${Math.floor(minutes / 1440)} d`
}
