/**
 * The return to player of a case before it is saved, computed as the service computes it
 * (src/services/games/CaseEconomics.ts), in integers: item i drops with probability u_i / N (u_i its drop
 * chance in 0.0000001 units, N = 10000000); with FLIP (probability T / N) the player receives the more
 * valuable of two independent rolls, so
 *
 *   EV x N^3 = (N - T) x N x sum(u_i x v_i) + T x sum over values v of v x (C(v)^2 - C(v-)^2),
 *
 * C(v) being the units of the items worth at most v. The service's answer on saving is the reference.
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
  readonly expectedValueCents: number
  readonly rtp: number
}

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
    expectedValueCents: Number((scaled * 100n) / scale) / 100,
    rtp: Number((scaled * 1_000_000n) / (scale * priceCents)) / 1_000_000
  }
}
