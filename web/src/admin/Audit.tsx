import { useState } from "preact/hooks"
import { api } from "../api"
import { locale } from "../i18n"
import { formatDateTime } from "../money"
import { Pager, Show } from "../ui"
import { useLoad } from "../useLoad"
import { Link, playerPath, UserLink } from "./nav"
import { actionText, audit } from "./text/audit"
import "./catalog.css"

export interface AuditEntry {
  readonly id: string
  readonly createdAt: string
  readonly action: string
  readonly userId: string | null
  readonly actor: "system" | { id: string; username: string } | null
  readonly entityType: string | null
  readonly entityId: string | null
  readonly metadata: Record<string, unknown>
}

interface Filters {
  readonly action: string
  readonly userId: string
  readonly actorId: string
  readonly from: string
  readonly to: string
}

const FIELDS = ["action", "userId", "actorId", "from", "to"] as const

/** The filters in the address (`/admin/audit?userId=12`), so a player page can link to its entries. */
const fromAddress = (): Filters => {
  const params = new URLSearchParams(location.search)
  return Object.fromEntries(FIELDS.map((f) => [f, params.get(f) ?? ""])) as unknown as Filters
}

const LIMIT = 20

/**
 * `/admin/audit`: every audited action, newest first, narrowed by action, user, acting administrator and dates
 * (`from` and `to` are whole UTC days, both inclusive, as the API reads a date alone).
 */
export const Audit = () => {
  const [draft, setDraft] = useState<Filters>(fromAddress)
  const [filters, setFilters] = useState<Filters>(draft)
  const [page, setPage] = useState(1)
  const [entries] = useLoad(() => {
    const params = new URLSearchParams({ page: String(page), limit: String(LIMIT) })
    for (const f of FIELDS) if (filters[f].trim() !== "") params.set(f, filters[f].trim())
    // `to` is a date: the whole day, through its last millisecond (UTC).
    if (filters.to !== "") params.set("to", `${filters.to}T23:59:59.999Z`)
    return api<{ entries: ReadonlyArray<AuditEntry>; total: number }>(`/admin/audit?${params}`)
  }, [filters, page])
  const field = (name: keyof Filters) => ({
    name,
    value: draft[name],
    onInput: (e: { currentTarget: { value: string } }) => setDraft({ ...draft, [name]: e.currentTarget.value })
  })
  const m = audit()
  return (
    <>
      <h1>{m.title}</h1>
      <form
        class="filters"
        role="search"
        data-testid="audit-filters"
        onSubmit={(e) => {
          e.preventDefault()
          setPage(1)
          setFilters(draft)
        }}
      >
        <label>
          {m.action}
          <select {...field("action")} onChange={(e) => setDraft({ ...draft, action: e.currentTarget.value })}>
            <option value="">{m.anyAction}</option>
            {Object.entries(m.actions)
              .sort(([, a], [, b]) => a.localeCompare(b, locale()))
              .map(([code, words]) => <option key={code} value={code}>{words}</option>)}
          </select>
        </label>
        <label>
          {m.userId}
          <input {...field("userId")} inputMode="numeric" placeholder={m.any} />
        </label>
        <label>
          {m.actorId}
          <input {...field("actorId")} inputMode="numeric" placeholder={m.any} />
        </label>
        <label>
          {m.from}
          <input type="date" {...field("from")} />
        </label>
        <label>
          {m.to}
          <input type="date" {...field("to")} />
        </label>
        <button type="submit">{m.filter}</button>
      </form>
      <Show loaded={entries}>
        {({ entries, total }) => (
          <>
            <Pager page={page} limit={LIMIT} total={total} onPage={setPage} />
            {entries.length === 0 ? <p>{m.noEntries}</p> : (
              <div class="overflow-auto">
                <AuditRows entries={entries} />
              </div>
            )}
          </>
        )}
      </Show>
    </>
  )
}

const details = (metadata: Record<string, unknown>) =>
  Object.entries(metadata).map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`).join(", ")

/** Audit entries, each action in words (its code in `data-action` and the tooltip). */
export const AuditRows = ({ entries }: { entries: ReadonlyArray<AuditEntry> }) => {
  const m = audit()
  const c = m.columns
  return (
    <table class="stack" data-testid="audit">
      <thead>
        <tr>
          <th>{c.when}</th>
          <th>{c.action}</th>
          <th>{c.user}</th>
          <th>{c.by}</th>
          <th>{c.concerns}</th>
          <th>{c.details}</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((e) => (
          <tr key={e.id} data-id={e.id}>
            <td data-label={c.when}>{formatDateTime(e.createdAt)}</td>
            <td data-label={c.action} data-testid="action" data-action={e.action} title={e.action}>{actionText(e.action)}</td>
            <td data-label={c.user}>{e.userId === null ? "" : <Link href={playerPath(e.userId)}>#{e.userId}</Link>}</td>
            <td data-label={c.by} data-testid="actor">
              {e.actor === null ? "" : e.actor === "system" ? m.system : <UserLink user={e.actor} />}
            </td>
            <td data-label={c.concerns} translate={false}>{e.entityType === null ? "" : `${e.entityType} ${e.entityId ?? ""}`}</td>
            <td data-label={c.details} translate={false}>
              <small>{details(e.metadata)}</small>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
