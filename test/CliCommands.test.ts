/**
 * The operator commands (src/cli.ts) run as `npm run cli` runs them, on the database the test run uses (the
 * embedded one in a DATA_DIR of its own, or a fresh PostgreSQL database with DATABASE_URL; Redis with REDIS_URL):
 * migrate and migrate status on a fresh and a migrated database, MIGRATE_ON_START=false refusing with a pending
 * migration, users show, admins list/grant/revoke (and grant-admin), sessions revoke, and ledger check on a healthy
 * and a deliberately broken ledger. The refusals while the service holds the embedded database: test/Cli.test.ts.
 */
import { PGlite } from "@electric-sql/pglite"
import { expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { AppConfig } from "../src/layers/AppConfig"
import { DatabaseLive } from "../src/layers/Database"
import { migrationsDirectory } from "../src/layers/Migrations"
import { Randomness } from "../src/layers/Randomness"
import { Stores } from "../src/layers/stores/Stores"
import { singleNode } from "../src/layers/stores/RedisTarget"
import { Sessions } from "../src/services/identity/Sessions"
import { Users } from "../src/services/identity/Users"
import { testConfig } from "./support/TestApp"
import { freshPostgresUrl, usingRealPostgres } from "./support/TestDatabase"
import { removeRedisKeys, usingRealRedis } from "./support/TestStores"
import { freePort, runCli, runServiceToEnd } from "./support/ServiceProcess"



const files = readdirSync(migrationsDirectory).filter((name) => /^\d{4}_[\w-]+\.sql$/.test(name)).sort()
const sha256 = (file: string) => createHash("sha256").update(readFileSync(join(migrationsDirectory, file))).digest("hex")

it.scopedLive("each operator command on the test run's database, with its exit code and --json", () =>
  Effect.gen(function*() {
    const dataDir = mkdtempSync(join(tmpdir(), "gp-cli-commands-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
    const prefix = `gp-test:${randomUUID()}:`
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, REDIS_KEY_PREFIX: prefix }
    delete env.DATABASE_URL
    delete env.REDIS_URL
    const databaseUrl = usingRealPostgres ? Option.some(yield* freshPostgresUrl) : Option.none<Redacted.Redacted>()
    if (Option.isSome(databaseUrl)) env.DATABASE_URL = Redacted.value(databaseUrl.value)
    if (usingRealRedis) {
      env.REDIS_URL = process.env.REDIS_URL
      yield* Effect.addFinalizer(() => Effect.promise(() => removeRedisKeys(process.env.REDIS_URL!, prefix)))
    }

    /** Statements in order, each one's rows; with no command running (the embedded database has one owner). */
    const query = (...texts: ReadonlyArray<string>) =>
      Effect.promise(async () => {
        const results: Array<Array<Record<string, unknown>>> = []
        if (Option.isSome(databaseUrl)) {
          const client = new pg.Client({ connectionString: Redacted.value(databaseUrl.value) })
          await client.connect()
          try {
            for (const text of texts) results.push((await client.query(text)).rows)
          } finally {
            await client.end()
          }
        } else {
          const db = new PGlite(join(dataDir, "pglite"))
          try {
            for (const text of texts) results.push((await db.query<Record<string, unknown>>(text)).rows)
          } finally {
            await db.close()
          }
        }
        return results
      })
    const cli = (...args: ReadonlyArray<string>) => Effect.promise(() => runCli(env, ...args))
    const cliJson = (...args: ReadonlyArray<string>) =>
      Effect.map(cli(...args, "--json"), (run) => {
        expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 0, stderr: "" })
        return JSON.parse(run.stdout)
      })

    // A fresh database: everything pending, nothing applied.
    const fresh = yield* cliJson("migrate", "status")
    expect(fresh).toEqual({
      checksumsStored: false,
      applied: [],
      pending: files.map((file) => ({ id: Number(file.slice(0, 4)), name: file.slice(5, -4), file, sha256: sha256(file) }))
    })
    const migrated = yield* cliJson("migrate")
    expect(migrated.applied.map((m: { file: string }) => m.file)).toEqual(files)
    const again = yield* cli("migrate")
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: "" })
    expect(again.stdout).toContain(`Nothing to apply: the database is at ${files.at(-1)!.slice(0, -4)}`)
    const status = yield* cliJson("migrate", "status")
    expect(status.pending).toEqual([])
    expect(status.applied.map((m: { file: string; sha256: string; renamed: boolean }) => [m.file, m.sha256, m.renamed]))
      .toEqual(files.map((file) => [file, sha256(file), false]))
    const statusText = yield* cli("migrate", "status")
    expect(statusText.code).toBe(0)
    expect(statusText.stdout).toContain(`Applied (${files.length}):`)
    expect(statusText.stdout).toContain("Pending (0): none")
    expect(statusText.stdout).toContain("the migrations table stores none, so a file changed since it was applied cannot be flagged")

    // Two users and a healthy ledger: alice funded by an adjustment, and a confirmed deposit credited once.
    yield* query(
      `INSERT INTO users (idp_id, username, balance_cents) VALUES ('alice', 'alice', 7000), ('bob', 'bob', 0)`,
      `INSERT INTO transactions (user_id, type, amount_cents, balance_after_cents, counterparty, reason)
       SELECT id, 'ADMIN_ADJUSTMENT', 5000, 5000, 'HOUSE', 'test funds' FROM users WHERE idp_id = 'alice'`,
      `INSERT INTO deposits (user_id, amount_cents, method, status, external_id, expires_at, confirmed_at, qr_code,
                             qr_code_text, created_at, updated_at)
       SELECT id, 2000, 'PIX', 'CONFIRMED', 'ext-1', now(), now(), 'qr', 'qr', now(), now() FROM users WHERE idp_id = 'alice'`,
      `INSERT INTO transactions (user_id, type, amount_cents, balance_after_cents, counterparty, reference_type, reference_id)
       SELECT d.user_id, 'DEPOSIT', 2000, 7000, 'EXTERNAL', 'DEPOSIT', d.id FROM deposits d WHERE external_id = 'ext-1'`
    )
    const [[alice], [bob]] = yield* query(
      "SELECT id::text AS id FROM users WHERE idp_id = 'alice'",
      "SELECT id::text AS id FROM users WHERE idp_id = 'bob'"
    )
    const aliceId = alice!.id as string
    const bobId = bob!.id as string

    const healthy = yield* cli("ledger", "check")
    expect({ code: healthy.code, stderr: healthy.stderr }).toEqual({ code: 0, stderr: "" })
    expect(healthy.stdout).toContain("Ledger check passed")

    // users show, by idpId and by id.
    const shown = yield* cliJson("users", "show", "alice")
    expect(shown).toMatchObject({
      id: aliceId,
      username: "alice",
      idpId: "alice",
      role: "USER",
      balanceCents: 7000,
      twoFactorEnabled: false,
      banned: null,
      sessions: usingRealRedis ? 0 : null
    })
    const shownText = yield* cli("users", "show", aliceId)
    expect(shownText.code).toBe(0)
    expect(shownText.stdout).toContain(`User ${aliceId} (alice, idpId alice)`)
    expect(shownText.stdout).toMatch(/balance\s+7000 cents/)
    const missing = yield* cli("users", "show", "nobody")
    expect({ code: missing.code, stdout: missing.stdout.includes("nobody"), stderr: missing.stderr.trim() })
      .toEqual({ code: 1, stdout: false, stderr: 'Cannot run: User not found: no user has the id or idpId "nobody"' })
    const notAdmin = yield* cli("admins", "grant", "nobody")
    expect({ code: notAdmin.code, stderr: notAdmin.stderr.trim() })
      .toEqual({ code: 1, stderr: 'Cannot run: User not found: no user has the id or idpId "nobody"' })

    // admins: grant (and again), list, revoke; grant-admin as before.
    const granted = yield* cli("admins", "grant", "alice")
    expect({ code: granted.code, stderr: granted.stderr }).toEqual({ code: 0, stderr: "" })
    expect(granted.stdout).toContain(`User ${aliceId} (alice, idpId alice) is now an administrator`)
    expect((yield* cli("admins", "grant", aliceId)).stdout).toContain("was already an administrator")
    expect((yield* cliJson("admins", "list")).map((a: { id: string; role: string }) => [a.id, a.role]))
      .toEqual([[aliceId, "ADMIN"]])
    const alias = yield* cli("grant-admin", "bob")
    expect({ code: alias.code, stderr: alias.stderr }).toEqual({ code: 0, stderr: "" })
    expect(alias.stdout).toContain(`User ${bobId} (bob, idpId bob) is now an administrator`)
    const revoked = yield* cliJson("admins", "revoke", "alice")
    expect(revoked).toMatchObject({ changed: true, user: { id: aliceId, role: "USER" } })
    expect((yield* cli("admins", "list")).stdout).toMatch(new RegExp(`^${bobId}  bob  idpId bob$`, "m"))
    expect(yield* query("SELECT idp_id, role FROM users ORDER BY id")).toEqual([[
      { idp_id: "alice", role: "USER" },
      { idp_id: "bob", role: "ADMIN" }
    ]])

    // sessions revoke: with Redis, every session of the user ends; without it there is none to reach.
    if (usingRealRedis) {
      const config = { ...testConfig, redisKeyPrefix: prefix, databaseUrl }
      const made = yield* Effect.gen(function*() {
        const users = yield* Users
        const sessions = yield* Sessions
        const user = yield* users.findById(BigInt(aliceId) as never)
        for (const ip of ["10.0.0.1", "10.0.0.2"]) yield* sessions.create(user, { ip, userAgent: "test", deviceId: undefined })
        return (yield* sessions.list(user.id)).length
      }).pipe(
        Effect.provide(
          Sessions.Default.pipe(
            Layer.provideMerge(Users.Default),
            Layer.provide(Stores.redis(singleNode(Redacted.make(process.env.REDIS_URL!)), prefix)),
            Layer.provide(DatabaseLive({ _tag: "Postgres", url: Option.getOrThrow(databaseUrl) })),
            Layer.provide(Randomness.live),
            Layer.provide(Layer.succeed(AppConfig, config)),
            Layer.orDie
          )
        )
      )
      expect(made).toBe(2)
      expect((yield* cliJson("users", "show", "alice")).sessions).toBe(2)
      const ended = yield* cli("sessions", "revoke", "alice")
      expect({ code: ended.code, stderr: ended.stderr }).toEqual({ code: 0, stderr: "" })
      expect(ended.stdout).toContain(`Revoked 2 sessions of User ${aliceId} (alice, idpId alice)`)
      expect((yield* cliJson("users", "show", "alice")).sessions).toBe(0)
    } else {
      const unreachable = yield* cli("sessions", "revoke", "alice")
      expect({ code: unreachable.code, stderr: unreachable.stderr.trim().split("\n") }).toEqual({
        code: 1,
        stderr: [expect.stringMatching(/^Cannot run: sessions are kept in the service's memory \(no Redis configured: REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES\)/)]
      })
    }

    // A broken ledger: a balance changed by SQL, a confirmed deposit without its movement.
    yield* query(
      `UPDATE users SET balance_cents = balance_cents + 100 WHERE idp_id = 'bob'`,
      `INSERT INTO deposits (user_id, amount_cents, method, status, external_id, expires_at, confirmed_at, qr_code,
                             qr_code_text, created_at, updated_at)
       SELECT id, 3000, 'PIX', 'CONFIRMED', 'ext-2', now(), now(), 'qr', 'qr', now(), now() FROM users WHERE idp_id = 'alice'`
    )
    const [[uncredited]] = yield* query("SELECT id::text AS id FROM deposits WHERE external_id = 'ext-2'")
    const broken = yield* cli("ledger", "check")
    expect({ code: broken.code, stderr: broken.stderr }).toEqual({ code: 1, stderr: "" })
    expect(broken.stdout).toContain("Ledger check FAILED")
    expect(broken.stdout).toContain(`user ${bobId}: balance 100, ledger sum 0`)
    expect(broken.stdout).toContain(
      `deposit ${uncredited!.id} of user ${aliceId}: CONFIRMED, 3000 cents, 0 DEPOSIT credits of that amount, 0 movements`
    )
    const brokenJson = yield* cli("ledger", "check", "--json")
    expect(brokenJson.code).toBe(1)
    expect(JSON.parse(brokenJson.stdout)).toEqual({
      ok: false,
      balances: [{ userId: bobId, balanceCents: 100, ledgerSumCents: 0 }],
      deposits: [{ id: uncredited!.id, userId: aliceId, status: "CONFIRMED", amountCents: 3000, credits: 0, movements: 0 }],
      depositOrphans: [],
      withdrawals: [],
      withdrawalOrphans: [],
      openings: []
    })

    // MIGRATE_ON_START=false with a migration pending: the service and the commands refuse, naming `migrate`.
    const last = files.at(-1)!
    // The last migration (sql/0033) undone by hand, so that applying it again works.
    yield* query(
      `DELETE FROM schema_migrations WHERE migration_id = ${Number(last.slice(0, 4))}`,
      ...["battles", "inventory_items"].flatMap((table) =>
        ["not_deleted", "id_kept", "not_truncated"].map((trigger) => `DROP TRIGGER ${table}_${trigger} ON ${table}`)
      ),
      "DROP FUNCTION rows_kept()",
      ...[
        ["battle_cases", "battle_id", "battles"],
        ["battle_players", "battle_id", "battles"],
        ["battle_rolls", "battle_id", "battles"],
        ["battle_settlements", "battle_id", "battles"],
        ["case_openings", "inventory_item_id", "inventory_items"],
        ["upgrades", "inventory_item_id", "inventory_items"],
        ["battle_settlements", "inventory_item_id", "inventory_items"],
        ["raffles", "inventory_item_id", "inventory_items"]
      ].map(([table, column, parent]) =>
        `ALTER TABLE ${table} ADD CONSTRAINT ${table}_${column}_fkey FOREIGN KEY (${column}) REFERENCES ${parent}(id)`
      )
    )
    const [port, idpPort] = yield* Effect.promise(() => Promise.all([freePort(), freePort()]))
    const refusedStart = yield* Effect.promise(() =>
      runServiceToEnd({ ...env, MIGRATE_ON_START: "false", PORT: String(port), DEV_IDP_PORT: String(idpPort) })
    )
    const refusal = `1 pending migration (${last}) and MIGRATE_ON_START=false: run \`npm run cli -- migrate\` first`
    expect({ code: refusedStart.code, stderr: refusedStart.stderr.trimEnd() })
      .toEqual({ code: 1, stderr: `Cannot start: ${refusal}` })
    const refusedCommand = yield* Effect.promise(() => runCli({ ...env, MIGRATE_ON_START: "false" }, "admins", "list"))
    expect({ code: refusedCommand.code, stderr: refusedCommand.stderr.trimEnd() })
      .toEqual({ code: 1, stderr: `Cannot run: ${refusal}` })
    expect((yield* cliJson("migrate", "status")).pending.map((m: { file: string }) => m.file)).toEqual([last])
    const applied = yield* Effect.promise(() => runCli({ ...env, MIGRATE_ON_START: "false" }, "migrate"))
    expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: "" })
    expect(applied.stdout).toContain(`Applied 1 migration: ${last}`)
    expect((yield* cliJson("migrate", "status")).pending).toEqual([])
  }), { timeout: 600_000 })

