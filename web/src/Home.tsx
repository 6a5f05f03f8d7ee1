import { useEffect, useState } from "preact/hooks"
import { api, API_REFERENCE_URL, currentUser, errorText, forgetReturn, returnAfterSignIn, SIGN_IN_URL } from "./api"
import { formatCents } from "./money"
import { home } from "./text/home"
import { ErrorNote, LanguageSwitch, Show } from "./ui"
import { useLoad } from "./useLoad"

/** `/`: what the service is; signed in, who you are and your balance. */
export const Home = () => {
  const [me] = useLoad(currentUser, [])
  const m = home()
  useEffect(() => {
    document.title = m.documentTitle
  }, [m])
  // Sign-in started from a console page lands here (LOGIN_REDIRECT_URL): back to that page.
  useEffect(() => {
    if (me.state === "ready" && me.value !== null) returnAfterSignIn()
  }, [me])
  return (
    <main class="container home">
      <div class="toolbar home-top">
        <LanguageSwitch />
      </div>
      <hgroup>
        <h1>{m.title}</h1>
        <p>{m.about}</p>
      </hgroup>
      <Show loaded={me}>
        {(user) =>
          user === null
            ? (
              <article>
                <p>{m.signInFirst}</p>
                <a role="button" href={SIGN_IN_URL} data-testid="sign-in" onClick={forgetReturn}>{m.signIn}</a>
              </article>
            )
            : (
              <article data-testid="signed-in">
                <header>
                  {m.signedInAs} <strong data-testid="username">{user.username}</strong>
                  {user.role === "ADMIN" ? m.administrator : ""}
                </header>
                <p>
                  {m.balance} <strong data-testid="balance">{formatCents(user.balanceCents)}</strong>
                </p>
                <nav>
                  <ul>
                    {user.role === "ADMIN" && (
                      <li>
                        <a role="button" href="/admin" data-testid="console-link">{m.openConsole}</a>
                      </li>
                    )}
                    <li>
                      <a href={API_REFERENCE_URL}>{m.apiReference}</a>
                    </li>
                    <li>
                      <SignOut />
                    </li>
                  </ul>
                </nav>
              </article>
            )}
      </Show>
      <footer>
        <small>
          <a href={API_REFERENCE_URL}>{m.apiReference}</a> · <a href="/api/docs-json">{m.openApi}</a>
        </small>
      </footer>
    </main>
  )
}

const SignOut = () => {
  const [error, setError] = useState<string | undefined>(undefined)
  const signOut = () =>
    api("/auth/logout", { method: "POST" }).then(() => location.assign("/"), (e) => setError(errorText(e)))
  return (
    <>
      <button class="outline secondary" onClick={signOut}>{home().signOut}</button>
      <ErrorNote text={error} />
    </>
  )
}
