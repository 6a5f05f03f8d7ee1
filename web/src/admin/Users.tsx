import { useState } from "preact/hooks"
import { api } from "../api"
import { formatCents, formatDateTime } from "../money"
import { ErrorNote, Pager, Show, SuccessNote, useConfirm } from "../ui"
import { useLoad } from "../useLoad"
import "./catalog.css"
import type { PageProps } from "./Console"
import { UserLink } from "./nav"
import { peopleText } from "./text/people"
import { usersText } from "./text/users"
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

/** `/admin/users`: everyone, paged (by id, as the API orders them), narrowed by a username or idpId substring. */
export const Users = (props: PageProps) => {
  const m = usersText()
  const w = peopleText()
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
      <h1>{m.title}</h1>
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
          aria-label={m.searchLabel}
          placeholder={m.searchPlaceholder}
          maxLength={100}
          value={search}
          onInput={(e) => setSearch(e.currentTarget.value)}
        />
        <button type="submit">{m.search}</button>
      </form>
      {dialog}
      <SuccessNote text={message.ok} />
      <ErrorNote text={message.error} />
      <Show loaded={users}>
        {({ users, total }) =>
          users.length === 0 ? <p>{m.none}</p> : (
            <div class="overflow-auto">
              <Pager page={page} limit={LIMIT} total={total} onPage={setPage} />
              <table data-testid="users" class="stack">
                <thead>
                  <tr>
                    <th>{m.user}</th>
                    <th>{m.role}</th>
                    <th class="money">{m.balance}</th>
                    <th>{m.twoFactor}</th>
                    <th class="money">{m.sessions}</th>
                    <th>{m.lastActive}</th>
                    <th>{m.status}</th>
                    <th>{m.actions}</th>
                  </tr>
                </thead>
                <tbody>
                  {users.map((u) => (
                    <tr key={u.id} data-id={u.id} data-username={u.username}>
                      <td data-label={m.user}>
                        <span>
                          <UserLink user={u} /> <small>{u.idpId}</small>
                        </span>
                      </td>
                      <td data-label={m.role}>{w.role[u.role] ?? u.role}</td>
                      <td data-label={m.balance} class="money" data-testid="balance">{formatCents(u.balanceCents)}</td>
                      <td data-label={m.twoFactor} data-testid="two-factor">{u.twoFactorEnabled ? w.on : w.off}</td>
                      <td data-label={m.sessions} class="money" data-testid="sessions">{u.activeSessions}</td>
                      <td data-label={m.lastActive}>{u.lastActiveAt === null ? w.never : formatDateTime(u.lastActiveAt)}</td>
                      <td data-label={m.status} data-testid="status" data-status={u.bannedAt === null ? "active" : "banned"}>
                        {u.bannedAt === null ? w.active : w.banned(formatDateTime(u.bannedAt))}
                      </td>
                      <td data-label={m.actions}>
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
