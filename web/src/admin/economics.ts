/**
 * The return to player of a case before it is saved, computed as the service computes it
 * (src/services/games/CaseEconomics.ts), in integers: item i drops with probability u_i / N (u_i its drop
 * chance in 0.0000001 units, N = 10000000); with FLIP (probability T / N) the player receives the more
 * valuable of two independent rolls, so
 *
 *   EV x N^3 = (N - T) x N x sum(u_i x v_i) + T x sum over values v of v x (C(v)^2 - C(v-)^2),
 *
 * C(v) being the units of the items worth at most v. The service's answer on saving is the reference. The
 * new-case form, the case editor and the item editor (which cases a new value pushes over) all use `preview`.
 */
const N = 10_000_000n
const DECIMALS = 7

/** A chance such as 0.25 in 0.0000001 units; undefined when it has more than 7 decimals or is not a number. */
export const chanceUnits = (text: string): bigint | undefined => {
  const match = /^\s*(\d+)(?:[.,](\d+))?\s*$/.exec(text)
  if (match === null || (match[2] ?? "").length > DECIMALS) return undefined
  return BigInt(match[1]!) * N + BigInt((match[2] ?? "").padEnd(DECIMALS, "0"))
}

export interface Preview {
  /** The units the chances add up to (N when they cover every roll). */
  readonly totalUnits: bigint
  /** EV x N^3, exactly. */
  readonly expectedValueScaled: bigint
  readonly expectedValueCents: number
  /** expectedValue / price, rounded half up to 4 decimals as the service rounds it. */
  readonly rtp: number
}

/** `numerator / denominator` rounded half up (both positive). */
const rounded = (numerator: bigint, denominator: bigint) => (2n * numerator + denominator) / (2n * denominator)

export const preview = (
  items: ReadonlyArray<{ units: bigint; valueCents: bigint }>,
  priceCents: bigint,
  flipUnits: bigint
): Preview | undefined => {
  if (priceCents <= 0n || items.length === 0) return undefined
  const byValue = new Map<bigint, bigint>()
  for (const item of items) byValue.set(item.valueCents, (byValue.get(item.valueCents) ?? 0n) + item.units)
  const values = [...byValue.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  let below = 0n
  let scaled = 0n
  for (const value of values) {
    const upTo = below + byValue.get(value)!
    scaled += value * ((N - flipUnits) * N * (upTo - below) + flipUnits * (upTo * upTo - below * below))
    below = upTo
  }
  const scale = N * N * N
  return {
    totalUnits: below,
    expectedValueScaled: scaled,
    expectedValueCents: Number((scaled * 100n) / scale) / 100,
    rtp: Number(rounded(scaled * 10_000n, scale * priceCents)) / 10_000
  }
}

/** A decimal such as "0.1" or 0.1 as `digits / 10^scale`, exactly as written; undefined when it is not one. */
const decimal = (value: string | number): { digits: bigint; scale: bigint } | undefined => {
  const text = typeof value === "number" ? (Number.isFinite(value) ? String(value) : "") : value.trim().replace(",", ".")
  const match = /^(\d+)(?:\.(\d+))?(?:e(-?\d+))?$/i.exec(text)
  if (match === null) return undefined
  const fraction = match[2] ?? ""
  const scale = fraction.length - Number(match[3] ?? "0")
  const digits = BigInt(match[1]! + fraction)
  return scale >= 0 ? { digits, scale: BigInt(scale) } : { digits: digits * 10n ** BigInt(-scale), scale: 0n }
}

/**
 * rtp > 1 - houseEdge, decided exactly as the service decides it (EV > price x (1 - houseEdge), the house edge
 * read as the decimal it was written as); undefined when the house edge is not a number.
 */
export const overHouseEdge = (estimate: Preview, priceCents: bigint, houseEdge: string | number): boolean | undefined => {
  const edge = decimal(houseEdge)
  if (edge === undefined) return undefined
  const edgeScale = 10n ** edge.scale
  return estimate.expectedValueScaled * edgeScale > priceCents * (edgeScale - edge.digits) * N * N * N
}

/**
 * The preview of a form as typed: each chosen item's chance (text) and value, the price (cents, undefined when
 * not an amount) and the FLIP chance (text). Undefined while something is missing or not a number.
 */
export const previewTyped = (
  chosen: ReadonlyArray<{ chance: string; valueCents: bigint }>,
  priceCents: bigint | undefined,
  flipChance: string
): Preview | undefined => {
  const units = chosen.map((c) => ({ units: chanceUnits(c.chance), valueCents: c.valueCents }))
  const flip = chanceUnits(flipChance)
  if (priceCents === undefined || flip === undefined || units.some((u) => u.units === undefined)) return undefined
  return preview(units as Array<{ units: bigint; valueCents: bigint }>, priceCents, flip)
}

/** A saved case's items as `preview` reads them: each item's block size (rangeEnd - rangeStart + 1) and its value. */
export const savedUnits = (
  items: ReadonlyArray<{ itemId: string; rangeStart: number; rangeEnd: number }>,
  valueOf: (itemId: string) => bigint
) => items.map((i) => ({ units: BigInt(i.rangeEnd - i.rangeStart + 1), valueCents: valueOf(i.itemId) }))

/** A saved FLIP chance (a JSON number) in 0.0000001 units, as the service reads it. */
export const flipUnitsOf = (flipChance: number): bigint =>
  chanceUnits(String(flipChance)) ?? BigInt(Math.floor(flipChance * 10_000_000))
