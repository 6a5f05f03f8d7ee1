import { useState } from "preact/hooks"
import { api } from "../api"
import { formatDateTime } from "../money"
import { Pager, Show } from "../ui"
import { useLoad } from "../useLoad"
import { Link, playerPath, UserLink } from "./nav"

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

/** The audit actions (docs/rules.md#audit-log; the API refuses any other). */
export const AUDIT_ACTIONS = [
  "2FA_ENABLED",
  "RESPONSIBLE_GAMING_LIMITS",
  "SELF_EXCLUDED",
  "REGISTRY_DELISTED",
  "2FA_DISABLED",
  "2FA_BACKUP_CODE_USED",
  "2FA_LOCKED",
  "SUSPICIOUS_IP_CHANGE",
  "DEVICE_MISMATCH",
  "DEPOSIT_CONFIRMED",
  "ADMIN_CONFIRM_DEPOSIT",
  "USER_BANNED",
  "USER_UNBANNED",
  "ADMIN_ADJUST_BALANCE",
  "WITHDRAWAL_REQUESTED",
  "WITHDRAWAL_CANCELLED",
  "WITHDRAWAL_APPROVED",
  "WITHDRAWAL_REJECTED",
  "WITHDRAWAL_PAYOUT_FAILED",
  "WITHDRAWAL_PAYOUT_UNCONFIRMED",
  "WITHDRAWAL_PAYOUT_CONFLICT",
  "WITHDRAWAL_FAILED",
  "WITHDRAWAL_EXCLUDED_PAYOUT",
  "DEPOSIT_FAILED",
  "DEPOSIT_EXPIRED",
  "DEPOSIT_PAID_LATE",
  "DEPOSIT_CANCELLED",
  "DEPOSIT_THIRD_PARTY",
  "DEPOSIT_EXCLUDED",
  "DEPOSIT_REFUNDED",
  "BATTLE_SETTLEMENT",
  "RAFFLE_CREATED",
  "RAFFLE_DRAWN",
  "RAFFLE_CANCELLED",
  "CASE_PROMOTIONAL",
  "CASE_OVER_HOUSE_EDGE",
  "ITEM_CREATED",
  "ITEM_UPDATED",
  "SESSION_REVOKED"
] as const

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
  return (
    <>
      <h1>Audit log</h1>
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
          Action
          <select {...field("action")} onChange={(e) => setDraft({ ...draft, action: e.currentTarget.value })}>
            <option value="">Any action</option>
            {AUDIT_ACTIONS.map((a) => <option key={a} value={a}>{a}</option>)}
          </select>
        </label>
        <label>
          User id
          <input {...field("userId")} inputMode="numeric" placeholder="any" />
        </label>
        <label>
          Administrator id
          <input {...field("actorId")} inputMode="numeric" placeholder="any" />
        </label>
        <label>
          From (UTC day)
          <input type="date" {...field("from")} />
        </label>
        <label>
          To (UTC day)
          <input type="date" {...field("to")} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <Show loaded={entries}>
        {({ entries, total }) => (
          <>
            <Pager page={page} limit={LIMIT} total={total} onPage={setPage} />
            {entries.length === 0 ? <p>No entries.</p> : (
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

export const AuditRows = ({ entries }: { entries: ReadonlyArray<AuditEntry> }) => (
  <table data-testid="audit">
    <thead>
      <tr>
        <th>When</th>
        <th>Action</th>
        <th>User</th>
        <th>By</th>
        <th>Concerns</th>
        <th>Details</th>
      </tr>
    </thead>
    <tbody>
      {entries.map((e) => (
        <tr key={e.id} data-id={e.id}>
          <td>{formatDateTime(e.createdAt)}</td>
          <td data-testid="action">{e.action}</td>
          <td>{e.userId === null ? "" : <Link href={playerPath(e.userId)}>#{e.userId}</Link>}</td>
          <td data-testid="actor">
            {e.actor === null ? "" : e.actor === "system" ? "system" : <UserLink user={e.actor} />}
          </td>
          <td>{e.entityType === null ? "" : `${e.entityType} ${e.entityId ?? ""}`}</td>
          <td>
            <small>{details(e.metadata)}</small>
          </td>
        </tr>
      ))}
    </tbody>
  </table>
)
