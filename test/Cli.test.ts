/**
 * The operator commands (src/cli.ts) against the embedded database the service holds
 * (docs/rules.md#embedded-database-owner): while `npm start` runs on a DATA_DIR, every command (reading ones too)
 * refuses in one line naming the service's pid and what to do, reports nothing and changes nothing; a
 * second service on the same DATA_DIR refuses to start. With the service stopped the same commands work
 * and their changes are in the database.
 */
import { PGlite } from "@electric-sql/pglite"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { LOCK_FILE } from "../src/layers/DataDirLock"
import { devSessionAt } from "./support/DevSignIn"
import { usingRealPostgres } from "./support/TestDatabase"
import { freePort, runCli, runServiceToEnd, serviceArgs } from "./support/ServiceProcess"

const untilReady = async (base: string, exited: Promise<unknown>) => {
  let gone = false
  void exited.then(() => (gone = true))
  for (let i = 0; i < 1800 && !gone; i++) {
    try {
      if ((await fetch(`${base}/api/ready`)).status === 200) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(gone ? "the service exited before it was ready" : "the service did not become ready")
}



/** Statements on the embedded database, run in order with the service stopped; the rows of each. */
const query = async (dataDir: string, ...texts: ReadonlyArray<string>) => {
  const db = new PGlite(join(dataDir, "pglite"))
  try {
    const results: Array<Array<Record<string, unknown>>> = []
    for (const text of texts) results.push((await db.query<Record<string, unknown>>(text)).rows)
    return results
  } finally {
    await db.close()
  }
}

/** Every command that opens the database, reading ones included: the embedded database has one owner. */
const COMMANDS = [
  ["grant-admin", "bob"],
  ["seed"],
  ["migrate"],
  ["migrate", "status"],
  ["users", "show", "bob"],
  ["admins", "list"],
  ["admins", "grant", "bob"],
  ["admins", "revoke", "bob"],
  ["ledger", "check"],
  ["sessions", "revoke", "bob"]
] as const

it.scoped.skipIf(usingRealPostgres)(
  "while the service holds the embedded database each command refuses in one line and changes nothing; stopped, they work",
  () =>
    Effect.gen(function*() {
      const dataDir = mkdtempSync(join(tmpdir(), "gp-cli-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
      const [port, idpPort, otherPort, otherIdpPort] = yield* Effect.promise(() =>
        Promise.all([freePort(), freePort(), freePort(), freePort()])
      )
      const base = `http://127.0.0.1:${port}`
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        PORT: String(port),
        PUBLIC_URL: base,
        DEV_IDP_PORT: String(idpPort),
        DATA_DIR: dataDir
      }
      delete env.DATABASE_URL
      delete env.REDIS_URL
      // Its own process group, so that the finalizer stops whatever it started.
      const service = spawn(process.execPath, serviceArgs, {
        env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      service.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
      service.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
      const exited = new Promise<number | null>((resolve) => service.once("exit", (code) => resolve(code)))
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          try {
            process.kill(-service.pid!, "SIGKILL")
          } catch {
            // already gone
          }
        })
      )
      const pid = service.pid!

      yield* Effect.promise(async () => {
        await untilReady(base, exited).catch((error) => {
          throw new Error(`${error}\n${output}`)
        })
        await devSessionAt(base, "bob")
      })
      expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), "utf8"))).toMatchObject({ pid, holder: "service" })

      const refusals = yield* Effect.promise(() =>
        Promise.all([
          ...COMMANDS.map((command) => runCli(env, ...command)),
          runServiceToEnd({ ...env, PORT: String(otherPort), DEV_IDP_PORT: String(otherIdpPort) })
        ])
      )
      const inUse = `The embedded database in ${dataDir} is in use by`
      for (const [i, command] of COMMANDS.entries()) {
        const refused = refusals[i]!
        expect({ command, code: refused.code, stdout: refused.stdout, stderr: refused.stderr.trimEnd().split("\n") }).toEqual({
          command,
          code: 75,
          stdout: "",
          stderr: [expect.stringMatching(`^${inUse} the service \\(pid ${pid}\\): stop it first`)]
        })
      }
      expect(refusals[0]!.stderr).toContain("ADMIN_IDP_IDS")
      expect(refusals[1]!.stderr).toContain("use the admin API while it runs (POST /api/admin/items, POST /api/admin/cases)")
      expect(refusals[4]!.stderr).toContain("use the admin API while it runs (GET /api/admin/users/:id)")
      const secondService = refusals[COMMANDS.length]!
      expect(secondService.code).toBe(1)
      expect(secondService.stderr.trimEnd()).toBe(
        `Cannot start: ${inUse} another service (pid ${pid}): stop it first, or give this one another DATA_DIR.`
      )

      // The service is unharmed and still holds the database.
      expect((yield* Effect.promise(() => fetch(`${base}/api/ready`))).status).toBe(200)
      expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), "utf8"))).toMatchObject({ pid })
      process.kill(-pid, "SIGTERM")
      expect(yield* Effect.promise(() => exited), output).toBe(0)
      expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false)

      // Nothing was changed: bob is still a user. The demo case `starter` is removed, for seed to add back.
      const [before] = yield* Effect.promise(() =>
        query(dataDir, "SELECT role FROM users WHERE idp_id = 'bob'", "DELETE FROM cases WHERE slug = 'starter'")
      )
      expect(before).toEqual([{ role: "USER" }])

      const granted = yield* Effect.promise(() => runCli(env, "grant-admin", "bob"))
      expect({ code: granted.code, stderr: granted.stderr }).toEqual({ code: 0, stderr: "" })
      expect(granted.stdout).toMatch(/^User \d+ \(bob, idpId bob\) is now an administrator$/m)
      const seeded = yield* Effect.promise(() => runCli(env, "seed"))
      expect({ code: seeded.code, stderr: seeded.stderr }).toEqual({ code: 0, stderr: "" })
      expect(seeded.stdout).toContain("Demo catalog: 0 items and 1 cases added")
      expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false)

      const after = yield* Effect.promise(() =>
        query(
          dataDir,
          "SELECT role FROM users WHERE idp_id = 'bob'",
          "SELECT count(*)::int AS n FROM cases WHERE slug = 'starter'"
        )
      )
      expect(after).toEqual([[{ role: "ADMIN" }], [{ n: 1 }]])
    }),
  { timeout: 300_000 }
)
