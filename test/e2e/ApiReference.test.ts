/**
 * The API reference at /api/docs in headless Chromium (Debian's `chromium`, through playwright-core)
 * with no network but this machine (docs/rules.md#api-reference): the service started as a process
 * (src/main.ts, embedded defaults), every request to another host aborted. The reference renders its
 * operations, no request fails, nothing is asked of another host and the page logs no console error;
 * its script comes from this origin with a long cache, outside the rate limits.
 *
 * Without /usr/bin/chromium these tests fail, unless SKIP_E2E=1 skips them on purpose.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { spawn, type ChildProcess } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser } from "playwright-core"
import { launchChromium } from "../support/ConsoleBrowser"
import { freePort, serviceArgs } from "../support/ServiceProcess"

const CHROMIUM = "/usr/bin/chromium"
const skipped = process.env.SKIP_E2E === "1"
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"])

let base = ""
let service: ChildProcess | undefined
let output = ""
let browser: Browser | undefined
let dataDir = ""

if (!skipped && !existsSync(CHROMIUM)) {
  describe("the API reference in a browser", () => {
    it("needs Chromium", () => {
      throw new Error(
        `Chromium is not installed at ${CHROMIUM}: apt-get install -y chromium (or set SKIP_E2E=1 to skip the browser tests)`
      )
    })
  })
} else {
  describe.skipIf(skipped)("the API reference in a browser", () => {
    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), "gp-e2e-reference-"))
      const [port, idpPort] = await Promise.all([freePort(), freePort()])
      base = `http://localhost:${port}`
      // The reference needs no store: the embedded database, this process's memory.
      const env: Record<string, string | undefined> = {
        ...process.env,
        PORT: String(port),
        PUBLIC_URL: base,
        DEV_IDP_PORT: String(idpPort),
        DATA_DIR: dataDir
      }
      delete env.DATABASE_URL
      delete env.REDIS_URL
      service = spawn(process.execPath, serviceArgs, { env, stdio: ["ignore", "pipe", "pipe"] })
      service.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
      service.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
      for (let i = 0; ; i++) {
        const ready = await fetch(`${base}/api/ready`).then((r) => r.status === 200, () => false)
        if (ready) break
        if (i > 900 || service.exitCode !== null) throw new Error(`the service did not start:\n${output}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      browser = await launchChromium()
    }, 120_000)

    afterAll(async () => {
      await browser?.close()
      service?.kill("SIGTERM")
      if (service !== undefined && service.exitCode === null) {
        await new Promise((resolve) => service!.once("exit", resolve))
      }
      if (dataDir !== "") rmSync(dataDir, { recursive: true, force: true })
    }, 60_000)

    it("renders offline: only this origin is asked, no request fails, no console error", async () => {
      const context = await browser!.newContext({ viewport: { width: 1280, height: 800 } })
      const elsewhere: Array<string> = []
      await context.route("**/*", (route) => {
        const url = new URL(route.request().url())
        if (LOCAL_HOSTS.has(url.hostname)) return route.continue()
        elsewhere.push(url.href)
        return route.abort()
      })
      const page = await context.newPage()
      const failed: Array<string> = []
      const errors: Array<string> = []
      const requested: Array<string> = []
      page.on("request", (request) => requested.push(request.url()))
      page.on("requestfailed", (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`))
      page.on("pageerror", (error) => errors.push(error.message))
      page.on("console", (message) => {
        if (message.type() === "error") errors.push(`${message.text()} (${message.location().url})`)
      })

      const answer = await page.goto(`${base}/api/docs`)
      expect(answer?.status()).toBe(200)
      // The tags start folded: the sidebar opens "openings" and the reference shows its operations.
      await page.getByText("Liveness: the process is serving requests").first().waitFor({ timeout: 30_000 })
      await page.getByText("openings", { exact: true }).first().click()
      await page.getByRole("heading", { name: "Open a case" }).waitFor({ timeout: 15_000 })
      await page.waitForLoadState("networkidle", { timeout: 15_000 })

      expect(elsewhere).toEqual([])
      expect(failed).toEqual([])
      expect(errors).toEqual([])
      expect(requested.every((url) => url.startsWith(`${base}/`)), requested.join("\n")).toBe(true)
      // Scalar's default fonts are off: the system's, none loaded from anywhere.
      expect(await page.evaluate<number>("[...document.fonts].filter((font) => font.status !== 'unloaded').length")).toBe(0)
      await context.close()
    }, 90_000)

    it("the page's policy allows this origin only; its script is served from here, cached, outside the rate limits", async () => {
      const page = await fetch(`${base}/api/docs`)
      const policy = page.headers.get("content-security-policy") ?? ""
      expect(policy).toContain("script-src 'self' 'wasm-unsafe-eval';")
      expect(policy).toContain("font-src 'self';")
      expect(policy).toContain(`connect-src 'self' ${base};`)
      expect(page.headers.get("x-ratelimit-limit")).not.toBeNull()
      const html = await page.text()
      const sources = [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]*)"/g)].map((match) => match[1])
      expect(sources).toEqual(["/favicon.svg", expect.stringMatching(/^\/assets\/scalar-api-reference-[\w-]{12}\.js$/)])

      const script = await fetch(`${base}${sources[1]}`)
      expect(script.status).toBe(200)
      expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
      expect(script.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
      expect(script.headers.get("content-encoding")).toBe("gzip")
      expect(script.headers.get("x-ratelimit-limit")).toBeNull()
      expect(await script.text()).toContain("@scalar/api-reference")
    }, 30_000)
  })
}