it.live("usage: --help, unknown commands and options, missing arguments; nothing is opened", () =>
  Effect.gen(function*() {
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: "/nonexistent/gp-cli-usage" }
    const cli = (...args: ReadonlyArray<string>) => Effect.promise(() => runCli(env, ...args))
    const [help, commandHelp, none, unknown, group, missing, extra, option, noJson] = yield* Effect.all([
      cli("--help"),
      cli("ledger", "check", "--help"),
      cli(),
      cli("frobnicate"),
      cli("admins"),
      cli("users", "show"),
      cli("admins", "list", "extra"),
      cli("ledger", "check", "--verbose"),
      cli("seed", "--json")
    ], { concurrency: 3 })
    expect({ code: help.code, stderr: help.stderr }).toEqual({ code: 0, stderr: "" })
    for (const name of ["migrate status", "users show <id|idpId>", "admins revoke", "ledger check", "sessions revoke"]) {
      expect(help.stdout).toContain(name)
    }
    expect(help.stdout).toContain("75 the embedded database is in use")
    expect(commandHelp.code).toBe(0)
    expect(commandHelp.stdout).toContain("Usage: npm run cli -- ledger check [--json]")
    expect(commandHelp.stdout).toContain("every case opening has its CASE_OPEN debit")
    for (const [run, line] of [
      [none, "No command given"],
      [unknown, "Unknown command frobnicate"],
      [group, "admins needs one of: list, grant, revoke"],
      [missing, "users show needs <id|idpId>"],
      [extra, "admins list takes no more than 0 arguments"],
      [option, "Unknown option --verbose"],
      [noJson, "seed has no --json output"]
    ] as const) {
      expect({ line, code: run.code, stdout: run.stdout, first: run.stderr.split("\n")[0] }).toEqual({ line, code: 2, stdout: "", first: line })
    }
  }), { timeout: 120_000 })
