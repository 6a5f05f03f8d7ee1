import type { ComponentChildren } from "preact"
import { useState } from "preact/hooks"
import { api, errorText } from "../api"
import { formatCents, formatDateTime } from "../money"
import { ErrorNote, Pager, Show, SuccessNote, useConfirm } from "../ui"
import { useLoad } from "../useLoad"
import { AuditRows, type AuditEntry } from "./Audit"
import "./catalog.css"
import "./people.css"
import type { PageProps } from "./Console"
import { Link } from "./nav"
import {
  DEPOSIT_STATUSES,
  type DepositStatus,
  peopleText,
  TRANSACTION_TYPES,
  type TransactionType,
  WITHDRAWAL_STATUSES,
  type WithdrawalStatus
} from "./text/people"
import { playerText } from "./text/player"
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

/**
 * `/admin/users/<id>`: one player — ban, unban and adjust the balance (UserActions), the profile, the sessions
 * (revocable) and their paged, filtered history. After an action the page shows the profile and the history as the
 * API then answers them.
 */
export const Player = (props: PageProps & { id: string }) => {
  const { id, twoFactorCode } = props
  const m = playerText()
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
              <Link href="/admin/users">{m.users}</Link> ›
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

const ProfileFacts = ({ p }: { p: Profile }) => {
  const m = playerText()
  const w = peopleText()
  const { exclusion, limits } = p.responsibleGaming
  const limit = (cents: Cents | null, lost: Cents) =>
    cents === null ? m.noLossLimit(formatCents(lost)) : m.lossLimit(formatCents(cents), formatCents(lost))
  return (
    <article>
      <dl class="profile" data-testid="profile">
        <dt>{m.balance}</dt>
        <dd data-testid="player-balance">{formatCents(p.balanceCents)}</dd>
        <dt>{m.role}</dt>
        <dd>{w.role[p.role] ?? p.role}</dd>
        <dt>{m.signInId}</dt>
        <dd>{p.idpId}</dd>
        <dt>{m.twoFactor}</dt>
        <dd data-testid="player-2fa">{p.twoFactorEnabled ? w.on : w.off}</dd>
        <dt>{m.status}</dt>
        <dd data-testid="player-status" data-status={p.banned === null ? "active" : "banned"}>
          {p.banned === null ? w.active : `${w.banned(formatDateTime(p.banned.at))}${p.banned.reason ? `: ${p.banned.reason}` : ""}`}
        </dd>
        <dt>{m.joined}</dt>
        <dd>{formatDateTime(p.createdAt)}</dd>
        <dt>{m.lastActive}</dt>
        <dd>{p.lastActiveAt === null ? w.never : formatDateTime(p.lastActiveAt)}</dd>
        <dt>{m.identity}</dt>
        <dd data-testid="player-identity">
          {p.identity.status === "VERIFIED"
            ? m.verified([p.identity.fullName, p.identity.cpf].filter(Boolean).join(", CPF "))
            : m.notVerified}
        </dd>
        <dt>{m.exclusion}</dt>
        <dd data-testid="player-exclusion">
          {exclusion.excluded
            ? `${m.excluded}${exclusion.since ? m.since(formatDateTime(exclusion.since)) : ""}${
              exclusion.until ? m.until(formatDateTime(exclusion.until)) : exclusion.registryListed ? "" : m.indefinitely
            }${exclusion.registryListed ? m.registry : ""}`
            : m.none}
        </dd>
        <dt>{m.dailyLoss}</dt>
        <dd>{limit(limits.dailyLossCents, limits.usage.lossTodayCents)}</dd>
        <dt>{m.weeklyLoss}</dt>
        <dd>{limit(limits.weeklyLossCents, limits.usage.lossWeekCents)}</dd>
        <dt>{m.monthlyLoss}</dt>
        <dd>{limit(limits.monthlyLossCents, limits.usage.lossMonthCents)}</dd>
        <dt>{m.playTime}</dt>
        <dd>
          {limits.dailyPlayMinutes === null ? m.noPlayLimit : m.minutes(limits.dailyPlayMinutes)}{" "}
          {m.playedToday(limits.usage.playMinutesToday)}
        </dd>
        {limits.pending.length > 0 && (
          <>
            <dt>{m.pendingChanges}</dt>
            <dd>
              {limits.pending.map((c) =>
                m.pendingChange(
                  m.limitField[c.field] ?? c.field,
                  c.value === null
                    ? m.none
                    : c.field === "dailyPlayMinutes"
                    ? m.minutes(c.value)
                    : formatCents(c.value),
                  formatDateTime(c.effectiveAt)
                )
              ).join("; ")}
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
  const m = playerText()
  const [busy, setBusy] = useState<string | undefined>(undefined)
  const [message, setMessage] = useState<Outcome>({})
  const revoke = async (s: Session) => {
    setMessage({})
    setBusy(s.id)
    try {
      await api(`/admin/users/${userId}/sessions/${s.id}/revoke`, { method: "POST", twoFactorCode })
      setMessage({ ok: m.sessionEnded(s.id.slice(0, 8)) })
      onChange()
    } catch (error) {
      setMessage({ error: errorText(error) })
    } finally {
      setBusy(undefined)
    }
  }
  return (
    <section>
      <h2>{m.sessionsTitle}</h2>
      <SuccessNote text={message.ok} />
      <ErrorNote text={message.error} />
      {sessions.length === 0 ? <p data-testid="no-sessions">{m.noSessions}</p> : (
        <div class="overflow-auto">
          <table data-testid="sessions" class="stack">
            <thead>
              <tr>
                <th>{m.session}</th>
                <th>{m.address}</th>
                <th>{m.browser}</th>
                <th>{m.started}</th>
                <th>{m.lastActivity}</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {sessions.map((s) => (
                <tr key={s.id} data-id={s.id}>
                  <td data-label={m.session}>
                    <code title={s.id}>{s.id.slice(0, 8)}…</code>
                  </td>
                  <td data-label={m.address}>{s.ip ?? "?"}</td>
                  <td data-label={m.browser}>
                    <small>{s.userAgent ?? "?"}</small>
                  </td>
                  <td data-label={m.started}>{formatDateTime(s.createdAt)}</td>
                  <td data-label={m.lastActivity}>{formatDateTime(s.lastActivity)}</td>
                  <td data-label="">
                    <button class="outline" disabled={busy !== undefined} aria-busy={busy === s.id} onClick={() => revoke(s)}>
                      {m.revoke}
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
  const m = playerText()
  const w = peopleText()
  const [tab, setTab] = useState<Tab>("transactions")
  const tabs: ReadonlyArray<readonly [Tab, number]> = [
    ["transactions", p.counts.transactions],
    ["deposits", p.counts.deposits],
    ["withdrawals", p.counts.withdrawals],
    ["openings", p.counts.openings],
    ["audit", p.counts.auditEntries]
  ]
  const base = `/admin/users/${p.id}`
  return (
    <section>
      <h2>{m.history}</h2>
      <div class="tabs" role="tablist">
        {tabs.map(([t, n]) => (
          <button
            key={t}
            role="tab"
            aria-selected={tab === t}
            class={tab === t ? "" : "outline secondary"}
            data-tab={t}
            onClick={() => setTab(t)}
          >
            {m.tabs[t]} ({n})
          </button>
        ))}
      </div>
      <div role="tabpanel" data-testid={`tab-${tab}`}>
        {tab === "transactions"
          ? (
            <Paged
              key={tab}
              version={version}
              path={`${base}/transactions`}
              rows="transactions"
              filter={{ name: "type", label: m.type, every: m.everyType, options: TRANSACTION_TYPES, words: w.transactionType }}
              render={Transactions}
            />
          )
          : tab === "deposits"
          ? (
            <Paged
              key={tab}
              version={version}
              path={`${base}/deposits`}
              rows="deposits"
              filter={{ name: "status", label: m.status, every: w.everyStatus, options: DEPOSIT_STATUSES, words: w.depositStatus }}
              render={Deposits}
            />
          )
          : tab === "withdrawals"
          ? (
            <Paged
              key={tab}
              version={version}
              path={`${base}/withdrawals`}
              rows="withdrawals"
              filter={{
                name: "status",
                label: m.status,
                every: w.everyStatus,
                options: WITHDRAWAL_STATUSES,
                words: w.withdrawalStatus
              }}
              render={Withdrawals}
            />
          )
          : tab === "openings"
          ? <Paged key={tab} version={version} path={`${base}/openings`} rows="openings" render={Openings} />
          : (
            <>
              <p>
                <Link href={`/admin/audit?userId=${p.id}`}>{m.auditLink}</Link>
              </p>
              <Paged
                key={tab}
                version={version}
                path={`${base}/audit`}
                rows="entries"
                render={(rows: ReadonlyArray<AuditEntry>) => <AuditRows entries={rows} />}
              />
            </>
          )}
      </div>
    </section>
  )
}

/** A list's narrowing to one value of `name` (a ledger type, a status), or every value. */
interface Filter<V extends string> {
  readonly name: string
  readonly label: string
  readonly every: string
  readonly options: ReadonlyArray<V>
  readonly words: Record<V, string>
}

/** One paged list of the player, optionally filtered: `rows` is the answer's key for the rows. */
const Paged = <R, V extends string>(
  { path, rows, render, filter, version }: {
    path: string
    rows: string
    render: (rows: ReadonlyArray<R>) => ComponentChildren
    filter?: Filter<V>
    version: number
  }
) => {
  const [page, setPage] = useState(1)
  const [value, setValue] = useState<V | "">("")
  const [loaded] = useLoad(
    () =>
      api<Record<string, unknown> & { total: number }>(
        `${path}?page=${page}&limit=${PAGE}${filter && value !== "" ? `&${filter.name}=${value}` : ""}`
      ),
    [path, page, value, version]
  )
  return (
    <>
      {filter && (
        <div class="toolbar">
          <select
            name={filter.name}
            aria-label={filter.label}
            value={value}
            onChange={(e) => (setPage(1), setValue(e.currentTarget.value as V | ""))}
          >
            <option value="">{filter.every}</option>
            {filter.options.map((o) => <option key={o} value={o}>{filter.words[o]}</option>)}
          </select>
        </div>
      )}
      <Show loaded={loaded}>
        {(answer) => {
          const list = answer[rows] as ReadonlyArray<R>
          return (
            <>
              <Pager page={page} limit={PAGE} total={answer.total} onPage={setPage} />
              {list.length === 0 ? <p>{playerText().nothing}</p> : <div class="overflow-auto">{render(list)}</div>}
            </>
          )
        }}
      </Show>
    </>
  )
}

interface Transaction {
  readonly id: string
  readonly type: TransactionType
  readonly amountCents: Cents
  readonly balanceAfterCents: Cents
  readonly reference: { type: string; id: string } | null
  readonly reason: string | null
  readonly createdAt: string
}

const Transactions = (rows: ReadonlyArray<Transaction>) => {
  const m = playerText()
  const w = peopleText()
  return (
    <table data-testid="transactions" class="stack">
      <thead>
        <tr>
          <th>{m.when}</th>
          <th>{m.type}</th>
          <th class="money">{m.amount}</th>
          <th class="money">{m.balanceAfter}</th>
          <th>{m.refersTo}</th>
          <th>{m.reason}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((t) => (
          <tr key={t.id} data-id={t.id}>
            <td data-label={m.when}>{formatDateTime(t.createdAt)}</td>
            <td data-label={m.type} data-testid="type" data-type={t.type}>{w.transactionType[t.type] ?? t.type}</td>
            <td data-label={m.amount} class="money" data-testid="amount">{formatCents(t.amountCents)}</td>
            <td data-label={m.balanceAfter} class="money" data-testid="balance-after">{formatCents(t.balanceAfterCents)}</td>
            <td data-label={m.refersTo}>
              {t.reference === null ? "" : `${m.reference[t.reference.type] ?? t.reference.type} ${t.reference.id}`}
            </td>
            <td data-label={m.reason} data-testid="reason">{t.reason ?? ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

interface Deposit {
  readonly id: string
  readonly amountCents: Cents
  readonly feeCents: Cents
  readonly method: string
  readonly status: DepositStatus
  readonly createdAt: string
}

const Deposits = (rows: ReadonlyArray<Deposit>) => {
  const m = playerText()
  const w = peopleText()
  return (
    <table data-testid="deposits" class="stack">
      <thead>
        <tr>
          <th>{m.created}</th>
          <th class="money">{m.amount}</th>
          <th class="money">{m.fee}</th>
          <th>{m.method}</th>
          <th>{m.status}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((d) => (
          <tr key={d.id} data-id={d.id}>
            <td data-label={m.created}>{formatDateTime(d.createdAt)}</td>
            <td data-label={m.amount} class="money">{formatCents(d.amountCents)}</td>
            <td data-label={m.fee} class="money">{formatCents(d.feeCents)}</td>
            <td data-label={m.method}>{w.method[d.method] ?? d.method}</td>
            <td data-label={m.status} data-testid="status" data-status={d.status}>{w.depositStatus[d.status] ?? d.status}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

interface Withdrawal {
  readonly id: string
  readonly amountCents: Cents
  readonly status: WithdrawalStatus
  readonly requestedAt: string
  readonly rejectionReason: string | null
  readonly pixKeyType: string
  readonly pixKey: string
  readonly payoutError: string | null
}

const Withdrawals = (rows: ReadonlyArray<Withdrawal>) => {
  const m = playerText()
  const w = peopleText()
  return (
    <table data-testid="withdrawals" class="stack">
      <thead>
        <tr>
          <th>{m.requested}</th>
          <th class="money">{m.amount}</th>
          <th>{m.pixKey}</th>
          <th>{m.status}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.id} data-id={r.id}>
            <td data-label={m.requested}>{formatDateTime(r.requestedAt)}</td>
            <td data-label={m.amount} class="money">{formatCents(r.amountCents)}</td>
            <td data-label={m.pixKey}>
              <span>{w.pixKeyType[r.pixKeyType] ?? r.pixKeyType} <small>{r.pixKey}</small></span>
            </td>
            <td data-label={m.status} data-testid="status" data-status={r.status}>
              <span>
                {w.withdrawalStatus[r.status] ?? r.status}
                {(r.rejectionReason ?? r.payoutError) && <small>: {r.rejectionReason ?? r.payoutError}</small>}
              </span>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

interface Opening {
  readonly id: string
  readonly case: { id: string; name: string }
  readonly item: { name: string; rarity: string }
  readonly pricePaidCents: Cents
  readonly itemValueCents: Cents
  readonly profit: Cents
  readonly createdAt: string
}

const Openings = (rows: ReadonlyArray<Opening>) => {
  const m = playerText()
  return (
    <table data-testid="openings" class="stack">
      <thead>
        <tr>
          <th>{m.when}</th>
          <th>{m.case}</th>
          <th>{m.item}</th>
          <th class="money">{m.paid}</th>
          <th class="money">{m.itemValue}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((o) => (
          <tr key={o.id} data-id={o.id}>
            <td data-label={m.when}>{formatDateTime(o.createdAt)}</td>
            <td data-label={m.case}>{o.case.name}</td>
            <td data-label={m.item}>
              <span>{o.item.name} <small>{o.item.rarity}</small></span>
            </td>
            <td data-label={m.paid} class="money">{formatCents(o.pricePaidCents)}</td>
            <td data-label={m.itemValue} class="money">{formatCents(o.itemValueCents)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
