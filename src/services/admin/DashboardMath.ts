/**
 * The dashboard's pure arithmetic (docs/rules.md#dashboard-stats, docs/rules.md#revenue-chart): the roundings
 * (its days are BUSINESS_TIMEZONE's: src/services/platform/ZonedCalendar.ts). Inputs are integers (counts or
 * cents); the roundings are exact (BigInt), half away from zero, so a figure never depends on floating-point
 * noise or on its sign.
 */

export const DAY_MS = 86_400_000

/** `numerator / denominator` rounded to an integer, half away from zero; 0 when the denominator is 0. */
export const roundedDivision = (numerator: bigint, denominator: bigint): bigint => {
  if (denominator === 0n) return 0n
  const negative = (numerator < 0n) !== (denominator < 0n)
  const n = numerator < 0n ? -numerator : numerator
  const d = denominator < 0n ? -denominator : denominator
  const rounded = (2n * n + d) / (2n * d)
  return negative ? -rounded : rounded
}

/**
 * `growth` and `growthRate` (docs/rules.md#dashboard-stats, docs/rules.md#revenue-chart): the change from
 * `previous` to `current` in percent, rounded to 2 decimals; 0 when `previous` is 0. A negative `previous` (a
 * net figure) is taken by its size, so the sign always says whether the figure went up or down.
 */
export const percentChange = (current: number, previous: number): number => {
  if (previous === 0) return 0
  const base = BigInt(Math.abs(previous))
  return Number(roundedDivision(BigInt(current - previous) * 10_000n, base)) / 100
}

/** The average of `total` over `days` days, in whole cents (half away from zero). */
export const dailyAverage = (total: number, days: number): number => Number(roundedDivision(BigInt(total), BigInt(days)))
