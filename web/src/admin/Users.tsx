import { useState } from "preact/hooks"
import { api, errorText } from "../api"
import { formatCents, formatDateTime, parseReais } from "../money"
import { ErrorNote, Pager, Show, SuccessNote, useConfirm } from "../ui"
import { useLoad } from "../useLoad"
import type { PageProps } from "./Console"
import { UserLink } from "./nav"

interface User {
  readonly id: string
  readonly username: string
  readonly idpId: string
  readonly role: "USER" | "ADMIN"
  readonly balanceCents: number
  readonly bannedAt: string | null
  readonly createdAt: string
  readonly lastActiveAt: string | null
  readonly twoFactorEnabled: boolean
  readonly activeSessions: number
}

const LIMIT = 50

type Editing = { readonly id: string; readonly action: "ban" | "adjust" } | undefined

export const Users = ({ admin, twoFactorCode }: PageProps) => {
  const [search, setSearch] = useState("")
  const [query, setQuery] = useState("")
  const [page, setPage] = useState(1)
  const [users, reload] = useLoad(
    () =>
      api<{ users: ReadonlyArray<User>; total: number }>(
        `/admin/users?page=${page}&limit=${LIMIT}${query === "" ? "" : `&search=${encodeURIComponent(query)}`}`
      ),
    [query, page]
  )
  const [dialog, ask] = useConfirm()
  const [editing, setEditing] = useState<Editing>(undefined)
  const [message, setMessage] = useState<{ ok?: string; error?: string }>({})

  const run = async (action: () => Promise<string>) => {
    setMessage({})
    try {
      const ok = await action()
      setEditing(undefined)
      setMessage({ ok })
      reload()
    } catch (error) {
      setMessage({ error: errorText(error) })
    }
  }
  const ban = async (u: User, reason: string) => {
    const yes = await ask({
      title: `Ban ${u.username}?`,
      body: (
        <p>
          <strong>{u.username}</strong> ({u.idpId}, balance {formatCents(u.balanceCents)}) can no longer sign in, and
          their {u.activeSessions} active session(s) end now. Reason: <em>{reason}</em>
        </p>
      ),
      confirm: `Ban ${u.username}`
    })
    if (!yes) return
    return run(async () => {
      const r = await api<{ sessionsRevoked: number }>(`/admin/users/${u.id}/ban`, { method: "POST", body: { reason }, twoFactorCode })
      return `${u.username} banned; ${r.sessionsRevoked} session(s) ended`
    })
  }
  const unban = (u: User) =>
    run(async () => {
      await api(`/admin/users/${u.id}/unban`, { method: "POST", twoFactorCode })
      return `${u.username} unbanned`
    })
  const adjust = async (u: User, amountCents: bigint, reason: string) => {
    const yes = await ask({
      title: amountCents > 0n ? `Credit ${u.username}?` : `Debit ${u.username}?`,
      body: (
        <p>
          {amountCents > 0n ? "Credit" : "Debit"} <strong>{formatCents(amountCents > 0n ? amountCents : -amountCents)}</strong>
          {amountCents > 0n ? " to " : " from "}
          <strong>{u.username}</strong>: balance {formatCents(u.balanceCents)} →{" "}
          {formatCents(BigInt(u.balanceCents) + amountCents)}. Reason: <em>{reason}</em>
        </p>
      ),
      confirm: `Adjust by ${formatCents(amountCents)}`
    })
    if (!yes) return
    return run(async () => {
      const r = await api<{ balanceCents: number }>(`/admin/users/${u.id}/adjust-balance`, {
        method: "POST",
        body: { amountCents: Number(amountCents), reason },
        twoFactorCode
      })
      return `${u.username}'s balance is now ${formatCents(r.balanceCents)}`
    })
  }

  return (
    <>
      <h1>Users</h1>
      <form
        class="toolbar"
        role="search"
        onSubmit={(e) => {
          e.preventDefault()
          setPage(1)
          setQuery(search.trim())
        }}
      >
        <input
          type="search"
          name="search"
          aria-label="Search users"
          placeholder="Username or idpId"
          value={search}
          onInput={(e) => setSearch(e.currentTarget.value)}
        />
        <button type="submit">Search</button>
      </form>
      {dialog}
      <SuccessNote text={message.ok} />
      <ErrorNote text={message.error} />
      <Show loaded={users}>
        {({ users, total }) =>
          users.length === 0 ? <p>No users found.</p> : (
            <div class="overflow-auto">
              <Pager page={page} limit={LIMIT} total={total} onPage={setPage} />
              <table data-testid="users">
                <thead>
                  <tr>
                    <th>User</th>
                    <th>Role</th>
                    <th class="money">Balance</th>
                    <th>2FA</th>
                    <th class="money">Sessions</th>
                    <th>Last active</th>
                    <th>Status</th>
                    <th>Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {users.map((u) => (
                    <tr key={u.id} data-id={u.id} data-username={u.username}>
                      <td>
                        <UserLink user={u} /> <small>{u.idpId}</small>
                      </td>
                      <td>{u.role}</td>
                      <td class="money" data-testid="balance">{formatCents(u.balanceCents)}</td>
                      <td data-testid="two-factor">{u.twoFactorEnabled ? "on" : "off"}</td>
                      <td class="money" data-testid="sessions">{u.activeSessions}</td>
                      <td>{u.lastActiveAt === null ? "never" : formatDateTime(u.lastActiveAt)}</td>
                      <td data-testid="status">{u.bannedAt === null ? "active" : `banned ${formatDateTime(u.bannedAt)}`}</td>
                      <td>
                        {editing?.id === u.id && editing.action === "ban"
                          ? <ReasonForm label="Ban" onSubmit={(reason) => ban(u, reason)} onCancel={() => setEditing(undefined)} />
                          : editing?.id === u.id && editing.action === "adjust"
                          ? (
                            <AdjustForm
                              onSubmit={(cents, reason) => adjust(u, cents, reason)}
                              onCancel={() => setEditing(undefined)}
                            />
                          )
                          : (
                            <div class="actions">
                              {u.bannedAt !== null
                                ? <button class="outline" onClick={() => unban(u)}>Unban</button>
                                : u.id !== admin.id && (
                                  <button class="outline" onClick={() => setEditing({ id: u.id, action: "ban" })}>Ban…</button>
                                )}
                              <button class="outline secondary" onClick={() => setEditing({ id: u.id, action: "adjust" })}>
                                Adjust balance…
                              </button>
                            </div>
                          )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
      </Show>
    </>
  )
}

const ReasonForm = (
  { label, onSubmit, onCancel }: { label: string; onSubmit: (reason: string) => Promise<void>; onCancel: () => void }
) => {
  const [reason, setReason] = useState("")
  const [busy, setBusy] = useState(false)
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        setBusy(true)
        onSubmit(reason).finally(() => setBusy(false))
      }}
    >
      <input name="reason" aria-label="Reason" placeholder="Reason" required value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      <button type="submit" disabled={busy}>{label}</button>
      <button type="button" class="outline secondary" onClick={onCancel}>Cancel</button>
    </form>
  )
}

const AdjustForm = (
  { onSubmit, onCancel }: { onSubmit: (cents: bigint, reason: string) => Promise<void>; onCancel: () => void }
) => {
  const [amount, setAmount] = useState("")
  const [reason, setReason] = useState("")
  const [busy, setBusy] = useState(false)
  const cents = parseReais(amount)
  const invalid = amount.trim() !== "" && (cents === undefined || cents === 0n)
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        if (cents === undefined || cents === 0n) return
        setBusy(true)
        onSubmit(cents, reason).finally(() => setBusy(false))
      }}
    >
      <input
        name="amount"
        aria-label="Amount in R$ (negative to debit)"
        placeholder="R$ (e.g. 50,00 or -10,00)"
        required
        aria-invalid={invalid ? true : undefined}
        value={amount}
        onInput={(e) => setAmount(e.currentTarget.value)}
      />
      <input name="reason" aria-label="Reason" placeholder="Reason" required value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      <button type="submit" disabled={busy || invalid}>
        {cents !== undefined && cents !== 0n ? `Adjust by ${formatCents(cents)}` : "Adjust"}
      </button>
      <button type="button" class="outline secondary" onClick={onCancel}>Cancel</button>
    </form>
  )
}
