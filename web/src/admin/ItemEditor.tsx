/**
 * Creating an item (POST /admin/items) and editing one (PUT /admin/items/:id), with the 2FA code when the
 * administrator has 2FA on (docs/rules.md#admin-step-up). A new value is never refused
 * (docs/rules.md#house-edge-rule): while it is typed the editor shows each case holding the item with its return to
 * player now and with the new value (economics.ts `preview`), marks the active, non-promotional ones it would push
 * over their house edge, and asks before saving, naming the item and the new value. Once saved, the cases it pushed
 * over are read from the API's record of the change (the ITEM_UPDATED audit entry's `casesPushedOverHouseEdge`).
 */
import { useMemo, useState } from "preact/hooks"
import { api } from "../api"
import { locale, numberFormat } from "../i18n"
import { formatCents, formatPercent, parseReais } from "../money"
import { ErrorNote, useConfirm } from "../ui"
import { FieldNote, invalid } from "./CaseItems"
import { type AdminCase, type Item, noRefusal, RARITIES, type Refusal, refusalOf } from "./catalogApi"
import { flipUnitsOf, overHouseEdge, preview, savedUnits } from "./economics"
import { catalog as text } from "./text/catalog"

const FIELDS = ["name", "rarity", "valueCents", "imageUrl", "isUpgradable"]

/**
 * Cents as reais to type, "1234,56" (English "1234.56"): no thousands separator, so parseReais reads it back.
 */
export const reaisText = (cents: number | bigint) => {
  const value = BigInt(cents)
  return `${value / 100n}${locale() === "en" ? "." : ","}${String(value % 100n).padStart(2, "0")}`
}

/** A case holding the item: its return to player now and with the item at `valueCents`. */
export interface Impact {
  readonly kase: AdminCase
  readonly rtpNow: number
  readonly rtpNew: number
  readonly overNow: boolean
  readonly overNew: boolean
  /** Active, not promotional, within its edge now and over it with the new value: an alert once saved. */
  readonly pushedOver: boolean
}

/** What a new value of `item` does to each case holding it, computed with the service's formula. */
export const impactOf = (
  item: Item,
  valueCents: bigint,
  cases: ReadonlyArray<AdminCase>,
  items: ReadonlyArray<Item>
): Array<Impact> => {
  const values = new Map(items.map((i) => [i.id, BigInt(i.valueCents)]))
  return cases.filter((c) => c.items.some((i) => i.itemId === item.id)).flatMap((kase) => {
    const price = BigInt(kase.priceCents)
    const flip = flipUnitsOf(kase.flipChance)
    const now = preview(savedUnits(kase.items, (id) => values.get(id) ?? 0n), price, flip)
    const next = preview(savedUnits(kase.items, (id) => (id === item.id ? valueCents : values.get(id) ?? 0n)), price, flip)
    if (now === undefined || next === undefined) return []
    const overNow = overHouseEdge(now, price, kase.houseEdge) === true
    const overNew = overHouseEdge(next, price, kase.houseEdge) === true
    return [{
      kase,
      rtpNow: now.rtp,
      rtpNew: next.rtp,
      overNow,
      overNew,
      pushedOver: kase.isActive && !kase.promotional && !overNow && overNew
    }]
  })
}

interface AuditEntry {
  readonly entityId: string | null
  readonly metadata: Record<string, unknown>
}

/** The ids of the cases the API recorded this change of `itemId` pushing over (its newest ITEM_UPDATED entry). */
const recordedPushedOver = async (itemId: string): Promise<ReadonlyArray<string> | undefined> => {
  const { entries } = await api<{ entries: ReadonlyArray<AuditEntry> }>("/admin/audit?action=ITEM_UPDATED&limit=50")
  const entry = entries.find((e) => e.entityId === itemId)
  const ids = entry?.metadata.casesPushedOverHouseEdge
  return Array.isArray(ids) ? ids.map(String) : undefined
}

