import { useEffect, useState } from "preact/hooks"
import { api, API_REFERENCE_URL, currentUser, errorText, forgetReturn, returnAfterSignIn, SIGN_IN_URL } from "./api"
import { formatCents } from "./money"
import { ErrorNote, Show } from "./ui"
import { useLoad } from "./useLoad"

/** `/`: what the service is; signed in, who you are and your balance. */
export const Home = () => {
  const [me] = useLoad(currentUser, [])
  // Sign-in started from a console page lands here (LOGIN_REDIRECT_URL): back to that page.
  useEffect(() => {
    if (me.state === "ready" && me.value !== null) returnAfterSignIn()
  }, [me])
  return (
    <main class="container home">
      <hgroup>
        <h1>Game Platform</h1>
        <p>
          The backend of a gaming platform for the Brazilian market: provably fair case openings, upgrades, battles,
          raffles, PIX deposits and withdrawals. This page is its front door; players use the platform through its API.
        </p>
      </hgroup>
      <Show loaded={me}>
        {(user) =>
          user === null
            ? (
              <article>
                <p>Sign in to see your balance; administrators also get the console.</p>
                <a role="button" href={SIGN_IN_URL} data-testid="sign-in" onClick={forgetReturn}>Sign in</a>
              </article>
            )
            : (
              <article data-testid="signed-in">
                <header>
                  Signed in as <strong data-testid="username">{user.username}</strong>
                  {user.role === "ADMIN" ? " (administrator)" : ""}
                </header>
                <p>
                  Balance: <strong data-testid="balance">{formatCents(user.balanceCents)}</strong>
                </p>
                <nav>
                  <ul>
                    {user.role === "ADMIN" && (
                      <li>
                        <a role="button" href="/admin" data-testid="console-link">Open the console</a>
                      </li>
                    )}
                    <li>
                      <a href={API_REFERENCE_URL}>API reference</a>
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
          <a href={API_REFERENCE_URL}>API reference</a> · <a href="/api/docs-json">OpenAPI 3.1</a>
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
      <button class="outline secondary" onClick={signOut}>Sign out</button>
      <ErrorNote text={error} />
    </>
  )
}
