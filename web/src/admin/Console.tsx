import { useEffect, useState } from "preact/hooks"
import { currentUser, type Me, rememberReturn, SIGN_IN_URL } from "../api"
import { LanguageSwitch, Show } from "../ui"
import { useLoad } from "../useLoad"
import { Audit } from "./Audit"
import { Catalog } from "./Catalog"
import { Dashboard } from "./Dashboard"
import { Deposits } from "./Deposits"
import { navigate } from "./nav"
import { Player } from "./Player"
import { consoleText } from "./text/console"
import { Users } from "./Users"
import { Withdrawals } from "./Withdrawals"

/** What every console page gets: the administrator's 2FA code for step-up actions (empty without 2FA). */
export interface PageProps {
  readonly admin: Me
  readonly twoFactorCode: string
}

const SECTIONS = [
  { path: "/admin", key: "dashboard", Page: Dashboard },
  { path: "/admin/withdrawals", key: "withdrawals", Page: Withdrawals },
  { path: "/admin/deposits", key: "deposits", Page: Deposits },
  { path: "/admin/users", key: "users", Page: Users },
  { path: "/admin/catalog", key: "catalog", Page: Catalog },
  { path: "/admin/audit", key: "audit", Page: Audit }
] as const

/** The page at `path`: a section, or one player (`/admin/users/<id>`, under Users in the navigation). */
const route = (path: string) => {
  const section = SECTIONS.find((s) => s.path === path)
  if (section !== undefined) return { title: consoleText().sections[section.key], nav: section.path, render: (p: PageProps) => <section.Page {...p} /> }
  const player = /^\/admin\/users\/(\d+)$/.exec(path)
  if (player !== null) {
    return { title: consoleText().player, nav: "/admin/users", render: (p: PageProps) => <Player {...p} id={player[1]!} /> }
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

const SignedOut = () => {
  const m = consoleText()
  useTitle(m.signIn)
  return (
    <main class="container" data-testid="signed-out">
      <div class="toolbar">
        <h1>{m.console}</h1>
        <LanguageSwitch />
      </div>
      <p>{m.signedOutText}</p>
      {/* Sign-in lands on LOGIN_REDIRECT_URL; the start page then returns here (see returnAfterSignIn). */}
      <a role="button" href={SIGN_IN_URL} onClick={rememberReturn}>{m.signIn}</a>
    </main>
  )
}

const AdminsOnly = ({ user }: { user: Me }) => {
  const m = consoleText()
  useTitle(m.adminsOnly)
  return (
    <main class="container" data-testid="admins-only">
      <div class="toolbar">
        <h1>{m.adminsOnly}</h1>
        <LanguageSwitch />
      </div>
      <p>{m.notAdmin(user.username)}</p>
      <a href="/">{m.backHome}</a>
    </main>
  )
}

/** The tab's title: `<page> · Console`, in the current language. */
const useTitle = (title: string) =>
  useEffect(() => {
    document.title = `${title} · ${consoleText().console}`
  }, [title])

const Sections = ({ admin }: { admin: Me }) => {
  const [path, setPath] = useState(normalized(location.pathname))
  const [search, setSearch] = useState(location.search)
  const [twoFactorCode, setTwoFactorCode] = useState("")
  useEffect(() => {
    const onPop = () => (setPath(normalized(location.pathname)), setSearch(location.search))
    addEventListener("popstate", onPop)
    return () => removeEventListener("popstate", onPop)
  }, [])
  const m = consoleText()
  const page = route(path)
  useTitle(page?.title ?? m.notFound)
  const go = (event: MouseEvent, to: string) => {
    if (event.ctrlKey || event.metaKey || event.shiftKey) return
    event.preventDefault()
    navigate(to)
  }
  return (
    <>
      <header class="container">
        <nav class="console-nav" aria-label={m.navigation}>
          <ul>
            <li>
              <a href="/"><strong>{m.console}</strong></a>
            </li>
            <li>
              <LanguageSwitch />
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
                  {m.sections[s.key]}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="toolbar">
          <small>
            {admin.username} · {m.administrator}
          </small>
          {admin.twoFactorEnabled && (
            <input
              name="twoFactorCode"
              aria-label={m.twoFactorCode}
              placeholder={m.twoFactorCode}
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
          ? <p>{m.noSuchPage}</p>
          : <div key={path + search}>{page.render({ admin, twoFactorCode })}</div>}
      </main>
    </>
  )
}