export const ItemEditor = (
  { item, cases, items, twoFactorCode, onCancel, onSaved }: {
    /** The item to edit; none: a new item. */
    item: Item | undefined
    cases: ReadonlyArray<AdminCase>
    items: ReadonlyArray<Item>
    twoFactorCode: string
    onCancel: () => void
    /** Saved, with what to tell the administrator. */
    onSaved: (saved: Item, message: string) => void
  }
) => {
  const [name, setName] = useState(item?.name ?? "")
  const [rarity, setRarity] = useState(item?.rarity ?? "CONSUMER")
  const [value, setValue] = useState(item === undefined ? "" : reaisText(item.valueCents))
  const [imageUrl, setImageUrl] = useState(item?.imageUrl ?? "")
  const [isUpgradable, setUpgradable] = useState(item?.isUpgradable ?? true)
  const [refusal, setRefusal] = useState<Refusal>(noRefusal)
  const [busy, setBusy] = useState(false)
  const [dialog, ask] = useConfirm()

  const valueCents = parseReais(value)
  /** The value typed differs from the saved one (or is not an amount: sent as typed, for the API to say why). */
  const valueChanged = item !== undefined && (valueCents === undefined || valueCents !== BigInt(item.valueCents))
  const revalued = valueChanged && valueCents !== undefined && valueCents > 0n
  const impact = useMemo(
    () => (item === undefined || !revalued ? [] : impactOf(item, valueCents!, cases, items)),
    [item, valueCents, cases, items]
  )
  const pushed = impact.filter((i) => i.pushedOver)
  const err = refusal.byField
  const m = text()

  const submit = async (e: Event) => {
    e.preventDefault()
    setRefusal(noRefusal)
    const m = text()
    const typedValue = valueCents === undefined ? value : Number(valueCents)
    const fields = { name, rarity, valueCents: typedValue, imageUrl, isUpgradable }
    if (item !== undefined && revalued) {
      const newValue = formatCents(valueCents!)
      const yes = await ask({
        title: m.confirmTitle(item.name, newValue),
        body: (
          <>
            <p>
              <strong>{item.name}</strong>
              {m.goesFromTo(formatCents(item.valueCents))}
              <strong>{newValue}</strong>.
            </p>
            {pushed.length === 0
              ? <p>{m.noCaseOver}</p>
              : (
                <>
                  <p>{m.pushesOver(pushed.length)}</p>
                  <ul data-testid="confirm-pushed">
                    {pushed.map((i) => (
                      <li key={i.kase.id}>
                        {i.kase.name}
                        {m.rtpFromTo(formatPercent(i.rtpNow), formatPercent(i.rtpNew), formatPercent(1 - i.kase.houseEdge))}
                      </li>
                    ))}
                  </ul>
                </>
              )}
          </>
        ),
        confirm: m.saveValue(newValue)
      })
      if (!yes) return
    }
    setBusy(true)
    try {
      if (item === undefined) {
        const created = await api<Item>("/admin/items", { method: "POST", body: fields, twoFactorCode })
        onSaved(created, m.createdItem(created.name, created.rarity, formatCents(created.valueCents)))
        return
      }
      const changed = Object.fromEntries(
        Object.entries(fields).filter(([k, v]) => (k === "valueCents" ? valueChanged : v !== item[k as keyof Item]))
      )
      const saved = await api<Item>(`/admin/items/${item.id}`, { method: "PUT", body: changed, twoFactorCode })
      let note = ""
      if (revalued) {
        const ids = await recordedPushedOver(item.id).catch(() => undefined)
        const named = (ids ?? []).map((id) => cases.find((c) => c.id === id)?.name ?? m.caseNumber(id))
        note = ids === undefined ? "" : named.length === 0 ? m.pushedNone : m.pushedCases(named.join(", "))
      }
      onSaved(saved, m.savedItem(saved.name, formatCents(saved.valueCents)) + note)
    } catch (error) {
      setRefusal(refusalOf(error, (field) => FIELDS.includes(field)))
    } finally {
      setBusy(false)
    }
  }

  return (
    <article data-testid="item-editor">
      <header>
        <strong>{item === undefined ? m.newItemTitle : m.editItem(item.name)}</strong>
      </header>
      {dialog}
      <form onSubmit={submit}>
        <div class="grid">
          <label>
            {m.name}
            <input
              name="name"
              required
              value={name}
              {...invalid("item-error-name", err.name)}
              onInput={(e) => setName(e.currentTarget.value)}
            />
            <FieldNote id="item-error-name" text={err.name} />
          </label>
          <label>
            {m.columns.rarity}
            <select
              name="rarity"
              value={rarity}
              {...invalid("item-error-rarity", err.rarity)}
              onChange={(e) => setRarity(e.currentTarget.value)}
            >
              {RARITIES.map((r) => <option key={r} value={r}>{r}</option>)}
            </select>
            <FieldNote id="item-error-rarity" text={err.rarity} />
          </label>
          <label>
            {m.valueReais}
            <input
              name="value"
              required
              placeholder={reaisText(1_250)}
              inputMode="decimal"
              value={value}
              {...invalid("item-error-valueCents", err.valueCents)}
              onInput={(e) => setValue(e.currentTarget.value)}
            />
            <FieldNote id="item-error-valueCents" text={err.valueCents} />
          </label>
        </div>
        <label>
          {m.imageUrl}
          <input
            name="imageUrl"
            required
            placeholder="https://cdn.example.com/items/new-item.png"
            value={imageUrl}
            {...invalid("item-error-imageUrl", err.imageUrl)}
            onInput={(e) => setImageUrl(e.currentTarget.value)}
          />
          <FieldNote id="item-error-imageUrl" text={err.imageUrl} />
        </label>
        <label>
          <input
            type="checkbox"
            name="isUpgradable"
            checked={isUpgradable}
            onChange={(e) => setUpgradable(e.currentTarget.checked)}
          />
          {m.upgradableLabel}
        </label>
        {item !== undefined && <Impacts item={item} impact={impact} revalued={revalued} cases={cases} />}
        <ErrorNote text={refusal.general} />
        <div class="toolbar">
          <button type="submit" disabled={busy} aria-busy={busy}>{item === undefined ? m.createItem : m.saveItem}</button>
          <button type="button" class="outline secondary" onClick={onCancel}>{m.cancel}</button>
        </div>
      </form>
    </article>
  )
}

