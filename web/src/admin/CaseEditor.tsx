/**
 * Editing a case (PUT /admin/cases/:id, with the 2FA code when the administrator has 2FA on): its items and their
 * drop chances, price, house edge, FLIP chance and the promotional flag, with the return to player recomputed as
 * they are typed (economics.ts `preview`, as the new-case form). The API's refusals are shown by field: the items
 * (422 when the chances do not cover every roll, 400 on one item's chance), and the figures of a case over its house
 * edge (422: expected value and return to player, house edge, promotional).
 */
import { useMemo, useState } from "preact/hooks"
import { api } from "../api"
import { numberFormat } from "../i18n"
import { formatPercent, parseReais } from "../money"
import { ErrorNote } from "../ui"
import { ChanceTable, type Chances, FieldNote, invalid, RtpPreview } from "./CaseItems"
import { type AdminCase, type Item, noRefusal, type Refusal, refusalOf } from "./catalogApi"
import { previewTyped } from "./economics"
import { reaisText } from "./ItemEditor"
import { catalog as text } from "./text/catalog"

const FIELDS = ["priceCents", "houseEdge", "flipChance", "promotional", "rtp", "expectedValueCents", "items"]

export const CaseEditor = (
  { kase, items, twoFactorCode, onCancel, onSaved }: {
    kase: AdminCase
    items: ReadonlyArray<Item>
    twoFactorCode: string
    onCancel: () => void
    onSaved: (saved: AdminCase) => void
  }
) => {
  const [price, setPrice] = useState(reaisText(kase.priceCents))
  const [houseEdge, setHouseEdge] = useState(String(kase.houseEdge))
  const [flipChance, setFlipChance] = useState(String(kase.flipChance))
  const [promotional, setPromotional] = useState(kase.promotional)
  const [chances, setChances] = useState<Chances>(
    Object.fromEntries(kase.items.map((i) => [i.itemId, String(i.dropChance)]))
  )
  const [refusal, setRefusal] = useState<Refusal>(noRefusal)
  const [busy, setBusy] = useState(false)

  /** The case's items first, in roll order, then the rest of the catalog by name; fixed while editing. */
  const ordered = useMemo(() => {
    const inCase = kase.items.map((i) => items.find((x) => x.id === i.itemId)).filter((i): i is Item => i !== undefined)
    const rest = items.filter((i) => !kase.items.some((x) => x.itemId === i.id)).sort((a, b) => a.name.localeCompare(b.name))
    return [...inCase, ...rest]
  }, [kase, items])
  const chosen = ordered.filter((i) => chances[i.id] !== undefined)
  const priceCents = parseReais(price)
  const estimate = useMemo(
    () => previewTyped(chosen.map((i) => ({ chance: chances[i.id]!, valueCents: BigInt(i.valueCents) })), priceCents, flipChance),
    [chances, priceCents, flipChance, ordered]
  )

  /** `items.<n>...`: the problem of the n-th item sent, shown on its row; `items`: under the table. */
  const err = refusal.byField
  const rowErrors: Record<string, string> = {}
  for (const [field, message] of Object.entries(err)) {
    const row = /^items\.(\d+)/.exec(field)
    const item = row === null ? undefined : chosen[Number(row[1])]
    if (item !== undefined) rowErrors[item.id] = rowErrors[item.id] === undefined ? message : `${rowErrors[item.id]}; ${message}`
  }
  const economicsError = [err.rtp, err.expectedValueCents].filter((m) => m !== undefined).join("; ") || undefined

  const submit = async (e: Event) => {
    e.preventDefault()
    setRefusal(noRefusal)
    const number = (text: string) => Number(text.trim().replace(",", "."))
    const body: Record<string, unknown> = {
      items: chosen.map((i) => ({ itemId: i.id, dropChance: number(chances[i.id]!) }))
    }
    if (priceCents === undefined || priceCents !== BigInt(kase.priceCents)) {
      body.priceCents = priceCents === undefined ? price : Number(priceCents)
    }
    if (number(houseEdge) !== kase.houseEdge) body.houseEdge = number(houseEdge)
    if (number(flipChance) !== kase.flipChance) body.flipChance = number(flipChance)
    if (promotional !== kase.promotional) body.promotional = promotional
    setBusy(true)
    try {
      onSaved(await api<AdminCase>(`/admin/cases/${kase.id}`, { method: "PUT", body, twoFactorCode }))
    } catch (error) {
      setRefusal(refusalOf(error, (field) => FIELDS.includes(field) || /^items\.\d+/.test(field)))
    } finally {
      setBusy(false)
    }
  }

  const m = text()
  return (
    <article data-testid="case-editor" data-id={kase.id}>
      <header>
        <strong>{m.editCase(kase.name)}</strong> <small>{kase.slug}</small>
      </header>
      <form onSubmit={submit}>
        <div class="grid">
          <label>
            {m.priceReais}
            <input
              name="price"
              required
              inputMode="decimal"
              value={price}
              {...invalid("case-error-priceCents", err.priceCents)}
              onInput={(e) => setPrice(e.currentTarget.value)}
            />
            <FieldNote id="case-error-priceCents" text={err.priceCents} />
          </label>
          <label>
            {m.houseEdge}
            <input
              name="houseEdge"
              inputMode="decimal"
              value={houseEdge}
              {...invalid("case-error-houseEdge", err.houseEdge)}
              onInput={(e) => setHouseEdge(e.currentTarget.value)}
            />
            <FieldNote id="case-error-houseEdge" text={err.houseEdge} />
          </label>
          <label>
            {m.flipChance}
            <input
              name="flipChance"
              inputMode="decimal"
              value={flipChance}
              {...invalid("case-error-flipChance", err.flipChance)}
              onInput={(e) => setFlipChance(e.currentTarget.value)}
            />
            <FieldNote id="case-error-flipChance" text={err.flipChance} />
          </label>
        </div>
        <label>
          <input
            type="checkbox"
            name="promotional"
            checked={promotional}
            {...invalid("case-error-promotional", err.promotional)}
            onChange={(e) => setPromotional(e.currentTarget.checked)}
          />
          {m.promotional}
        </label>
        <FieldNote id="case-error-promotional" text={err.promotional} />
        <p>{m.savedNow(numberFormat().format(kase.items.length), formatPercent(kase.rtp))}</p>
        <ChanceTable items={ordered} chances={chances} setChances={setChances} rowErrors={rowErrors} />
        <FieldNote id="case-error-items" text={err.items} />
        <RtpPreview estimate={estimate} priceCents={priceCents} houseEdge={houseEdge} saved={kase.rtp} />
        <FieldNote id="case-error-economics" text={economicsError} />
        <ErrorNote text={refusal.general} />
        <div class="toolbar">
          <button type="submit" disabled={busy} aria-busy={busy}>{m.saveCase}</button>
          <button type="button" class="outline secondary" onClick={onCancel}>{m.cancel}</button>
        </div>
      </form>
    </article>
  )
}
