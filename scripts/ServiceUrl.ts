/**
 * Where the scripts and the benchmarks that drive a running service find it (`npm run dev:login`, `npm run bench`,
 * `bench:openings`, `bench:battles`, `bench:dashboard`): `--url` when given, else where the service says it is, as
 * it reads its environment (src/layers/AppConfig.ts): `PUBLIC_URL`, else `http://localhost:${PORT}` (PORT 3000
 * by default). Run them with the service's environment and they find it.
 *
 * When nothing answers, they print one line naming the URL that failed and what to set, not `fetch failed`.
 */

/** `PUBLIC_URL` (without a trailing slash), else `http://localhost:${PORT ?? 3000}`. */
export const serviceUrl = (env: NodeJS.ProcessEnv = process.env): string => {
  const publicUrl = env.PUBLIC_URL?.trim()
  if (publicUrl) return publicUrl.replace(/\/+$/, "")
  return `http://localhost:${env.PORT?.trim() || "3000"}`
}

/** A request that got no answer at all (nothing listening, no such host, a reset): the URL and why. */
export class Unreachable extends Error {
  constructor(readonly url: string, readonly reason: string) {
    super(`Cannot reach ${url} (${reason})`)
  }
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "no such host",
  EAI_AGAIN: "no such host",
  ECONNRESET: "connection reset",
  ETIMEDOUT: "timed out",
  UND_ERR_CONNECT_TIMEOUT: "timed out",
  UND_ERR_SOCKET: "connection closed"
}

/** Why a request got no answer, from `fetch`'s `TypeError: fetch failed` (its cause) or node:http's error. */
const reasonOf = (error: unknown): string => {
  const cause = error instanceof TypeError && error.cause !== undefined ? error.cause : error
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined
  if (code !== undefined) return REASONS[code] ?? code
  return cause instanceof Error ? cause.message : String(cause)
}

/** `fetch`, failing with `Unreachable` (naming the URL) when no answer comes. */
export const fetchAt = async (url: string, init?: RequestInit): Promise<Response> => {
  try {
    return await fetch(url, init)
  } catch (error) {
    throw new Unreachable(url, reasonOf(error))
  }
}

/** The one line to print for `error` when `base` is the service's URL: what failed and what to set. */
export const unreachableLine = (error: Unreachable, base: string): string =>
  error.url.startsWith(base)
    ? `${error.message}: is the service running there? Set PORT or PUBLIC_URL as the service has them (or pass --url)`
    : `${error.message}, where the service at ${base} sends its sign-in: its development identity provider listens on ` +
      "127.0.0.1:DEV_IDP_PORT of the service's machine"

/** Runs `main` against the service at `base`; an unreachable URL is one line on stderr and exit code 1. */
export const againstService = async (base: string, main: () => Promise<void>): Promise<void> => {
  try {
    await main()
  } catch (error) {
    if (!(error instanceof Unreachable)) throw error
    console.error(unreachableLine(error, base))
    process.exit(1)
  }
}

/** Exits with that one line unless the service at `base` answers `GET /api/health` (before a benchmark starts). */
export const expectService = (base: string): Promise<void> =>
  againstService(base, async () => {
    await (await fetchAt(`${base}/api/health`)).body?.cancel()
  })
