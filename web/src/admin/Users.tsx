import { useState } from "preact/hooks"
import { api } from "../api"
import { formatCents, formatDateTime } from "../money"
import { ErrorNote, Pager, Show, SuccessNote, useConfirm } from "../ui"
import { useLoad } from "../useLoad"
import "./catalog.css"
import type { PageProps } from "./Console"
import { UserLink } from "./nav"
import { type Outcome, UserActions } from "./UserActions"

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

export const Users = (props: PageProps) => {
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
  const [message, setMessage] = useState<Outcome>({})
  const done = (outcome: Outcome) => {
    setMessage(outcome)
    if (outcome.ok !== undefined) reload()
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
              <table data-testid="users" class="stack">
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
                      <td data-label="User">
                        <span><UserLink user={u} /> <small>{u.idpId}</small></span>
                      </td>
                      <td data-label="Role">{u.role}</td>
                      <td data-label="Balance" class="money" data-testid="balance">{formatCents(u.balanceCents)}</td>
                      <td data-label="2FA" data-testid="two-factor">{u.twoFactorEnabled ? "on" : "off"}</td>
                      <td data-label="Sessions" class="money" data-testid="sessions">{u.activeSessions}</td>
                      <td data-label="Last active">{u.lastActiveAt === null ? "never" : formatDateTime(u.lastActiveAt)}</td>
                      <td data-label="Status" data-testid="status">{u.bannedAt === null ? "active" : `banned ${formatDateTime(u.bannedAt)}`}</td>
                      <td data-label="Actions">
                        <UserActions
                          {...props}
                          person={{ ...u, banned: u.bannedAt !== null }}
                          ask={ask}
                          onDone={done}
                        />
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
