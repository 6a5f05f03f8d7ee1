import { useEffect, useMemo, useRef, useState } from "preact/hooks"
import { api, errorText } from "../api"
import { numberFormat } from "../i18n"
import { formatCents, formatPercent, parseReais } from "../money"
import { ErrorNote, Show, SuccessNote } from "../ui"
import { useLoad } from "../useLoad"
import "./catalog.css"
import { CaseEditor } from "./CaseEditor"
import { ChanceTable, type Chances, FieldNote, invalid, RtpPreview } from "./CaseItems"
import { type AdminCase, type Item, loadCatalog, noRefusal, type Refusal, refusalOf } from "./catalogApi"
import type { PageProps } from "./Console"
import { previewTyped } from "./economics"
import { ItemEditor, reaisText } from "./ItemEditor"
import { catalog as text } from "./text/catalog"

/** What the form above the lists is doing: nothing, a new case or item, or editing one. */
type Editing =
  | { readonly kind: "none" }
  | { readonly kind: "new-case" }
  | { readonly kind: "new-item" }
  | { readonly kind: "case"; readonly id: string }
  | { readonly kind: "item"; readonly id: string }

const NONE: Editing = { kind: "none" }

/**
 * Cases (price, return to player, house edge as 1 - RTP and the configured minimum, items, status; activate, edit)
 * and items (create, edit), with one editor open at a time above the lists.
 */
