/**
 * The harness of the browser tests (test/e2e/Console*.test.ts): the service built and started as `npm start`
 * runs it (a process on free ports, embedded defaults or DATABASE_URL/REDIS_URL), headless Chromium (Debian's
 * `chromium`, through playwright-core), and the helpers a scenario uses: the API with a session, sign-in
 * through the development identity provider, the confirmation dialog, screenshots at 1280x800 and 390x844
 * (test/e2e/screenshots; nothing wider than the phone) and the page's console errors.
 *
 * Without /usr/bin/chromium these tests fail, unless SKIP_E2E=1 skips them on purpose.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, Exit, Redacted, Scope } from "effect"
import { spawn, type ChildProcess } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { authenticator } from "otplib"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { freshPostgresUrl, usingRealPostgres } from "./TestDatabase"
import { removeRedisKeys } from "./TestStores"
import { freePort, serviceArgs } from "./ServiceProcess"

const CHROMIUM = "/usr/bin/chromium"
const SCREENSHOTS = join(import.meta.dirname, "..", "e2e", "screenshots")
const skipped = process.env.SKIP_E2E === "1"
export const ADMIN = "e2e-admin"
export const ADMIN_WITH_2FA = "e2e-admin-2fa"
/** Another administrator who turns 2FA on, so each scenario that needs one knows its secret. */
export const CATALOG_ADMIN_WITH_2FA = "e2e-admin-2fa-catalog"

/** An amount as the pages show it in `locale` ("R$ 1.234,56" in pt-BR, "R$1,234.56" in English). */
export const money = (cents: number, locale: "pt-BR" | "en" = "pt-BR") =>
  new Intl.NumberFormat(locale, { style: "currency", currency: "BRL" }).format(cents / 100)

/**
 * UTC, or São Paulo's zone when UTC's midnight is less than two hours ahead (or one behind): the dashboard's
 * scenario reads "every account was created today", which a run across the business day's midnight breaks.
 */
const zoneAwayFromMidnight = (now = new Date()) => {
  const hourIn = (timeZone: string) =>
    Number(new Intl.DateTimeFormat("en", { hour: "numeric", hourCycle: "h23", timeZone }).format(now))
  return hourIn("UTC") >= 1 && hourIn("UTC") <= 21 ? "UTC" : "America/Sao_Paulo"
}

/** The service the helpers speak to (see `switchService`). */
export let base = ""
let browser: Browser | undefined
const scope = Effect.runSync(Scope.make())

/** Points the helpers at another service (a test's own); returns the one before, to switch back. */
export const switchService = (url: string): string => {
  const previous = base
  base = url
  return previous
}

export interface RunningService {
  readonly url: string
  /** Its own PostgreSQL database, for a test that seeds rows by SQL; undefined on the embedded database. */
  readonly databaseUrl: string | undefined
  /** Everything it printed so far. */
  readonly output: () => string
  readonly stop: () => Promise<void>
}

/**
 * `dist/main.mjs` as a process on free ports, with its own data directory, Redis key prefix and (on
 * PostgreSQL) fresh database, plus `env`; resolves once /api/ready answers. A port is free when it is
 * picked and bound seconds later, once the database is ready: a process that took it meanwhile (the other
 * test worker's connections come from the same range) makes the service exit saying so, and it is started
 * again on other ports, at most three times in all.
 */
export const startService = async (env: Record<string, string> = {}): Promise<RunningService> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServiceOnce(env)
    } catch (error) {
      if (attempt === 3 || !String(error).includes("is already in use")) throw error
    }
  }
}

