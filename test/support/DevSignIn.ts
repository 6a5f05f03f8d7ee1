/**
 * Plays the browser at the embedded development identity provider: plain `fetch` with a tiny cookie
 * jar, following redirects by hand and submitting the HTML forms it is shown. A request that gets no answer fails
 * with `Unreachable`, naming its URL (scripts/ServiceUrl.ts).
 */
import { fetchAt } from "../../scripts/ServiceUrl"
import { CALLBACK_PATH } from "../../src/layers/IdentityProvider"

const MAX_STEPS = 10

/** One host's cookies, as a browser keeps them between sign-ins; paths are ignored (one sign-in at a time per jar). */
export type CookieJar = ReturnType<typeof makeCookieJar>

export const makeCookieJar = () => {
  const cookies = new Map<string, string>()
  return {
    store: (response: Response) => {
      for (const line of response.headers.getSetCookie()) {
        const [pair = "", ...attributes] = line.split(";").map((part) => part.trim())
        const at = pair.indexOf("=")
        const name = pair.slice(0, at)
        const expired = attributes.some((a) =>
          /^max-age=0$/i.test(a) || (/^expires=/i.test(a) && Date.parse(a.slice(8)) <= Date.now())
        )
        if (expired) cookies.delete(name)
        else cookies.set(name, pair.slice(at + 1))
      }
    },
    header: () => [...cookies].map(([name, value]) => `${name}=${value}`).join("; ")
  }
}

const attribute = (tag: string, name: string): string | undefined =>
  new RegExp(`\\s${name}="([^"]*)"`, "i").exec(tag)?.[1]?.replace(/&amp;/g, "&")

/** The form to submit on a page: the one with a `login` field, else the first; its fields filled as a browser would. */
const formOf = (html: string, login: string): { action: string; body: URLSearchParams } => {
  const forms = [...html.matchAll(/<form\b[^>]*>[\s\S]*?<\/form>/gi)].map((m) => m[0])
  const form = forms.find((f) => /<input\b[^>]*\sname="login"/i.test(f)) ?? forms[0]
  if (form === undefined) throw new Error(`no form on the page:\n${html.slice(0, 500)}`)
  const body = new URLSearchParams()
  for (const [input] of form.matchAll(/<input\b[^>]*>/gi)) {
    const name = attribute(input, "name")
    if (name !== undefined) body.set(name, name === "login" ? login : attribute(input, "value") ?? "")
  }
  return { action: attribute(form.slice(0, form.indexOf(">") + 1), "action") ?? "", body }
}

/**
 * From an authorization URL to the callback the provider sends the browser back to, signing in as
 * `login`. Returns that callback's URL (`.../api/auth/idp/callback?code=...&state=...`) without requesting it.
 * A fresh browser each time, unless `jar` carries the cookies of an earlier sign-in.
 */
export const signInAtDevProvider = async (
  authorizationUrl: string,
  login: string,
  jar: CookieJar = makeCookieJar()
): Promise<string> => {
  let request: { url: string; init: RequestInit } = { url: authorizationUrl, init: {} }
  for (let step = 0; step < MAX_STEPS; step++) {
    const response = await fetchAt(request.url, {
      ...request.init,
      redirect: "manual",
      headers: { ...request.init.headers as Record<string, string>, cookie: jar.header() }
    })
    jar.store(response)
    const location = response.headers.get("location")
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel()
      const next = new URL(location, request.url)
      if (next.pathname === CALLBACK_PATH) return next.href
      request = { url: next.href, init: {} }
      continue
    }
    const html = await response.text()
    if (response.status !== 200) throw new Error(`${request.url} answered ${response.status}: ${html.slice(0, 500)}`)
    const form = formOf(html, login)
    request = {
      url: new URL(form.action, request.url).href,
      init: { method: "POST", body: form.body.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } }
    }
  }
  throw new Error(`no callback after ${MAX_STEPS} steps`)
}

/**
 * A session id for `login` at a running service whose identity provider is the embedded development
 * one: the whole browser flow (login redirect, provider form, callback with the state cookie).
 */
export const devSessionAt = async (baseUrl: string, login: string): Promise<string> => {
  const start = await fetchAt(`${baseUrl}/api/auth/idp/login`, { redirect: "manual" })
  const location = start.headers.get("location")
  const state = start.headers.getSetCookie().find((c) => c.startsWith("oidcState="))?.split(";")[0]
  if (location === null || state === undefined) {
    throw new Error(`${baseUrl} did not start a sign-in (status ${start.status})`)
  }
  const callback = new URL(await signInAtDevProvider(location, login))
  const done = await fetchAt(`${baseUrl}${callback.pathname}${callback.search}`, {
    redirect: "manual",
    headers: { cookie: state }
  })
  const cookie = done.headers.getSetCookie().find((c) => c.startsWith("sessionId="))
  if (cookie === undefined) throw new Error(`sign-in of ${login} failed: ${done.status} ${await done.text()}`)
  return cookie.split(";")[0]!.slice("sessionId=".length)
}
