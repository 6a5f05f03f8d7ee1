/**
 * The service as a process (src/main.ts, docs/rules.md#shutdown): SIGTERM while openings are in flight. Every opening
 * the service started either completed and its answer was delivered, or left no trace; the process
 * exits 0 after finishing them.
 */
import { PGlite } from "@electric-sql/pglite"
import { expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { devSessionAt } from "./support/DevSignIn"
import { freshPostgresUrl, usingRealPostgres } from "./support/TestDatabase"
import { removeRedisKeys } from "./support/TestStores"
import { freePort, serviceArgs, untilReady } from "./support/ServiceProcess"

it.scoped("SIGTERM during openings: each one completed with its answer delivered, or left no trace; exit 0", () =>
  Effect.gen(function*() {
    const databaseUrl = usingRealPostgres ? Redacted.value(yield* freshPostgresUrl) : undefined
    const dataDir = mkdtempSync(join(tmpdir(), "gp-shutdown-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
    const [port, idpPort] = yield* Effect.promise(() => Promise.all([freePort(), freePort()]))
    const base = `http://127.0.0.1:${port}`
    const redisPrefix = `shutdown-${port}:`
    const redisUrl = process.env.REDIS_URL
    if (redisUrl !== undefined) yield* Effect.addFinalizer(() => Effect.promise(() => removeRedisKeys(redisUrl, redisPrefix)))
    const env: Record<string, string | undefined> = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL: process.env.REDIS_URL,
      REDIS_KEY_PREFIX: redisPrefix,
      PORT: String(port),
      PUBLIC_URL: base,
      DEV_IDP_PORT: String(idpPort),
      DATA_DIR: dataDir,
      ADMIN_IDP_IDS: "shutdown-admin",
      RATE_LIMIT_GLOBAL: "1000000/60000",
      RATE_LIMIT_AUTH: "1000000/60000",
      RATE_LIMIT_CASE_OPEN: "1000000/60000"
    }
    if (databaseUrl === undefined) delete env.DATABASE_URL
    if (env.REDIS_URL === undefined) delete env.REDIS_URL
    const service = spawn(process.execPath, serviceArgs, { env, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    service.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
    service.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const exited = new Promise<number | null>((resolve) => service.once("exit", (code) => resolve(code)))
    yield* Effect.addFinalizer(() => Effect.sync(() => service.kill("SIGKILL")))

    const outcome = yield* Effect.promise(async () => {
      await untilReady(base)
      const admin = await devSessionAt(base, "shutdown-admin")
      const cases = (await (await fetch(`${base}/api/cases`, { headers: { authorization: `Bearer ${admin}` } })).json()) as {
        cases: Array<{ id: string; priceCents: number }>
      }
      const kase = cases.cases[0]!
      const players = await Promise.all(Array.from({ length: 6 }, async (_, i) => {
        const session = await devSessionAt(base, `draining-${i}`)
        const me = (await (await fetch(`${base}/api/auth/me`, { headers: { authorization: `Bearer ${session}` } })).json()) as { id: string }
        await fetch(`${base}/api/admin/users/${me.id}/adjust-balance`, {
          method: "POST",
          headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
          body: JSON.stringify({ amountCents: 1_000_000, reason: "shutdown test" })
        })
        return { session, id: me.id }
      }))
      let firstAnswer: () => void = () => {}
      const answered = new Promise<void>((resolve) => (firstAnswer = resolve))
      const requests = players.flatMap((player) =>
        Array.from({ length: 8 }, async () => {
          try {
            const response = await fetch(`${base}/api/cases/${kase.id}/open`, {
              method: "POST",
              headers: { authorization: `Bearer ${player.session}` }
            })
            const body = (await response.json()) as { openingId?: string }
            firstAnswer()
            return { player: player.id, status: response.status, openingId: body.openingId }
          } catch {
            return { player: player.id, status: 0, openingId: undefined }
          }
        })
      )
      await answered
      service.kill("SIGTERM")
      return { answers: await Promise.all(requests), code: await exited, players, price: kase.priceCents }
    })
    // The service's output is in the failure message, should the exit not be clean.
    expect({ code: outcome.code, shutdown: output.includes("Shutting down") }, output).toEqual({ code: 0, shutdown: true })
    const delivered = outcome.answers.filter((a) => a.status === 200)
    // Answers are either a delivered 200 or a refused/cut connection; never a half-done opening.
    expect(outcome.answers.every((a) => a.status === 200 || a.status === 0 || a.status === 503)).toBe(true)
    expect(delivered.length).toBeGreaterThan(0)

    const query = async (text: string) => {
      if (databaseUrl !== undefined) {
        const client = new pg.Client({ connectionString: databaseUrl })
        await client.connect()
        try {
          return (await client.query(text)).rows
        } finally {
          await client.end()
        }
      }
      const db = new PGlite(join(dataDir, "pglite"))
      try {
        return (await db.query<Record<string, unknown>>(text)).rows
      } finally {
        await db.close()
      }
    }
    const stored = yield* Effect.promise(() => query("SELECT id::text AS id FROM case_openings"))
    expect(stored.map((row) => row.id).sort()).toEqual(delivered.map((a) => a.openingId).sort())
    const ledger = yield* Effect.promise(() =>
      query(`SELECT u.id::text AS id, u.balance_cents::text AS balance, COALESCE(sum(t.amount_cents), 0)::text AS movements
             FROM users u LEFT JOIN transactions t ON t.user_id = u.id GROUP BY u.id, u.balance_cents`)
    )
    expect(ledger.filter((row) => row.balance !== row.movements)).toEqual([])
    for (const player of outcome.players) {
      const opened = delivered.filter((a) => a.player === player.id).length
      expect(ledger.find((row) => row.id === player.id)?.balance).toBe(String(1_000_000 - opened * outcome.price))
    }
  }), { timeout: 180_000 })
