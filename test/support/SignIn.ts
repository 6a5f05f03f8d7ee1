/** Signing in through the public API, as a browser would, against the identity provider the test app has. */
import { Effect } from "effect"
import type { TestClient, TestResponse } from "./TestApp"

/** The value a response sets for cookie `name`, if it sets one. */
export const cookieOf = (response: TestResponse, name: string): string | undefined =>
  response.headers.getSetCookie().map((c) => c.split(";")[0]!).find((c) => c.startsWith(`${name}=`))?.slice(name.length + 1)

/** The full Set-Cookie line of cookie `name`. */
export const setCookieLine = (response: TestResponse, name: string): string | undefined =>
  response.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))

export interface SignedIn {
  readonly callback: TestResponse
  readonly sessionId: string
  /** Headers that present the session as a bearer credential. */
  readonly auth: Record<string, string>
}

/** GET /auth/idp/login, then the callback with the state cookie; with the test provider `login` is the idpId. */
export const signIn = (client: TestClient, login: string, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const start = yield* client.get("/api/auth/idp/login", headers)
    if (start.status !== 302) throw new Error(`login answered ${start.status}: ${JSON.stringify(start.body)}`)
    const state = new URL(start.headers.get("location")!).searchParams.get("state")!
    const callback = yield* client.get(
      `/api/auth/idp/callback?code=${encodeURIComponent(login)}&state=${state}`,
      { ...headers, cookie: `oidcState=${cookieOf(start, "oidcState")}` }
    )
    const sessionId = cookieOf(callback, "sessionId") ?? ""
    return { callback, sessionId, auth: { ...headers, authorization: `Bearer ${sessionId}` } } satisfies SignedIn
  })
