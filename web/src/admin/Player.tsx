import type { ComponentChildren } from "preact"
import { useState } from "preact/hooks"
import { api, errorText } from "../api"
import { formatCents, formatDateTime } from "../money"
import { ErrorNote, Pager, Show, SuccessNote, useConfirm } from "../ui"
import { useLoad } from "../useLoad"
import { AuditRows, type AuditEntry } from "./Audit"
import "./catalog.css"
import type { PageProps } from "./Console"
import { Link } from "./nav"
import { type Outcome, UserActions } from "./UserActions"

type Cents = number | string

interface Session {
  /** The session's reference (never its id, which signs in). */
  readonly id: string
  readonly ip: string | null
  readonly userAgent: string | null
  readonly createdAt: string
  readonly lastActivity: string
}

interface Profile {
  readonly id: string
  readonly username: string
  readonly idpId: string
  readonly role: "USER" | "ADMIN"
  readonly balanceCents: Cents
  readonly twoFactorEnabled: boolean
  readonly banned: { at: string; reason: string | null } | null
  readonly createdAt: string
  readonly lastActiveAt: string | null
  readonly identity: { status: "UNVERIFIED" | "VERIFIED"; cpf?: string; fullName?: string; birthDate?: string }
  readonly responsibleGaming: {
    exclusion: { excluded: boolean; since: string | null; until: string | null; registryListed: boolean }
    limits: {
      dailyLossCents: Cents | null
      weeklyLossCents: Cents | null
      monthlyLossCents: Cents | null
      dailyPlayMinutes: number | null
      usage: { lossTodayCents: Cents; lossWeekCents: Cents; lossMonthCents: Cents; playMinutesToday: number }
      pending: ReadonlyArray<{ field: string; value: number | null; effectiveAt: string }>
    }
  }
  readonly counts: { transactions: number; deposits: number; withdrawals: number; openings: number; auditEntries: number }
  readonly sessions: ReadonlyArray<Session>
}

/** `/admin/users/<id>`: one player — profile, sessions (revocable) and their paged history. */
export const Player = (props: PageProps & { id: string }) => {
  const { id, twoFactorCode } = props
  const [profile, reload] = useLoad(() => api<Profile>(`/admin/users/${id}`), [id])
  const [dialog, ask] = useConfirm()
  const [message, setMessage] = useState<Outcome>({})
  /** Bumped after each action, so the history shows the rows it wrote. */
  const [version, setVersion] = useState(0)
  const changed = () => (reload(), setVersion((v) => v + 1))
  const done = (outcome: Outcome) => {
    setMessage(outcome)
    if (outcome.ok !== undefined) changed()
  }
  return (
    <Show loaded={profile}>
      {(p) => (
        <>
          <p>
            <small>
              <Link href="/admin/users">Users</Link> ›
            </small>
          </p>
          <h1 data-testid="player-name">{p.username}</h1>
          {dialog}
          <SuccessNote text={message.ok} />
          <ErrorNote text={message.error} />
          <div data-testid="player-actions">
            <UserActions
              {...props}
              person={{ ...p, activeSessions: p.sessions.length, banned: p.banned !== null }}
              ask={ask}
              onDone={done}
            />
          </div>
          <ProfileFacts p={p} />
          <Sessions userId={p.id} sessions={p.sessions} twoFactorCode={twoFactorCode} onChange={changed} />
          <History p={p} version={version} />
        </>
      )}
    </Show>
  )
}

const limit = (cents: Cents | null, used: Cents) =>
  cents === null ? `none (lost ${formatCents(used)})` : `${formatCents(cents)} (lost ${formatCents(used)})`

