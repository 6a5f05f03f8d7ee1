/**
 * README's walkthrough against a started service (src/main.ts, the demo catalog loaded at start): every
 * demo item's and case's `imageUrl` answers an SVG through the service as served (the demo images sit in
 * front of the API with the pages, docs/rules.md#demo-images), and a case opened over HTTP is verified by
 * `npm run verify` fetching it by id (docs/fairness.md#a-verifier-you-can-run).
 */
import { expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { devSessionAt } from "./support/DevSignIn"
import { freshPostgresUrl, usingRealPostgres } from "./support/TestDatabase"
import { removeRedisKeys } from "./support/TestStores"
import { freePort, serviceArgs, untilReady } from "./support/ServiceProcess"

const verify = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number; out: string }>((resolve) =>
    execFile(process.execPath, ["scripts/verify.mjs", ...args], { env: { ...process.env, SESSION: undefined } }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : (error.code as number), out: `${stdout}${stderr}` }))
  )

it.scoped("a started service: every demo image is an SVG; a case opened is verified by npm run verify", () =>
  Effect.gen(function*() {
    const databaseUrl = usingRealPostgres ? Redacted.value(yield* freshPostgresUrl) : undefined
    const dataDir = mkdtempSync(join(tmpdir(), "gp-walkthrough-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
    const [port, idpPort] = yield* Effect.promise(() => Promise.all([freePort(), freePort()]))
    const base = `http://127.0.0.1:${port}`
    const redisPrefix = `walkthrough-${port}:`
    const redisUrl = process.env.REDIS_URL
    if (redisUrl !== undefined) yield* Effect.addFinalizer(() => Effect.promise(() => removeRedisKeys(redisUrl, redisPrefix)))
    const env: Record<string, string | undefined> = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_KEY_PREFIX: redisPrefix,
      PORT: String(port),
      PUBLIC_URL: base,
      DEV_IDP_PORT: String(idpPort),
      DATA_DIR: dataDir,
      ADMIN_IDP_IDS: "walkthrough-admin"
    }
    if (databaseUrl === undefined) delete env.DATABASE_URL
    const service = spawn(process.execPath, serviceArgs, { env, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    service.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
    service.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
    yield* Effect.addFinalizer(() => Effect.sync(() => service.kill("SIGKILL")))

    yield* Effect.promise(async () => {
      await untilReady(base).catch((error) => Promise.reject(new Error(`${error}\n${output}`)))
      const admin = { authorization: `Bearer ${await devSessionAt(base, "walkthrough-admin")}` }
      const json = async (path: string, headers: Record<string, string> = admin, init: RequestInit = {}) => {
        const response = await fetch(`${base}${path}`, { ...init, headers: { ...headers, ...init.headers } })
        expect(response.status, path).toBe(200)
        return (await response.json()) as any
      }
      const items = (await json("/api/admin/items?limit=100")).items as Array<{ name: string; imageUrl: string }>
      const cases = (await json("/api/admin/cases?limit=100")).cases as Array<{ id: string; slug: string; imageUrl: string }>
      expect(items.length).toBeGreaterThanOrEqual(40)
      expect(cases.length).toBe(6)
      const shown = [
        ...items.map((item) => item.imageUrl),
        ...cases.map((kase) => kase.imageUrl),
        // What players see: the public list and a case's items.
        ...(await json("/api/cases?limit=100")).cases.flatMap((kase: any) => [kase.imageUrl, kase.bestItem?.imageUrl]),
        ...(await json(`/api/cases/${cases[0]!.id}`)).items.map((item: any) => item.imageUrl)
      ].filter((url) => url !== undefined)
      for (const imageUrl of new Set(shown)) {
        expect(imageUrl).toMatch(/^\/images\/demo\/(items|cases)\/[a-z0-9-]+\.svg$/)
        const answer = await fetch(`${base}${imageUrl}`)
        expect(answer.status, imageUrl).toBe(200)
        expect(answer.headers.get("content-type")).toBe("image/svg+xml; charset=utf-8")
        expect(answer.headers.get("content-security-policy")).toContain("default-src 'none'")
        expect(answer.headers.get("x-content-type-options")).toBe("nosniff")
        expect(answer.headers.get("cache-control")).toContain("max-age=31536000")
        expect(answer.headers.get("x-ratelimit-limit"), "outside the API's rate limits").toBeNull()
        expect(await answer.text()).toMatch(/^<svg [\s\S]*<\/svg>$/)
      }
      const unknown = await fetch(`${base}/images/demo/items/not-a-demo-item.svg`)
      expect(unknown.status).toBe(404)
      expect(unknown.headers.get("content-type")).toContain("json")

      // README: open a case and verify it.
      const session = await devSessionAt(base, "walkthrough-player")
      const player = { authorization: `Bearer ${session}` }
      const me = await json("/api/auth/me", player)
      await json(`/api/admin/users/${me.id}/adjust-balance`, admin, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ amountCents: 100_000, reason: "walkthrough" })
      })
      const committed = await json("/api/provably-fair/client-seed", player)
      const starter = cases.find((kase) => kase.slug === "starter")!
      const opened = await json(`/api/cases/${starter.id}/open`, player, { method: "POST" })
      expect((await json(`/api/cases/openings/${opened.openingId}/verify`, player)).isValid).toBe(true)
      const verified = await verify([
        opened.openingId,
        "--session",
        session,
        "--url",
        base,
        "--hash",
        committed.nextServerSeedHash,
        "--client-seed",
        committed.clientSeed,
        "--nonce",
        String(committed.nonce + 1)
      ])
      expect(verified.code, verified.out).toBe(0)
      expect(verified.out).toMatch(/^valid: opening \d+, roll \d+/m)
    })
  }), { timeout: 120_000 })