export const Catalog = ({ twoFactorCode }: PageProps) => {
  const [catalog, reload] = useLoad(loadCatalog, [])
  const [message, setMessage] = useState<{ ok?: string; error?: string }>({})
  const [editing, setEditing] = useState<Editing>(NONE)
  const editorRef = useRef<HTMLDivElement>(null)
  const open = (next: Editing) => (setMessage({}), setEditing(next))
  const done = (ok: string) => (setEditing(NONE), setMessage({ ok }), reload())
  useEffect(() => {
    if (editing.kind !== "none") editorRef.current?.scrollIntoView({ block: "start" })
  }, [editing])

  const m = text()
  const setActive = async (c: AdminCase, isActive: boolean) => {
    setMessage({})
    try {
      await api(`/admin/cases/${c.id}`, { method: "PUT", body: { isActive }, twoFactorCode })
      setMessage({ ok: isActive ? text().nowActive(c.name) : text().nowInactive(c.name) })
      reload()
    } catch (error) {
      setMessage({ error: errorText(error) })
    }
  }

  return (
    <>
      <div class="toolbar">
        <h1>{m.title}</h1>
        {editing.kind === "none" && (
          <>
            <button onClick={() => open({ kind: "new-case" })}>{m.newCase}</button>
            <button class="outline" onClick={() => open({ kind: "new-item" })}>{m.newItem}</button>
          </>
        )}
      </div>
      <SuccessNote text={message.ok} />
      <ErrorNote text={message.error} />
      <Show loaded={catalog}>
        {({ cases, items }) => {
          const editedCase = editing.kind === "case" ? cases.find((c) => c.id === editing.id) : undefined
          const editedItem = editing.kind === "item" ? items.find((i) => i.id === editing.id) : undefined
          return (
            <>
              <div ref={editorRef}>
                {editing.kind === "new-case" && (
                  <NewCase
                    items={items}
                    twoFactorCode={twoFactorCode}
                    onCancel={() => setEditing(NONE)}
                    onCreated={(c) => done(text().created(c.name, formatPercent(c.rtp)))}
                  />
                )}
                {editedCase !== undefined && (
                  <CaseEditor
                    key={editedCase.id}
                    kase={editedCase}
                    items={items}
                    twoFactorCode={twoFactorCode}
                    onCancel={() => setEditing(NONE)}
                    onSaved={(c) =>
                      done(text().savedCase(c.name, formatPercent(c.rtp), formatPercent(editedCase.rtp)))}
                  />
                )}
                {(editing.kind === "new-item" || editedItem !== undefined) && (
                  <ItemEditor
                    key={editedItem?.id ?? "new"}
                    item={editedItem}
                    cases={cases}
                    items={items}
                    twoFactorCode={twoFactorCode}
                    onCancel={() => setEditing(NONE)}
                    onSaved={(_, text) => done(text)}
                  />
                )}
              </div>
              <Cases
                cases={cases}
                onEdit={(c) => open({ kind: "case", id: c.id })}
                onActive={setActive}
              />
              <h2>{m.items}</h2>
              <div class="overflow-auto">
                <table data-testid="items" class="stack">
                  <thead>
                    <tr>
                      <th>{m.columns.item}</th>
                      <th>{m.columns.rarity}</th>
                      <th class="money">{m.columns.value}</th>
                      <th>{m.columns.upgradable}</th>
                      <th />
                    </tr>
                  </thead>
                  <tbody>
                    {items.map((i) => (
                      <tr key={i.id} data-id={i.id} data-name={i.name}>
                        <td data-label={m.columns.item} translate={false}>{i.name}</td>
                        <td data-label={m.columns.rarity}>{i.rarity}</td>
                        <td data-label={m.columns.value} class="money" data-testid="value">{formatCents(i.valueCents)}</td>
                        <td data-label={m.columns.upgradable}>{i.isUpgradable ? m.yes : m.no}</td>
                        <td data-label="">
                          <button class="outline" onClick={() => open({ kind: "item", id: i.id })}>{m.edit}</button>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          )
        }}
      </Show>
    </>
  )
}

/**
 * The cases. The return to player and the house edge as 1 - RTP add up to 100 %; the minimum house edge is the
 * case's configured limit (docs/rules.md#house-edge-rule): a case whose house edge falls below it is over the line.
 */
const Cases = (
  { cases, onEdit, onActive }: {
    cases: ReadonlyArray<AdminCase>
    onEdit: (c: AdminCase) => void
    onActive: (c: AdminCase, isActive: boolean) => void
  }
) => {
  const m = text()
  const h = m.columns
  return (
    <>
      <div class="overflow-auto">
        <table data-testid="cases" class="stack">
          <thead>
            <tr>
              <th>{h.case}</th>
              <th class="money">{h.price}</th>
              <th class="money" title={m.rtpTitle}>{h.rtp}</th>
              <th class="money" title={m.edgeTitle}>{h.edge}</th>
              <th class="money" title={m.minimumEdgeTitle}>{h.minimumEdge}</th>
              <th class="money">{h.items}</th>
              <th>{h.status}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {cases.map((c) => {
              const edge = 1 - c.rtp
              const over = !c.promotional && edge < c.houseEdge
              return (
                <tr key={c.id} data-id={c.id} data-slug={c.slug}>
                  <td data-label={h.case}>
                    <span translate={false}>{c.name} <small>{c.slug} · {c.category}{c.promotional ? m.promotionalTag : ""}</small></span>
                  </td>
                  <td data-label={h.price} class="money">{formatCents(c.priceCents)}</td>
                  <td data-label={h.rtp} class="money" data-testid="rtp">{formatPercent(c.rtp)}</td>
                  <td data-label={h.edge} class="money" data-testid="edge">
                    <span>
                      <span class={over ? "rtp-over" : ""}>{formatPercent(edge)}</span>
                      {over && <small>{m.belowMinimum}</small>}
                    </span>
                  </td>
                  <td data-label={h.minimumEdge} class="money" data-testid="edge-limit">{formatPercent(c.houseEdge)}</td>
                  <td data-label={h.items} class="money">{numberFormat().format(c.items.length)}</td>
                  <td data-label={h.status} data-testid="status" data-active={c.isActive}>{c.isActive ? m.active : m.inactive}</td>
                  <td data-label="">
                    <div class="actions">
                      <button class="outline" onClick={() => onEdit(c)}>{m.edit}</button>
                      <button class="outline secondary" onClick={() => onActive(c, !c.isActive)}>
                        {c.isActive ? m.deactivate : m.activate}
                      </button>
                    </div>
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      </div>
      <p class="legend">
        <small>{m.legend}</small>
      </p>
    </>
  )
}

const NEW_CASE_FIELDS = ["name", "slug", "imageUrl", "priceCents", "houseEdge", "flipChance", "promotional", "rtp", "items"]

const NewCase = (
  { items, onCancel, onCreated, twoFactorCode }: {
    items: ReadonlyArray<Item>
    twoFactorCode: string
    onCancel: () => void
    onCreated: (c: AdminCase) => void
  }
) => {
  const [name, setName] = useState("")
  const [slug, setSlug] = useState("")
  const [imageUrl, setImageUrl] = useState("")
  const [price, setPrice] = useState("")
  const [houseEdge, setHouseEdge] = useState("0.1")
  const [flipChance, setFlipChance] = useState("0")
  const [chances, setChances] = useState<Chances>({})
  const [refusal, setRefusal] = useState<Refusal>(noRefusal)
  const [busy, setBusy] = useState(false)

  const priceCents = parseReais(price)
  const chosen = items.filter((i) => chances[i.id] !== undefined)
  const estimate = useMemo(
    () => previewTyped(chosen.map((i) => ({ chance: chances[i.id]!, valueCents: BigInt(i.valueCents) })), priceCents, flipChance),
    [chances, priceCents, flipChance, items]
  )
  const err = refusal.byField
  const rowErrors: Record<string, string> = {}
  for (const [field, message] of Object.entries(err)) {
    const row = /^items\.(\d+)/.exec(field)
    const item = row === null ? undefined : chosen[Number(row[1])]
    if (item !== undefined) rowErrors[item.id] = message
  }

  const submit = async (e: Event) => {
    e.preventDefault()
    setRefusal(noRefusal)
    setBusy(true)
    try {
      const created = await api<AdminCase>("/admin/cases", {
        method: "POST",
        body: {
          name,
          slug,
          imageUrl,
          priceCents: priceCents === undefined ? price : Number(priceCents),
          houseEdge: Number(houseEdge.replace(",", ".")),
          flipChance: Number(flipChance.replace(",", ".")),
          items: chosen.map((i) => ({ itemId: i.id, dropChance: Number(chances[i.id]!.replace(",", ".")) }))
        },
        twoFactorCode
      })
      onCreated(created)
    } catch (err) {
      setRefusal(refusalOf(err, (field) => NEW_CASE_FIELDS.includes(field) || /^items\.\d+/.test(field)))
    } finally {
      setBusy(false)
    }
  }

  const m = text()
  const field = (id: string, label: string, value: string, set: (v: string) => void, placeholder?: string, required = true) => (
    <label>
      {label}
      <input
        name={id}
        value={value}
        required={required}
        placeholder={placeholder}
        {...invalid(`new-case-error-${id}`, err[id])}
        onInput={(e) => set(e.currentTarget.value)}
      />
      <FieldNote id={`new-case-error-${id}`} text={err[id]} />
    </label>
  )

  return (
    <article data-testid="new-case">
      <header>
        <strong>{m.newCaseTitle}</strong>
      </header>
      <form onSubmit={submit}>
        <div class="grid">
          {field("name", m.name, name, setName)}
          {field("slug", m.slug, slug, setSlug, m.slugPlaceholder)}
        </div>
        {field("imageUrl", m.imageUrl, imageUrl, setImageUrl, "https://cdn.example.com/cases/new-case.png")}
        <div class="grid">
          <label>
            {m.priceReais}
            <input
              name="price"
              required
              placeholder={reaisText(1_000)}
              value={price}
              {...invalid("new-case-error-priceCents", err.priceCents)}
              onInput={(e) => setPrice(e.currentTarget.value)}
            />
            <FieldNote id="new-case-error-priceCents" text={err.priceCents} />
          </label>
          {field("houseEdge", m.houseEdge, houseEdge, setHouseEdge, undefined, false)}
          {field("flipChance", m.flipChance, flipChance, setFlipChance, undefined, false)}
        </div>
        <p>{m.itemsAndChances}</p>
        <ChanceTable items={items} chances={chances} setChances={setChances} rowErrors={rowErrors} />
        <FieldNote id="new-case-error-items" text={err.items} />
        <RtpPreview estimate={estimate} priceCents={priceCents} houseEdge={houseEdge} />
        <FieldNote id="new-case-error-rtp" text={err.rtp} />
        <ErrorNote text={refusal.general} />
        <div class="toolbar">
          <button type="submit" disabled={busy} aria-busy={busy}>{m.createCase}</button>
          <button type="button" class="outline secondary" onClick={onCancel}>{m.cancel}</button>
        </div>
      </form>
    </article>
  )
}
