/**
 * The public HTTP API, called from the page with the session cookie (same origin only). Requests
 * with a body are JSON, as the API requires; an error is shown as the API words it.
 */
import { common } from "./text/common"

export interface FieldError {
  readonly field: string
  readonly message: string
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | undefined,
    readonly fields: ReadonlyArray<FieldError>
  ) {
    super(message)
  }

  /** The message and each field's problem, e.g. `Validation failed: reason: must not be empty`. */
  describe(): string {
    return [this.message, ...this.fields.map((f) => `${f.field}: ${f.message}`)].join("; ")
  }
}

interface Options {
  readonly method?: "GET" | "POST" | "PUT" | "DELETE"
  readonly body?: unknown
  /** The administrator's current 2FA code, for step-up actions (docs/rules.md#admin-step-up). */
  readonly twoFactorCode?: string
}

export const api = async <A>(path: string, options: Options = {}): Promise<A> => {
  const headers: Record<string, string> = { accept: "application/json" }
  if (options.body !== undefined) headers["content-type"] = "application/json"
  const code = options.twoFactorCode?.trim()
  if (code) headers["x-2fa-code"] = code
  let response: Response
  try {
    response = await fetch(`/api${path}`, {
      method: options.method ?? "GET",
      headers,
      credentials: "same-origin",
      body: options.body === undefined ? undefined : JSON.stringify(options.body)
    })
  } catch {
    throw new ApiError(0, common().unreachable, undefined, [])
  }
  const text = await response.text()
  const json = text === "" ? undefined : safeParse(text)
  if (response.ok) return json as A
  const body = (json ?? {}) as { message?: unknown; error?: unknown; errors?: unknown }
  throw new ApiError(
    response.status,
    typeof body.message === "string" ? body.message : `${response.status} ${response.statusText}`,
    typeof body.error === "string" ? body.error : undefined,
    Array.isArray(body.errors) ? (body.errors as Array<FieldError>) : []
  )
}

const safeParse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export const errorText = (error: unknown): string =>
  error instanceof ApiError ? error.describe() : error instanceof Error ? error.message : String(error)

export type Role = "USER" | "ADMIN"

export interface Me {
  readonly id: string
  readonly username: string
  readonly idpId: string
  readonly role: Role
  readonly balanceCents: number
  readonly twoFactorEnabled: boolean
}

/** The signed-in user, or null when there is no (valid) session. */
export const currentUser = async (): Promise<Me | null> => {
  try {
    return await api<Me>("/auth/me")
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null
    throw error
  }
}

export const SIGN_IN_URL = "/api/auth/idp/login"
export const API_REFERENCE_URL = "/api/docs"

/**
 * Where to go back to after signing in. The sign-in callback always lands on LOGIN_REDIRECT_URL (the server
 * validates nothing else), so the console keeps its own address in this tab's sessionStorage before leaving.
 */
const RETURN_KEY = "returnTo"

/** Only a console address of this site: never another origin, never a protocol-relative `//host`. */
const isConsolePath = (path: string) => /^\/admin(\/[A-Za-z0-9_\-/]*)?(\?[^#\s]*)?$/.test(path)

export const rememberReturn = () => {
  const here = location.pathname + location.search
  if (isConsolePath(here)) sessionStorage.setItem(RETURN_KEY, here)
}

export const forgetReturn = () => sessionStorage.removeItem(RETURN_KEY)

/** Signed in at the start page with a remembered console address: go there (once). True when leaving. */
export const returnAfterSignIn = (): boolean => {
  const to = sessionStorage.getItem(RETURN_KEY)
  sessionStorage.removeItem(RETURN_KEY)
  if (to === null || !isConsolePath(to)) return false
  location.replace(to)
  return true
}
