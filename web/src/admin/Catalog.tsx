import { useMemo, useState } from "preact/hooks"
import { api, errorText } from "../api"
import { formatCents, formatPercent, parseReais } from "../money"
import { ErrorNote, Show, SuccessNote } from "../ui"
import { useLoad } from "../useLoad"
import type { PageProps } from "./Console"
import { chanceUnits, preview } from "./economics"

interface AdminCase {
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
  readonly items: ReadonlyArray<{ itemId: string; dropChance: number }>
}

interface Item {
  readonly id: string
  readonly name: string
  readonly rarity: string
  readonly valueCents: number
}

const loadCatalog = async () => {
  const [cases, items] = await Promise.all([
    api<{ cases: ReadonlyArray<AdminCase> }>("/admin/cases?limit=100"),
    api<{ items: ReadonlyArray<Item> }>("/admin/items?limit=100")
  ])
  return { cases: cases.cases, items: items.items }
}

export const Catalog = ({ twoFactorCode }: PageProps) => {
  const [catalog, reload] = useLoad(loadCatalog, [])
  const [message, setMessage] = useState<{ ok?: string; error?: string }>({})
  const [creating, setCreating] = useState(false)

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
        {!creating && <button onClick={() => (setMessage({}), setCreating(true))}>New case…</button>}
      </div>
      <SuccessNote text={message.ok} />
      <ErrorNote text={message.error} />
      <Show loaded={catalog}>
        {({ cases, items }) => (
          <>
            {creating && (
              <NewCase
                items={items}
                twoFactorCode={twoFactorCode}
                onCancel={() => setCreating(false)}
                onCreated={(c) => {
                  setCreating(false)
                  setMessage({ ok: `Created ${c.name}: return to player ${formatPercent(c.rtp)}` })
                  reload()
                }}
              />
            )}
            <div class="overflow-auto">
              <table data-testid="cases">
                <thead>
                  <tr>
                    <th>Case</th>
                    <th class="money">Price</th>
                    <th class="money">RTP</th>
                    <th class="money">House edge</th>
                    <th class="money">Items</th>
                    <th>Status</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {cases.map((c) => (
                    <tr key={c.id} data-id={c.id} data-slug={c.slug}>
                      <td>
                        {c.name} <small>{c.slug} · {c.category}{c.promotional ? " · promotional" : ""}</small>
                      </td>
                      <td class="money">{formatCents(c.priceCents)}</td>
                      <td class="money" data-testid="rtp">{formatPercent(c.rtp)}</td>
                      <td class="money">{formatPercent(c.houseEdge)}</td>
                      <td class="money">{c.items.length}</td>
                      <td data-testid="status">{c.isActive ? "active" : "inactive"}</td>
                      <td>
                        <button class="outline" onClick={() => setActive(c, !c.isActive)}>
                          {c.isActive ? "Deactivate" : "Activate"}
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <h2>Items</h2>
            <div class="overflow-auto">
              <table data-testid="items">
                <thead>
                  <tr>
                    <th>Item</th>
                    <th>Rarity</th>
                    <th class="money">Value</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((i) => (
                    <tr key={i.id}>
                      <td>{i.name}</td>
                      <td>{i.rarity}</td>
                      <td class="money">{formatCents(i.valueCents)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </Show>
    </>
  )
}

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
  /** itemId -> drop chance as typed (0 to 1). */
  const [chances, setChances] = useState<Record<string, string>>({})
  const [error, setError] = useState<string | undefined>(undefined)
  const [busy, setBusy] = useState(false)

  const priceCents = parseReais(price)
  const chosen = items.filter((i) => chances[i.id] !== undefined)
  const estimate = useMemo(() => {
    const units = chosen.map((i) => ({ units: chanceUnits(chances[i.id]!), valueCents: BigInt(i.valueCents) }))
    const flip = chanceUnits(flipChance)
    if (priceCents === undefined || flip === undefined || units.some((u) => u.units === undefined)) return undefined
    return preview(units as Array<{ units: bigint; valueCents: bigint }>, priceCents, flip)
  }, [chances, priceCents, flipChance])
  const edge = Number(houseEdge.replace(",", "."))

  const submit = async (e: Event) => {
    e.preventDefault()
    setError(undefined)
    setBusy(true)
    try {
      const created = await api<AdminCase>("/admin/cases", {
        method: "POST",
        body: {
          name,
          slug,
          imageUrl,
          priceCents: priceCents === undefined ? price : Number(priceCents),
          houseEdge: edge,
          flipChance: Number(flipChance.replace(",", ".")),
          items: chosen.map((i) => ({ itemId: i.id, dropChance: Number(chances[i.id]!.replace(",", ".")) }))
        },
        twoFactorCode
      })
      onCreated(created)
    } catch (err) {
      setError(errorText(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <article data-testid="new-case">
      <header>
        <strong>New case</strong>
      </header>
      <form onSubmit={submit}>
        <div class="grid">
          <label>
            Name
            <input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Slug
            <input
              name="slug"
              required
              placeholder="lowercase-words"
              value={slug}
              onInput={(e) => setSlug(e.currentTarget.value)}
            />
          </label>
        </div>
        <label>
          Image URL
          <input
            name="imageUrl"
            required
            placeholder="https://cdn.example.com/cases/new-case.png"
            value={imageUrl}
            onInput={(e) => setImageUrl(e.currentTarget.value)}
          />
        </label>
        <div class="grid">
          <label>
            Price (R$)
            <input name="price" required placeholder="10,00" value={price} onInput={(e) => setPrice(e.currentTarget.value)} />
          </label>
          <label>
            House edge (0 to 0.5)
            <input name="houseEdge" value={houseEdge} onInput={(e) => setHouseEdge(e.currentTarget.value)} />
          </label>
          <label>
            FLIP chance (0 to 0.5)
            <input name="flipChance" value={flipChance} onInput={(e) => setFlipChance(e.currentTarget.value)} />
          </label>
        </div>
        <p>Items and their drop chances (0.0001 to 1; they must add up to 1):</p>
        <div class="overflow-auto">
          <table>
            <tbody>
              {items.map((i) => (
                <tr key={i.id} data-item={i.name}>
                  <td>
                    <input
                      type="checkbox"
                      id={`item-${i.id}`}
                      name={`item-${i.id}`}
                      aria-label={`Include ${i.name}`}
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
                    <label for={`item-${i.id}`} class="inline">
                      {i.name} <small>{i.rarity}</small>
                    </label>
                  </td>
                  <td class="money">{formatCents(i.valueCents)}</td>
                  <td>
                    {chances[i.id] !== undefined && (
                      <input
                        name={`chance-${i.id}`}
                        aria-label={`Drop chance of ${i.name}`}
                        placeholder="0.25"
                        value={chances[i.id]}
                        onInput={(e) => {
                          const value = e.currentTarget.value
                          setChances((now) => ({ ...now, [i.id]: value }))
                        }}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p data-testid="rtp-preview" aria-live="polite">
          {estimate === undefined
            ? "Return to player: enter a price and a drop chance for each chosen item."
            : (
              <>
                Return to player <strong class={estimate.rtp > 1 - edge ? "rtp-over" : ""}>{formatPercent(estimate.rtp)}</strong>
                {" "}(expected value {formatCents(Math.round(estimate.expectedValueCents))} per opening; at most{" "}
                {formatPercent(1 - edge)} with this house edge)
                {estimate.totalUnits !== 10_000_000n && (
                  <>
                    {" "}· the drop chances add up to {(Number(estimate.totalUnits) / 10_000_000).toString()}, not 1
                  </>
                )}
              </>
            )}
        </p>
        <ErrorNote text={error} />
        <div class="toolbar">
          <button type="submit" disabled={busy} aria-busy={busy}>Create case</button>
          <button type="button" class="outline secondary" onClick={onCancel}>Cancel</button>
        </div>
      </form>
    </article>
  )
}
