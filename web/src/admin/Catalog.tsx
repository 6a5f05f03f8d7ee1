import { useEffect, useMemo, useRef, useState } from "preact/hooks"
import { api, errorText } from "../api"
import { formatCents, formatPercent, parseReais } from "../money"
import { ErrorNote, Show, SuccessNote } from "../ui"
import { useLoad } from "../useLoad"
import "./catalog.css"
import { CaseEditor } from "./CaseEditor"
import { ChanceTable, type Chances, FieldNote, invalid, RtpPreview } from "./CaseItems"
import { type AdminCase, type Item, loadCatalog, noRefusal, type Refusal, refusalOf } from "./catalogApi"
import type { PageProps } from "./Console"
import { previewTyped } from "./economics"
import { ItemEditor } from "./ItemEditor"

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

  const setActive = async (c: AdminCase, isActive: boolean) => {
    setMessage({})
    try {
      await api(`/admin/cases/${c.id}`, { method: "PUT", body: { isActive }, twoFactorCode })
      setMessage({ ok: `${c.name} is now ${isActive ? "active" : "inactive"}` })
      reload()
    } catch (error) {
      setMessage({ error: errorText(error) })
    }
  }

  return (
    <>
      <div class="toolbar">
        <h1>Catalog</h1>
        {editing.kind === "none" && (
          <>
            <button onClick={() => open({ kind: "new-case" })}>New case…</button>
            <button class="outline" onClick={() => open({ kind: "new-item" })}>New item…</button>
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
                    onCreated={(c) => done(`Created ${c.name}: return to player ${formatPercent(c.rtp)}`)}
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
                      done(`Saved ${c.name}: return to player ${formatPercent(c.rtp)} (was ${formatPercent(editedCase.rtp)})`)}
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
              <h2>Items</h2>
              <div class="overflow-auto">
                <table data-testid="items" class="stack">
                  <thead>
                    <tr>
                      <th>Item</th>
                      <th>Rarity</th>
                      <th class="money">Value</th>
                      <th>Upgradable</th>
                      <th />
                    </tr>
                  </thead>
                  <tbody>
                    {items.map((i) => (
                      <tr key={i.id} data-id={i.id} data-name={i.name}>
                        <td data-label="Item">{i.name}</td>
                        <td data-label="Rarity">{i.rarity}</td>
                        <td data-label="Value" class="money" data-testid="value">{formatCents(i.valueCents)}</td>
                        <td data-label="Upgradable">{i.isUpgradable ? "yes" : "no"}</td>
                        <td data-label="">
                          <button class="outline" onClick={() => open({ kind: "item", id: i.id })}>Edit…</button>
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
) => (
  <>
    <div class="overflow-auto">
      <table data-testid="cases" class="stack">
        <thead>
          <tr>
            <th>Case</th>
            <th class="money">Price</th>
            <th class="money" title="What an opening pays back on average, as a share of the price (FLIP included)">
              Return to player (RTP)
            </th>
            <th class="money" title="The share of the price the house keeps on average: 1 − RTP">
              House edge (1 − RTP)
            </th>
            <th class="money" title="The case's configured limit: its house edge may not fall below it unless it is promotional">
              Minimum house edge
            </th>
            <th class="money">Items</th>
            <th>Status</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {cases.map((c) => {
            const edge = 1 - c.rtp
            const over = !c.promotional && edge < c.houseEdge
            return (
              <tr key={c.id} data-id={c.id} data-slug={c.slug}>
                <td data-label="Case">
                  <span>{c.name} <small>{c.slug} · {c.category}{c.promotional ? " · promotional" : ""}</small></span>
                </td>
                <td data-label="Price" class="money">{formatCents(c.priceCents)}</td>
                <td data-label="Return to player (RTP)" class="money" data-testid="rtp">{formatPercent(c.rtp)}</td>
                <td data-label="House edge (1 − RTP)" class="money" data-testid="edge">
                  <span>
                    <span class={over ? "rtp-over" : ""}>{formatPercent(edge)}</span>
                    {over && <small> below the minimum</small>}
                  </span>
                </td>
                <td data-label="Minimum house edge" class="money" data-testid="edge-limit">{formatPercent(c.houseEdge)}</td>
                <td data-label="Items" class="money">{c.items.length}</td>
                <td data-label="Status" data-testid="status">{c.isActive ? "active" : "inactive"}</td>
                <td data-label="">
                  <div class="actions">
                    <button class="outline" onClick={() => onEdit(c)}>Edit…</button>
                    <button class="outline secondary" onClick={() => onActive(c, !c.isActive)}>
                      {c.isActive ? "Deactivate" : "Activate"}
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
      <small>
        Return to player + house edge (1 − RTP) = 100 % of the price. The minimum house edge is each case's configured
        limit: below it the case pays back too much (a dashboard alert) unless it is promotional.
      </small>
    </p>
  </>
)

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
        <strong>New case</strong>
      </header>
      <form onSubmit={submit}>
        <div class="grid">
          {field("name", "Name", name, setName)}
          {field("slug", "Slug", slug, setSlug, "lowercase-words")}
        </div>
        {field("imageUrl", "Image URL", imageUrl, setImageUrl, "https://cdn.example.com/cases/new-case.png")}
        <div class="grid">
          <label>
            Price (R$)
            <input
              name="price"
              required
              placeholder="10,00"
              value={price}
              {...invalid("new-case-error-priceCents", err.priceCents)}
              onInput={(e) => setPrice(e.currentTarget.value)}
            />
            <FieldNote id="new-case-error-priceCents" text={err.priceCents} />
          </label>
          {field("houseEdge", "House edge (0 to 0.5)", houseEdge, setHouseEdge, undefined, false)}
          {field("flipChance", "FLIP chance (0 to 0.5)", flipChance, setFlipChance, undefined, false)}
        </div>
        <p>Items and their drop chances (0.0001 to 1; they must add up to 1):</p>
        <ChanceTable items={items} chances={chances} setChances={setChances} rowErrors={rowErrors} />
        <FieldNote id="new-case-error-items" text={err.items} />
        <RtpPreview estimate={estimate} priceCents={priceCents} houseEdge={houseEdge} />
        <FieldNote id="new-case-error-rtp" text={err.rtp} />
        <ErrorNote text={refusal.general} />
        <div class="toolbar">
          <button type="submit" disabled={busy} aria-busy={busy}>Create case</button>
          <button type="button" class="outline secondary" onClick={onCancel}>Cancel</button>
        </div>
      </form>
    </article>
  )
}