const ProfileFacts = ({ p }: { p: Profile }) => {
  const { exclusion, limits } = p.responsibleGaming
  return (
    <article>
      <dl class="profile" data-testid="profile">
        <dt>Balance</dt>
        <dd data-testid="player-balance">{formatCents(p.balanceCents)}</dd>
        <dt>Role</dt>
        <dd>{p.role}</dd>
        <dt>Sign-in id</dt>
        <dd>{p.idpId}</dd>
        <dt>2FA</dt>
        <dd data-testid="player-2fa">{p.twoFactorEnabled ? "on" : "off"}</dd>
        <dt>Status</dt>
        <dd data-testid="player-status">
          {p.banned === null ? "active" : `banned ${formatDateTime(p.banned.at)}${p.banned.reason ? `: ${p.banned.reason}` : ""}`}
        </dd>
        <dt>Joined</dt>
        <dd>{formatDateTime(p.createdAt)}</dd>
        <dt>Last active</dt>
        <dd>{p.lastActiveAt === null ? "never" : formatDateTime(p.lastActiveAt)}</dd>
        <dt>Identity</dt>
        <dd data-testid="player-identity">
          {p.identity.status === "VERIFIED"
            ? `verified: ${[p.identity.fullName, p.identity.cpf].filter(Boolean).join(", CPF ")}`
            : "not verified"}
        </dd>
        <dt>Self-exclusion</dt>
        <dd data-testid="player-exclusion">
          {exclusion.excluded
            ? `excluded${exclusion.since ? ` since ${formatDateTime(exclusion.since)}` : ""}${
              exclusion.until ? ` until ${formatDateTime(exclusion.until)}` : exclusion.registryListed ? "" : ", indefinitely"
            }${exclusion.registryListed ? " (national registry)" : ""}`
            : "none"}
        </dd>
        <dt>Daily loss limit</dt>
        <dd>{limit(limits.dailyLossCents, limits.usage.lossTodayCents)}</dd>
        <dt>Weekly loss limit</dt>
        <dd>{limit(limits.weeklyLossCents, limits.usage.lossWeekCents)}</dd>
        <dt>Monthly loss limit</dt>
        <dd>{limit(limits.monthlyLossCents, limits.usage.lossMonthCents)}</dd>
        <dt>Daily play time</dt>
        <dd>
          {limits.dailyPlayMinutes === null ? "no limit" : `${limits.dailyPlayMinutes} min`} ({limits.usage.playMinutesToday} min
          today)
        </dd>
        {limits.pending.length > 0 && (
          <>
            <dt>Pending changes</dt>
            <dd>
              {limits.pending.map((c) => `${c.field} → ${c.value ?? "none"} at ${formatDateTime(c.effectiveAt)}`).join("; ")}
            </dd>
          </>
        )}
      </dl>
    </article>
  )
}

