/** The embedded database's owner (docs/rules.md#embedded-database-owner): DATA_DIR's lock, live or stale. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseInUse, holdDataDir, LOCK_FILE, lockPlace, processStartOf } from "../../src/layers/DataDirLock"

const seed = { _tag: "Command", name: "seed", whileServing: "stop it first, or use the admin API while it runs" } as const
const service = { _tag: "Service" } as const

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "gp-lock-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** Another process: alive until the scope closes, or already gone. */
const otherProcess = (alive: boolean) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ pid: number; kill: () => void }>((resolve) => {
        const child = spawn(process.execPath, ["-e", alive ? "setInterval(() => {}, 1000)" : ""], { stdio: "ignore" })
        if (alive) child.once("spawn", () => resolve({ pid: child.pid!, kill: () => child.kill("SIGKILL") }))
        else child.once("exit", () => resolve({ pid: child.pid!, kill: () => {} }))
      })
    ),
    (child) => Effect.sync(child.kill)
  )

const lockOf = (dir: string) => JSON.parse(readFileSync(join(dir, LOCK_FILE), "utf8")) as Record<string, unknown>

it.scoped("held for the scope: the file names this process, and is gone with nothing else left when released", () =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    const scope = yield* Scope.make()
    yield* Scope.extend(holdDataDir(dir, service), scope)
    expect(lockOf(dir)).toMatchObject({ pid: process.pid, holder: "service", ...lockPlace() })
    expect(lockOf(dir).host).toEqual(expect.any(String))
    yield* Scope.close(scope, Exit.void)
    expect(readdirSync(dir)).toEqual([])
  }))

it.scoped("a second opener in the same process is refused while the first holds it, and may take it after", () =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    const scope = yield* Scope.make()
    yield* Scope.extend(holdDataDir(dir, service), scope)
    const refused = yield* Effect.flip(Effect.scoped(holdDataDir(dir, seed)))
    expect(refused).toBeInstanceOf(DatabaseInUse)
    expect(refused.message).toBe(
      `The embedded database in ${dir} is in use by the service (pid ${process.pid}): stop it first, or use the admin API while it runs.`
    )
    expect(lockOf(dir)).toMatchObject({ pid: process.pid, holder: "service" })
    yield* Scope.close(scope, Exit.void)
    yield* Effect.scoped(holdDataDir(dir, seed))
  }))

it.scoped("a live process's lock is refused, named in one line, and left in place", () =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    const other = yield* otherProcess(true)
    const start = processStartOf(other.pid)
    const record = JSON.stringify({ pid: other.pid, ...(start === undefined ? {} : { processStart: start }), holder: "service" })
    writeFileSync(join(dir, LOCK_FILE), record)
    const asCommand = yield* Effect.flip(Effect.scoped(holdDataDir(dir, seed)))
    expect(asCommand).toMatchObject({ pid: other.pid, dataDir: dir })
    expect(asCommand.message).toMatch(new RegExp(`^The embedded database in .* is in use by the service \\(pid ${other.pid}\\): stop it first`))
    const asService = yield* Effect.flip(Effect.scoped(holdDataDir(dir, service)))
    expect(asService.message).toBe(
      `The embedded database in ${dir} is in use by another service (pid ${other.pid}): stop it first, or give this one another DATA_DIR.`
    )
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(record)
    expect(readdirSync(dir)).toEqual([LOCK_FILE])
  }))

it.scoped("a command's lock: the service is told to wait for it", () =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    const other = yield* otherProcess(true)
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: other.pid, holder: "command", command: "grant-admin" }))
    const refused = yield* Effect.flip(Effect.scoped(holdDataDir(dir, service)))
    expect(refused.message).toBe(
      `The embedded database in ${dir} is in use by the operator command grant-admin (pid ${other.pid}): wait for it to finish, then try again.`
    )
  }))

it.scoped("a stale lock (its process is gone) is taken over", () =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    const gone = yield* otherProcess(false)
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: gone.pid, holder: "service" }))
    yield* Effect.scoped(Effect.zipRight(holdDataDir(dir, seed), Effect.sync(() => {
      expect(lockOf(dir)).toMatchObject({ pid: process.pid, holder: "command", command: "seed" })
    })))
    expect(readdirSync(dir)).toEqual([])
  }))

