import type { ComponentChildren } from "preact"

/** Moves to another console page without reloading (the console listens to popstate). */
export const navigate = (to: string) => {
  history.pushState(null, "", to)
  dispatchEvent(new PopStateEvent("popstate"))
}

/** A link inside the console: switches pages in place; with a modifier key, the browser's own (a new tab). */
export const Link = (
  { href, children, ...rest }: { href: string; children: ComponentChildren; "data-testid"?: string; translate?: boolean }
) => (
  <a
    href={href}
    {...rest}
    onClick={(event) => {
      if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return
      event.preventDefault()
      navigate(href)
    }}
  >
    {children}
  </a>
)

export const playerPath = (id: string) => `/admin/users/${id}`

/** A user's name, linking to their player page. */
export const UserLink = ({ user }: { user: { readonly id: string; readonly username: string } }) => (
  <Link href={playerPath(user.id)} data-testid="user-link" translate={false}>{user.username}</Link>
)