const Sessions = (
  { userId, sessions, twoFactorCode, onChange }: {
    userId: string
    sessions: ReadonlyArray<Session>
    twoFactorCode: string
    onChange: () => void
  }
) => {
  const [busy, setBusy] = useState<string | undefined>(undefined)
  const [message, setMessage] = useState<{ ok?: string; error?: string }>({})
  const revoke = async (s: Session) => {
    setMessage({})
    setBusy(s.id)
    try {
      await api(`/admin/users/${userId}/sessions/${s.id}/revoke`, { method: "POST", twoFactorCode })
      setMessage({ ok: `Session ${s.id.slice(0, 8)}… ended` })
      onChange()
    } catch (error) {
      setMessage({ error: errorText(error) })
    } finally {
      setBusy(undefined)
    }
  }
  return (
    <section>
      <h2>Active sessions</h2>
      <SuccessNote text={message.ok} />
      <ErrorNote text={message.error} />
      {sessions.length === 0 ? <p data-testid="no-sessions">No active sessions.</p> : (
        <div class="overflow-auto">
          <table data-testid="sessions" class="stack">
            <thead>
              <tr>
                <th>Session</th>
                <th>Address</th>
                <th>Browser</th>
                <th>Started</th>
                <th>Last activity</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {sessions.map((s) => (
                <tr key={s.id} data-id={s.id}>
                  <td data-label="Session">
                    <code title={s.id}>{s.id.slice(0, 8)}…</code>
                  </td>
                  <td data-label="Address">{s.ip ?? "?"}</td>
                  <td data-label="Browser">
                    <small>{s.userAgent ?? "?"}</small>
                  </td>
                  <td data-label="Started">{formatDateTime(s.createdAt)}</td>
                  <td data-label="Last activity">{formatDateTime(s.lastActivity)}</td>
                  <td data-label="">
                    <button class="outline" disabled={busy !== undefined} aria-busy={busy === s.id} onClick={() => revoke(s)}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

const PAGE = 10

type Tab = "transactions" | "deposits" | "withdrawals" | "openings" | "audit"

const History = ({ p, version }: { p: Profile; version: number }) => {
  const [tab, setTab] = useState<Tab>("transactions")
  const tabs: ReadonlyArray<readonly [Tab, string, number]> = [
    ["transactions", "Ledger", p.counts.transactions],
    ["deposits", "Deposits", p.counts.deposits],
    ["withdrawals", "Withdrawals", p.counts.withdrawals],
    ["openings", "Openings", p.counts.openings],
    ["audit", "Audit", p.counts.auditEntries]
  ]
  return (
    <section>
      <h2>History</h2>
      <div class="tabs" role="tablist">
        {tabs.map(([t, title, n]) => (
          <button
            key={t}
            role="tab"
            aria-selected={tab === t}
            class={tab === t ? "" : "outline secondary"}
            onClick={() => setTab(t)}
          >
            {title} ({n})
          </button>
        ))}
      </div>
      <div role="tabpanel" data-testid={`tab-${tab}`}>
        {tab === "transactions"
          ? <Paged key={tab} version={version} path={`/admin/users/${p.id}/transactions`} rows="transactions" render={Transactions} />
          : tab === "deposits"
          ? <Paged key={tab} version={version} path={`/admin/users/${p.id}/deposits`} rows="deposits" render={Deposits} />
          : tab === "withdrawals"
          ? <Paged key={tab} version={version} path={`/admin/users/${p.id}/withdrawals`} rows="withdrawals" render={Withdrawals} />
          : tab === "openings"
          ? <Paged key={tab} version={version} path={`/admin/users/${p.id}/openings`} rows="openings" render={Openings} />
          : (
            <>
              <p>
                <Link href={`/admin/audit?userId=${p.id}`}>Open in the audit log (with filters)</Link>
              </p>
              <Paged key={tab} version={version} path={`/admin/users/${p.id}/audit`} rows="entries" render={(rows: ReadonlyArray<AuditEntry>) => <AuditRows entries={rows} />} />
            </>
          )}
      </div>
    </section>
  )
}

/** One paged list of the player: `rows` is the answer's key for the rows. */
const Paged = <R,>(
  { path, rows, render, version }: {
    path: string
    rows: string
    render: (rows: ReadonlyArray<R>) => ComponentChildren
    version: number
  }
) => {
  const [page, setPage] = useState(1)
  const [loaded] = useLoad(
    () => api<Record<string, unknown> & { total: number }>(`${path}?page=${page}&limit=${PAGE}`),
    [path, page, version]
  )
  return (
    <Show loaded={loaded}>
      {(answer) => {
        const list = answer[rows] as ReadonlyArray<R>
        return (
          <>
            <Pager page={page} limit={PAGE} total={answer.total} onPage={setPage} />
            {list.length === 0 ? <p>None.</p> : <div class="overflow-auto">{render(list)}</div>}
          </>
        )
      }}
    </Show>
  )
}

interface Transaction {
  readonly id: string
  readonly type: string
  readonly amountCents: Cents
  readonly balanceAfterCents: Cents
  readonly reference: { type: string; id: string } | null
  readonly reason: string | null
  readonly createdAt: string
}

const Transactions = (rows: ReadonlyArray<Transaction>) => (
  <table data-testid="transactions" class="stack">
    <thead>
      <tr>
        <th>When</th>
        <th>Type</th>
        <th class="money">Amount</th>
        <th class="money">Balance after</th>
        <th>Refers to</th>
        <th>Reason</th>
      </tr>
    </thead>
    <tbody>
      {rows.map((t) => (
        <tr key={t.id} data-id={t.id}>
          <td data-label="When">{formatDateTime(t.createdAt)}</td>
          <td data-label="Type" data-testid="type">{t.type}</td>
          <td data-label="Amount" class="money" data-testid="amount">{formatCents(t.amountCents)}</td>
          <td data-label="Balance after" class="money">{formatCents(t.balanceAfterCents)}</td>
          <td data-label="Refers to">{t.reference === null ? "" : `${t.reference.type} ${t.reference.id}`}</td>
          <td data-label="Reason">{t.reason ?? ""}</td>
        </tr>
      ))}
    </tbody>
  </table>
)

interface Deposit {
  readonly id: string
  readonly amountCents: Cents
  readonly feeCents: Cents
  readonly method: string
  readonly status: string
  readonly createdAt: string
}

const Deposits = (rows: ReadonlyArray<Deposit>) => (
  <table data-testid="deposits" class="stack">
    <thead>
      <tr>
        <th>Created</th>
        <th class="money">Amount</th>
        <th class="money">Fee</th>
        <th>Method</th>
        <th>Status</th>
      </tr>
    </thead>
    <tbody>
      {rows.map((d) => (
        <tr key={d.id} data-id={d.id}>
          <td data-label="Created">{formatDateTime(d.createdAt)}</td>
          <td data-label="Amount" class="money">{formatCents(d.amountCents)}</td>
          <td data-label="Fee" class="money">{formatCents(d.feeCents)}</td>
          <td data-label="Method">{d.method}</td>
          <td data-label="Status" data-testid="status">{d.status}</td>
        </tr>
      ))}
    </tbody>
  </table>
)

interface Withdrawal {
  readonly id: string
  readonly amountCents: Cents
  readonly status: string
  readonly requestedAt: string
  readonly rejectionReason: string | null
  readonly pixKeyType: string
  readonly pixKey: string
  readonly payoutError: string | null
}

const Withdrawals = (rows: ReadonlyArray<Withdrawal>) => (
  <table data-testid="withdrawals" class="stack">
    <thead>
      <tr>
        <th>Requested</th>
        <th class="money">Amount</th>
        <th>PIX key</th>
        <th>Status</th>
      </tr>
    </thead>
    <tbody>
      {rows.map((w) => (
        <tr key={w.id} data-id={w.id}>
          <td data-label="Requested">{formatDateTime(w.requestedAt)}</td>
          <td data-label="Amount" class="money">{formatCents(w.amountCents)}</td>
          <td data-label="PIX key">
            <span>{w.pixKeyType} <small>{w.pixKey}</small></span>
          </td>
          <td data-label="Status" data-testid="status">
            <span>
              {w.status}
              {(w.rejectionReason ?? w.payoutError) && <small>: {w.rejectionReason ?? w.payoutError}</small>}
            </span>
          </td>
        </tr>
      ))}
    </tbody>
  </table>
)

interface Opening {
  readonly id: string
  readonly case: { id: string; name: string }
  readonly item: { name: string; rarity: string }
  readonly pricePaidCents: Cents
  readonly itemValueCents: Cents
  readonly profit: Cents
  readonly createdAt: string
}

const Openings = (rows: ReadonlyArray<Opening>) => (
  <table data-testid="openings" class="stack">
    <thead>
      <tr>
        <th>When</th>
        <th>Case</th>
        <th>Item</th>
        <th class="money">Paid</th>
        <th class="money">Item value</th>
      </tr>
    </thead>
    <tbody>
      {rows.map((o) => (
        <tr key={o.id} data-id={o.id}>
          <td data-label="When">{formatDateTime(o.createdAt)}</td>
          <td data-label="Case">{o.case.name}</td>
          <td data-label="Item">
            <span>{o.item.name} <small>{o.item.rarity}</small></span>
          </td>
          <td data-label="Paid" class="money">{formatCents(o.pricePaidCents)}</td>
          <td data-label="Item value" class="money">{formatCents(o.itemValueCents)}</td>
        </tr>
      ))}
    </tbody>
  </table>
)