it.scoped("a lock from an earlier life of this pid, or an unreadable one, is stale", () =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: process.pid, holder: "service" }))
    yield* Effect.scoped(holdDataDir(dir, service))
    writeFileSync(join(dir, LOCK_FILE), "{\"pid\":")
    yield* Effect.scoped(holdDataDir(dir, service))
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false)
  }))

it.scoped.skipIf(processStartOf(process.pid) === undefined)(
  "a live pid that started at another time than the lock's holder (a reused pid) is stale",
  () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const other = yield* otherProcess(true)
      writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: other.pid, processStart: "1", holder: "service" }))
      yield* Effect.scoped(holdDataDir(dir, service))
      expect(existsSync(join(dir, LOCK_FILE))).toBe(false)
    })
)

describe("a lock taken in another PID namespace, on another host or in another boot", () => {
  const here = lockPlace()
  const refusedAsLive = (dir: string, record: Record<string, unknown>, where: string) =>
    Effect.gen(function*() {
      const text = JSON.stringify({ holder: "service", ...record })
      writeFileSync(join(dir, LOCK_FILE), text)
      const refused = yield* Effect.flip(Effect.scoped(holdDataDir(dir, seed)))
      expect(refused).toBeInstanceOf(DatabaseInUse)
      expect(refused.message).toBe(
        `The embedded database in ${dir} is in use by the service (pid ${record.pid as number} ${where}): stop it first, ` +
          `or use the admin API while it runs. Its pid cannot be checked from here; its holder renews it every 10 s, ` +
          `and a lock not renewed for 30 s is taken over.`
      )
      expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(text)
      expect(readdirSync(dir)).toEqual([LOCK_FILE])
    })

  it.scoped.skipIf(here.pidNamespace === undefined)("another PID namespace: refused as live, whatever its pid is here", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const gone = yield* otherProcess(false)
      const foreign = { ...here, pidNamespace: "pid:[4026532999]" }
      // Its pid gone here, or the pid of another process here, or this process's own pid: none says anything.
      yield* refusedAsLive(dir, { pid: gone.pid, ...foreign }, `in PID namespace pid:[4026532999] on host ${here.host}`)
      const other = yield* otherProcess(true)
      yield* refusedAsLive(dir, { pid: other.pid, processStart: "1", ...foreign }, `in PID namespace pid:[4026532999] on host ${here.host}`)
      yield* refusedAsLive(dir, { pid: process.pid, ...foreign }, `in PID namespace pid:[4026532999] on host ${here.host}`)
      // A lock of a namespace unknown to its writer (no /proc there) is not ours either.
      const { pidNamespace: _, ...unknown } = here
      yield* refusedAsLive(dir, { pid: gone.pid, ...unknown }, `in PID namespace unknown on host ${here.host}`)
    }))

  it.scoped("another host (a second container or machine on the same volume): refused as live", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const gone = yield* otherProcess(false)
      yield* refusedAsLive(
        dir,
        { pid: gone.pid, ...here, host: "other-host" },
        `in PID namespace ${here.pidNamespace ?? "unknown"} on host other-host`
      )
    }))

  it.scoped.skipIf(here.bootId === undefined)("another boot: refused as live", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const gone = yield* otherProcess(false)
      yield* refusedAsLive(
        dir,
        { pid: gone.pid, ...here, bootId: "00000000-0000-0000-0000-000000000000" },
        `in PID namespace ${here.pidNamespace ?? "unknown"} on host ${here.host}, boot 00000000-0000-0000-0000-000000000000`
      )
    }))

  it.scoped("taken elsewhere and not renewed for 30 s (a container restarted in a new PID namespace): abandoned, taken over", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const gone = yield* otherProcess(false)
      const path = join(dir, LOCK_FILE)
      writeFileSync(path, JSON.stringify({ pid: gone.pid, ...here, host: "old-container", holder: "service" }))
      const old = new Date(Date.now() - 31_000)
      utimesSync(path, old, old)
      yield* Effect.scoped(Effect.zipRight(
        holdDataDir(dir, service),
        Effect.sync(() => expect(JSON.parse(readFileSync(path, "utf8"))).toMatchObject({ pid: process.pid, host: here.host }))
      ))
      expect(existsSync(path)).toBe(false)
    }))

  it.scoped("the same namespace, host and boot: a gone pid is stale as before", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const gone = yield* otherProcess(false)
      writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: gone.pid, ...here, holder: "service" }))
      yield* Effect.scoped(holdDataDir(dir, service))
      expect(existsSync(join(dir, LOCK_FILE))).toBe(false)
    }))
})
