import { useEffect, useState } from "preact/hooks"
import { currentUser, type Me, rememberReturn, SIGN_IN_URL } from "../api"
import { Show } from "../ui"
import { useLoad } from "../useLoad"
import { Audit } from "./Audit"
import { Catalog } from "./Catalog"
import { Dashboard } from "./Dashboard"
import { Deposits } from "./Deposits"
import { navigate } from "./nav"
import { Player } from "./Player"
import { Users } from "./Users"
import { Withdrawals } from "./Withdrawals"

/** What every console page gets: the administrator's 2FA code for step-up actions (empty without 2FA). */
export interface PageProps {
  readonly admin: Me
  readonly twoFactorCode: string
}

const SECTIONS = [
  { path: "/admin", title: "Dashboard", Page: Dashboard },
  { path: "/admin/withdrawals", title: "Withdrawals", Page: Withdrawals },
  { path: "/admin/deposits", title: "Deposits", Page: Deposits },
  { path: "/admin/users", title: "Users", Page: Users },
  { path: "/admin/catalog", title: "Catalog", Page: Catalog },
  { path: "/admin/audit", title: "Audit log", Page: Audit }
] as const

/** The page at `path`: a section, or one player (`/admin/users/<id>`, under Users in the navigation). */
const route = (path: string) => {
  const section = SECTIONS.find((s) => s.path === path)
  if (section !== undefined) return { title: section.title, nav: section.path, render: (p: PageProps) => <section.Page {...p} /> }
  const player = /^\/admin\/users\/(\d+)$/.exec(path)
  if (player !== null) {
    return { title: "Player", nav: "/admin/users", render: (p: PageProps) => <Player {...p} id={player[1]!} /> }
  }
  return undefined
}

const normalized = (path: string) => path.replace(/\/+$/, "") || "/admin"

/** `/admin/...`: the sections in one page, switched without reloading. */
export const Console = () => {
  const [me] = useLoad(currentUser, [])
  return (
    <Show loaded={me}>
      {(user) => user === null ? <SignedOut /> : user.role !== "ADMIN" ? <AdminsOnly user={user} /> : <Sections admin={user} />}
    </Show>
  )
}

const SignedOut = () => (
  <main class="container" data-testid="signed-out">
    <h1>Console</h1>
    <p>The console is for administrators. Sign in first.</p>
    {/* Sign-in lands on LOGIN_REDIRECT_URL; the start page then returns here (see returnAfterSignIn). */}
    <a role="button" href={SIGN_IN_URL} onClick={rememberReturn}>Sign in</a>
  </main>
)

const AdminsOnly = ({ user }: { user: Me }) => (
  <main class="container" data-testid="admins-only">
    <h1>Administrators only</h1>
    <p>
      You are signed in as <strong>{user.username}</strong>, who is not an administrator. The console is for the
      people who run the platform.
    </p>
    <a href="/">Back to the start page</a>
  </main>
)

const Sections = ({ admin }: { admin: Me }) => {
  const [path, setPath] = useState(normalized(location.pathname))
  const [search, setSearch] = useState(location.search)
  const [twoFactorCode, setTwoFactorCode] = useState("")
  useEffect(() => {
    const onPop = () => (setPath(normalized(location.pathname)), setSearch(location.search))
    addEventListener("popstate", onPop)
    return () => removeEventListener("popstate", onPop)
  }, [])
  const page = route(path)
  useEffect(() => {
    document.title = `${page?.title ?? "Not found"} · Console`
  }, [page?.title])
  const go = (event: MouseEvent, to: string) => {
    if (event.ctrlKey || event.metaKey || event.shiftKey) return
    event.preventDefault()
    navigate(to)
  }
  return (
    <>
      <header class="container">
        <nav class="console-nav">
          <ul>
            <li>
              <a href="/"><strong>Console</strong></a>
            </li>
          </ul>
          <ul>
            {SECTIONS.map((s) => (
              <li key={s.path}>
                <a
                  href={s.path}
                  aria-current={s.path === page?.nav ? "page" : undefined}
                  onClick={(e) => go(e, s.path)}
                >
                  {s.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="toolbar">
          <small>
            {admin.username} · administrator
          </small>
          {admin.twoFactorEnabled && (
            <input
              name="twoFactorCode"
              aria-label="2FA code for protected actions"
              placeholder="2FA code for protected actions"
              inputMode="numeric"
              autoComplete="one-time-code"
              value={twoFactorCode}
              onInput={(e) => setTwoFactorCode(e.currentTarget.value)}
            />
          )}
        </div>
      </header>
      <main class="container">
        {page === undefined
          ? <p>No such page. Choose a section above.</p>
          : <div key={path + search}>{page.render({ admin, twoFactorCode })}</div>}
      </main>
    </>
  )
}