const startServiceOnce = async (env: Record<string, string>): Promise<RunningService> => {
  const databaseUrl = usingRealPostgres
    ? Redacted.value(await Effect.runPromise(Scope.extend(freshPostgresUrl, scope)))
    : undefined
  const dataDir = mkdtempSync(join(tmpdir(), "gp-e2e-"))
  const prefix = `gp-e2e:${randomUUID()}:`
  const [port, idpPort] = await Promise.all([freePort(), freePort()])
  const url = `http://localhost:${port}`
  const childEnv: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    REDIS_KEY_PREFIX: prefix,
    PORT: String(port),
    PUBLIC_URL: url,
    DEV_IDP_PORT: String(idpPort),
    DATA_DIR: dataDir,
    ADMIN_IDP_IDS: `${ADMIN},${ADMIN_WITH_2FA},${CATALOG_ADMIN_WITH_2FA}`,
    RATE_LIMIT_GLOBAL: "1000000/60000",
    RATE_LIMIT_AUTH: "1000000/60000",
    RATE_LIMIT_WITHDRAWAL: "1000000/60000",
    ...env
  }
  if (databaseUrl === undefined) delete childEnv.DATABASE_URL
  if (childEnv.REDIS_URL === undefined) delete childEnv.REDIS_URL
  const child: ChildProcess = spawn(process.execPath, serviceArgs, { env: childEnv, stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const stop = async () => {
    child.kill("SIGTERM")
    if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve))
    if (process.env.REDIS_URL !== undefined) await removeRedisKeys(process.env.REDIS_URL, prefix)
    rmSync(dataDir, { recursive: true, force: true })
  }
  for (let i = 0; ; i++) {
    const ready = await fetch(`${url}/api/ready`).then((r) => r.status === 200, () => false)
    if (ready) break
    if (i > 600 || child.exitCode !== null) {
      await stop()
      throw new Error(`the service did not start:\n${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { url, databaseUrl, output: () => output, stop }
}

/**
 * Headless Chromium as this machine runs it: without the background networking that the closed network
 * refuses. playwright-core gives each launch a fresh temporary profile (--user-data-dir) of its own.
 */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })

/**
 * `tests` against one service and one Chromium, started before and stopped after. Without Chromium the
 * suite fails, saying how to install it, unless SKIP_E2E=1.
 */
export const describeInBrowser = (title: string, tests: () => void) => {
  if (!skipped && !existsSync(CHROMIUM)) {
    describe(title, () => {
      it("needs Chromium", () => {
        throw new Error(
          `Chromium is not installed at ${CHROMIUM}: apt-get install -y chromium (or set SKIP_E2E=1 to skip the browser tests)`
        )
      })
    })
    return
  }
  describe.skipIf(skipped)(title, () => {
    let service: RunningService | undefined
    beforeAll(async () => {
      mkdirSync(SCREENSHOTS, { recursive: true })
      service = await startService({ BUSINESS_TIMEZONE: zoneAwayFromMidnight() })
      base = service.url
      browser = await launchChromium()
    }, 120_000)

    afterAll(async () => {
      await browser?.close()
      await service?.stop()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }, 60_000)

    tests()
  })
}

/** The API with a session (as `Authorization: Bearer`), for setting up and checking what the pages did. */
export const call = async (session: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${session}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
}
export const ok = async (session: string, method: string, path: string, body?: unknown) => {
  const answer = await call(session, method, path, body)
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`)
  return answer.body
}

/**
 * Console errors of our pages. The browser logs every 4xx answer as one; those a scenario provokes on
 * purpose are not errors of the page: `/api/auth/me` answering 401 when signed out, and `expected`.
 */
export const watch = (page: Page, errors: Array<string>, expected: ReadonlyArray<RegExp> = []) => {
  page.on("pageerror", (error) => errors.push(`${page.url()}: ${error.message}`))
  page.on("console", (message) => {
    if (message.type() !== "error") return
    const source = message.location().url
    if (!source.startsWith(base)) return // the identity provider's own pages
    if (source === `${base}/api/auth/me` && message.text().includes("401")) return
    if (expected.some((pattern) => pattern.test(source.slice(base.length)))) return
    errors.push(`${page.url()}: ${message.text()} (${source})`)
  })
}

/** Both screenshots of the page as it is; on the phone, nothing wider than the screen. */
export const photograph = async (page: Page, name: string) => {
  await page.setViewportSize({ width: 1280, height: 800 })
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-1280x800.png`), fullPage: true })
  await page.setViewportSize({ width: 390, height: 844 })
  await page.waitForTimeout(100)
  const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth")
  expect(overflow, `${name} scrolls sideways at 390x844`).toBeLessThanOrEqual(0)
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-390x844.png`), fullPage: true })
  await page.setViewportSize({ width: 1280, height: 800 })
}

/** Through the sign-in button and the development provider's form, back to `/`. */
export const signIn = async (page: Page, login: string) => {
  await page.goto(`${base}/`)
  await page.getByTestId("sign-in").click()
  await page.locator("input[name=login]").fill(login)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.waitForURL(`${base}/`)
  await expect.poll(() => page.getByTestId("username").textContent()).toBe(login)
}

/** The confirmation dialog of a money or ban action: it names `mentions`; answered with `button` (or cancelled). */
export const answerConfirmation = async (page: Page, mentions: ReadonlyArray<string>, button: string | "Cancel") => {
  const dialog = page.getByTestId("confirm")
  await dialog.waitFor()
  const text = await dialog.textContent()
  for (const m of mentions) expect(text).toContain(m)
  await dialog.getByRole("button", { name: button, exact: true }).click()
  await dialog.waitFor({ state: "detached" })
}

/**
 * Turns 2FA on for the user of `session` and returns its secret. Turned on with the previous step's code (still
 * accepted), so the current step's code is fresh for the step-up that follows; away from a step's edge, so that
 * code does not age out on the way.
 */
export const turnOnTwoFactor = async (session: string): Promise<string> => {
  const { secret } = await ok(session, "POST", "/api/auth/2fa/generate")
  if (Date.now() % 30_000 > 28_000) await new Promise((resolve) => setTimeout(resolve, 2_500))
  await ok(session, "POST", "/api/auth/2fa/enable", { code: authenticator.clone({ epoch: Date.now() - 30_000 }).generate(secret) })
  return secret as string
}

/** A fresh browser profile (no cookies, no storage) with the browser's language `locale`. */
export const newContext = async (locale = "pt-BR"): Promise<BrowserContext> =>
  browser!.newContext({ viewport: { width: 1280, height: 800 }, locale, timezoneId: "UTC" })
