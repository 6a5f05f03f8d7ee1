/**
 * What a case pays back (docs/rules.md#house-edge-rule, docs/economics.md), exactly, as pure functions over its
 * roll blocks: a roll in 1..10000000 selects the item whose block holds it, so item i drops with probability
 * u_i / N (u_i = its block size, N = 10000000). With FLIP (docs/rules.md#flip) the opening's trigger fires with
 * probability T / N (T = `flipThresholdUnits(flipChance)`); then a second, independent roll selects B and the
 * user receives the more valuable of A and B. So the value V an opening awards has the distribution
 *
 *   P(V = v) = (1 - T/N) x P(v1 = v) + T/N x P(max(v1, v2) = v),   P(max(v1, v2) <= v) = F(v)^2,
 *
 * with F(v) = C(v) / N, C(v) = the units of the items worth at most v. Everything below is integer
 * arithmetic on the units (bigint), scaled by N^3 = 10^21, so no figure depends on floating point:
 *
 *   EV x N^3 = (N - T) x N x sum(u_i x v_i) + T x sum over values v of v x (C(v)^2 - C(v-)^2).
 *
 * rtp = EV / priceCents. A case over its house edge has rtp > 1 - houseEdge, decided exactly (houseEdge
 * is read as the decimal it was written as). docs/economics.md works an example by hand.
 */
import { flipThresholdUnits, ROLL_SPACE } from "../../schema/games/Catalog"
import { OverHouseEdge } from "../../schema/games/Catalog"
import { FieldError } from "../../schema/platform/Errors"
import { roundedDivision } from "../admin/DashboardMath"

const N = BigInt(ROLL_SPACE)
/** EV and probabilities are kept as integers over N^3 = 10^21. */
export const SCALE = N * N * N
const SCALE_DIGITS = 21

/** An item of a case as the economics see it: its roll block size and its value. */
export interface Payout {
  /** rangeEnd - rangeStart + 1. */
  readonly units: number
  readonly valueCents: bigint
}

interface CaseTerms {
  readonly priceCents: bigint
  readonly houseEdge: number
  readonly flipChance: number
  readonly items: ReadonlyArray<Payout>
}

/** One value an opening can award and its probability, as an integer over SCALE. */
interface Outcome {
  readonly valueCents: bigint
  readonly probability: bigint
}

/**
 * The exact distribution of the value an opening awards, FLIP included, ascending by value; the
 * probabilities add up to SCALE when the blocks cover 1..10000000.
 */
export const payoutDistribution = (items: ReadonlyArray<Payout>, flipChance: number): ReadonlyArray<Outcome> => {
  const flip = BigInt(flipThresholdUnits(flipChance))
  const byValue = new Map<bigint, bigint>()
  for (const item of items) byValue.set(item.valueCents, (byValue.get(item.valueCents) ?? 0n) + BigInt(item.units))
  const values = [...byValue.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  let below = 0n
  return values.map((valueCents) => {
    const units = byValue.get(valueCents)!
    const upTo = below + units
    const probability = (N - flip) * N * units + flip * (upTo * upTo - below * below)
    below = upTo
    return { valueCents, probability }
  })
}

/** `numerator / 10^digits` as an exact decimal string, without trailing zeros. */
const exactDecimal = (numerator: bigint, digits: number): string => {
  const negative = numerator < 0n
  const text = (negative ? -numerator : numerator).toString().padStart(digits + 1, "0")
  const whole = text.slice(0, text.length - digits)
  const fraction = text.slice(text.length - digits).replace(/0+$/, "")
  return `${negative ? "-" : ""}${whole}${fraction === "" ? "" : `.${fraction}`}`
}

/**
 * A number as the exact decimal it was written as (its shortest round-trip form, e.g. 0.1 is 1/10,
 * not the binary double nearest to it): `digits / 10^scale`.
 */
const decimalOf = (value: number): { readonly digits: bigint; readonly scale: number } => {
  const [mantissa, exponent = "0"] = String(value).split("e")
  const [whole, fraction = ""] = mantissa!.split(".")
  const scale = fraction.length - Number(exponent)
  const digits = BigInt(`${whole}${fraction}`)
  return scale >= 0 ? { digits, scale } : { digits: digits * 10n ** BigInt(-scale), scale: 0 }
}

export interface Economics {
  /** EV x SCALE: the exact expected value of an opening in cents, FLIP included. */
  readonly expectedValueScaled: bigint
  /** The expected value rounded to whole cents, half up. */
  readonly expectedValueCents: bigint
  /** The expected value in cents, exactly (a terminating decimal: EV x 10^21 is an integer). */
  readonly expectedValueExact: string
  /** expectedValue / priceCents, rounded half up to 4 decimals. */
  readonly rtp: number
  /** The most an opening may pay back on average, priceCents x (1 - houseEdge), exactly, in cents. */
  readonly maxExpectedValueExact: string
  /** rtp > 1 - houseEdge. */
  readonly overHouseEdge: boolean
}

export const caseEconomics = (terms: CaseTerms): Economics => {
  const expectedValueScaled = payoutDistribution(terms.items, terms.flipChance)
    .reduce((sum, outcome) => sum + outcome.valueCents * outcome.probability, 0n)
  const edge = decimalOf(terms.houseEdge)
  const edgeScale = 10n ** BigInt(edge.scale)
  // Over the line when EV > price x (1 - houseEdge), compared as integers.
  const maxScaled = terms.priceCents * (edgeScale - edge.digits)
  return {
    expectedValueScaled,
    expectedValueCents: roundedDivision(expectedValueScaled, SCALE),
    expectedValueExact: exactDecimal(expectedValueScaled, SCALE_DIGITS),
    rtp: Number(roundedDivision(expectedValueScaled * 10_000n, SCALE * terms.priceCents)) / 10_000,
    maxExpectedValueExact: exactDecimal(maxScaled, edge.scale),
    overHouseEdge: expectedValueScaled * edgeScale > maxScaled * SCALE
  }
}

/**
 * The refusal of a case (docs/rules.md#house-edge-rule) that pays back more than its house edge allows, with
 * the figures.
 */
export const overHouseEdge = (terms: CaseTerms, economics: Economics): OverHouseEdge =>
  new OverHouseEdge({
    errors: [
      new FieldError({
        field: "expectedValueCents",
        message: `${economics.expectedValueExact}: the exact expected value of an opening in cents, FLIP included`
      }),
      new FieldError({
        field: "rtp",
        message: `${economics.rtp.toFixed(4)}: expectedValueCents / priceCents, rounded to 4 decimals; at most ` +
          `1 - houseEdge is allowed`
      }),
      new FieldError({
        field: "houseEdge",
        message: `${terms.houseEdge}: an opening may pay back at most ${economics.maxExpectedValueExact} cents on ` +
          `average (1 - houseEdge of priceCents ${terms.priceCents})`
      }),
      new FieldError({ field: "promotional", message: "false: save the case with promotional true to pay back more on purpose" })
    ]
  })
