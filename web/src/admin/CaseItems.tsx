/**
 * What the new-case form and the case editor share: the catalog's items with a drop chance for each chosen one,
 * the return to player as typed (economics.ts `preview`, the service's formula) and an API refusal shown by field.
 */
import type { Dispatch, StateUpdater } from "preact/hooks"
import { perLocale } from "../i18n"
import { formatCents, formatPercent } from "../money"
import type { Item } from "./catalogApi"
import { overHouseEdge, type Preview } from "./economics"
import { catalog as text } from "./text/catalog"

/** A field's problem as the API words it, under its input (Pico colours it after an aria-invalid input). */
export const FieldNote = ({ id, text }: { id: string; text: string | undefined }) =>
  text === undefined ? null : <small id={id} class="field-error" data-testid={id}>{text}</small>

/** The attributes of an input whose field the API refused. */
export const invalid = (id: string, text: string | undefined) =>
  text === undefined ? {} : { "aria-invalid": "true" as const, "aria-describedby": id }

/** itemId -> drop chance as typed (0 to 1); an item without an entry is not in the case. */
export type Chances = Readonly<Record<string, string>>

export const ChanceTable = (
  { items, chances, setChances, rowErrors = {} }: {
    items: ReadonlyArray<Item>
    chances: Chances
    setChances: Dispatch<StateUpdater<Chances>>
    /** itemId -> the API's problem with that item's entry. */
    rowErrors?: Readonly<Record<string, string>>
  }
) => (
  <div class="overflow-auto">
    <table class="chances">
      <tbody>
        {items.map((i) => (
          <tr key={i.id} data-item={i.name} data-item-id={i.id}>
            <td>
              <input
                type="checkbox"
                id={`item-${i.id}`}
                name={`item-${i.id}`}
                aria-label={text().include(i.name)}
                checked={chances[i.id] !== undefined}
                onChange={(e) => {
                  const on = e.currentTarget.checked
                  setChances((now) => {
                    const next = { ...now }
                    if (on) next[i.id] = ""
                    else delete next[i.id]
                    return next
                  })
                }}
              />
            </td>
            <td>
              <label for={`item-${i.id}`} class="inline" translate={false}>
                {i.name} <small>{i.rarity}</small>
              </label>
            </td>
            <td class="money">{formatCents(i.valueCents)}</td>
            <td>
              {chances[i.id] !== undefined && (
                <>
                  <input
                    name={`chance-${i.id}`}
                    aria-label={text().dropChanceOf(i.name)}
                    placeholder={chanceTotal().format(0.25)}
                    inputMode="decimal"
                    value={chances[i.id]}
                    {...invalid(`chance-error-${i.id}`, rowErrors[i.id])}
                    onInput={(e) => {
                      const value = e.currentTarget.value
                      setChances((now) => ({ ...now, [i.id]: value }))
                    }}
                  />
                  <FieldNote id={`chance-error-${i.id}`} text={rowErrors[i.id]} />
                </>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
)

/**
 * The return to player as typed: its expected value, the most the house edge allows, and whether the chances
 * cover every roll. `saved`: the case's return to player as the API has it now, shown beside the new one.
 */
export const RtpPreview = (
  { estimate, priceCents, houseEdge, saved }: {
    estimate: Preview | undefined
    priceCents: bigint | undefined
    houseEdge: string
    saved?: number
  }
) => {
  const m = text()
  const edge = Number(houseEdge.replace(",", "."))
  const over = estimate !== undefined && priceCents !== undefined && overHouseEdge(estimate, priceCents, houseEdge) === true
  return (
    <p data-testid="rtp-preview" data-rtp={estimate?.rtp} data-over={over} aria-live="polite">
      {saved !== undefined && (
        <>
          {m.savedRtp} <strong data-testid="rtp-saved">{formatPercent(saved)}</strong>.{" "}
        </>
      )}
      {estimate === undefined
        ? m.enterPrice
        : (
          <>
            {saved === undefined ? m.returnToPlayer : m.withChanges}{" "}
            <strong class={over ? "rtp-over" : ""} data-testid="rtp-estimate">{formatPercent(estimate.rtp)}</strong>
            {m.expectedValue(
              formatCents(Math.round(estimate.expectedValueCents)),
              Number.isFinite(edge) ? formatPercent(1 - edge) : "?"
            )}
            {over && m.overEdge}
            {estimate.totalUnits !== 10_000_000n && m.chancesAddUp(chanceTotal().format(Number(estimate.totalUnits) / 10_000_000))}
          </>
        )}
    </p>
  )
}

/** A chance or a sum of chances as written in the language, to the 7 decimals the service keeps. */
const chanceTotal = perLocale((l) => new Intl.NumberFormat(l, { maximumFractionDigits: 7, useGrouping: false }))