/** The cases holding the item, with their return to player now and with the value typed. */
const Impacts = (
  { item, impact, revalued, cases }: { item: Item; impact: ReadonlyArray<Impact>; revalued: boolean; cases: ReadonlyArray<AdminCase> }
) => {
  const m = text()
  const count = (n: number) => numberFormat().format(n)
  const holding = cases.filter((c) => c.items.some((i) => i.itemId === item.id))
  if (holding.length === 0) return <p data-testid="item-impact"><small>{m.noCaseHolds}</small></p>
  if (!revalued) {
    return (
      <p data-testid="item-impact">
        <small>{m.inCases(count(holding.length), holding.map((c) => c.name).join(", "))}</small>
      </p>
    )
  }
  const pushed = impact.filter((i) => i.pushedOver).length
  return (
    <div data-testid="item-impact">
      <p>
        {pushed === 0 ? m.valueNoneOver : <strong class="rtp-over">{m.valueSomeOver(count(pushed))}</strong>}
      </p>
      <ul class="impact">
        {impact.map((i) => (
          <li key={i.kase.id} data-case={i.kase.slug} data-pushed={i.pushedOver}>
            <span translate={false}>{i.kase.name}</span>
            {!i.kase.isActive && <small>{m.inactiveTag}</small>}
            {i.kase.promotional && <small>{m.promotionalCaseTag}</small>}
            {m.impactLine(formatPercent(i.rtpNow))}
            <span class={i.overNew ? "rtp-over" : ""}>{formatPercent(i.rtpNew)}</span>
            {m.atMost(formatPercent(1 - i.kase.houseEdge))}
            {i.pushedOver && <strong class="rtp-over">{m.pushedOverTag}</strong>}
            {i.overNow && <small>{m.alreadyOverTag}</small>}
          </li>
        ))}
      </ul>
    </div>
  )
}
