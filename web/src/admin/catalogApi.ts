/** The catalog as the administrators' API answers it (docs/rules.md#catalog-administration). */
import { api, ApiError } from "../api"

export interface AdminCase {
  readonly id: string
  readonly name: string
  readonly slug: string
  readonly priceCents: number
  readonly category: string
  readonly isActive: boolean
  readonly houseEdge: number
  readonly flipChance: number
  readonly promotional: boolean
  readonly expectedValueCents: number
  readonly rtp: number
  readonly items: ReadonlyArray<{ itemId: string; dropChance: number; rangeStart: number; rangeEnd: number }>
}

export interface Item {
  readonly id: string
  readonly name: string
  readonly rarity: string
  readonly valueCents: number
  readonly imageUrl: string
  readonly isUpgradable: boolean
}

/** Rarities, rarest last (docs/rules.md#rarities). */
export const RARITIES = ["CONSUMER", "INDUSTRIAL", "MIL_SPEC", "RESTRICTED", "CLASSIFIED", "COVERT", "EXTRAORDINARY"] as const

/** Every page of a list (the API answers at most 100 a page). */
const all = async <A,>(path: string, key: string): Promise<Array<A>> => {
  const rows: Array<A> = []
  for (let page = 1; ; page++) {
    const answer = await api<Record<string, unknown> & { total: number }>(`${path}?page=${page}&limit=100`)
    const got = answer[key] as ReadonlyArray<A>
    rows.push(...got)
    if (got.length === 0 || rows.length >= answer.total) return rows
  }
}

export const loadCatalog = async () => {
  const [cases, items] = await Promise.all([all<AdminCase>("/admin/cases", "cases"), all<Item>("/admin/items", "items")])
  return { cases, items }
}

/**
 * An API refusal split by field (docs/rules.md: `errors: [{field, message}]`): `byField` for the fields a form
 * shows next to its inputs, `general` for the message and the rest.
 */
export interface Refusal {
  readonly general: string | undefined
  readonly byField: Readonly<Record<string, string>>
}

export const noRefusal: Refusal = { general: undefined, byField: {} }

export const refusalOf = (error: unknown, shown: (field: string) => boolean): Refusal => {
  if (!(error instanceof ApiError)) return { general: error instanceof Error ? error.message : String(error), byField: {} }
  const byField: Record<string, string> = {}
  const rest: Array<string> = []
  for (const f of error.fields) {
    if (shown(f.field)) byField[f.field] = byField[f.field] === undefined ? f.message : `${byField[f.field]}; ${f.message}`
    else rest.push(`${f.field}: ${f.message}`)
  }
  return { general: [error.message, ...rest].join("; "), byField }
}
