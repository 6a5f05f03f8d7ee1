/**
 * The embedded database is owned by one process (docs/rules.md#embedded-database-owner): whoever opens
 * PGlite in DATA_DIR (`npm start`, or an operator command for its own run) first takes
 * `DATA_DIR/pglite.lock`, a file naming its pid, and removes it when it closes the database. PGlite
 * itself does not notice a second process opening the same directory: each works on its own copy and
 * the last one to close overwrites the other's changes.
 *
 * A lock whose process is gone (killed, crashed) is stale and taken over. A pid alone can be reused by
 * an unrelated process (after a restart, in a container), so on Linux the lock also keeps the
 * holder's start time (`/proc/<pid>/stat`) and a live pid started at another time is stale too.
 *
 * A pid means something only in its PID namespace, on its host, during its boot: the lock keeps the
 * holder's PID namespace (`/proc/self/ns/pid`), host name and boot id (`/proc/sys/kernel/random/boot_id`).
 * A lock taken elsewhere (a command run under `unshare --pid`, a second container on the same volume,
 * another machine) is never judged by its pid. Its holder marks it alive instead: the file's
 * modification time is renewed every 10 s while it is held, so such a lock is live while its mark is
 * younger than 30 s (refused, the refusal naming where it was taken) and abandoned after (taken over:
 * a restarted container, whose PID namespace is new, finds its predecessor's lock abandoned). A lock
 * without a host is of the format before these fields, and is judged by its pid as it was then.
 *
 * The lock file is created complete in one step (written under a temporary name, then hard-linked to
 * `pglite.lock`, which fails when it exists), so a reader never sees half of it. A stale lock is moved
 * aside and checked to be the one judged stale before ours is linked; moved a fresh one by mistake
 * (two processes taking over the same stale lock), it is put back.
 */
import { Data, Effect } from "effect"
import { linkSync, readFileSync, readlinkSync, renameSync, statSync, unlinkSync, utimesSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { join, resolve } from "node:path"

/** Who opens the embedded database: the service, or an operator command (src/cli.ts) by name. */
export type DatabaseOpener =
  | { readonly _tag: "Service" }
  | {
    readonly _tag: "Command"
    readonly name: string
    /** What to do when the service holds the database: stop it, or what it offers instead (the admin API). */
    readonly whileServing: string
  }

/** What the lock file holds. */
interface LockRecord {
  readonly pid: number
  /** The holder's start time as Linux counts it (`/proc/<pid>/stat`, field 22); absent elsewhere. */
  readonly processStart?: string
  /** The holder's PID namespace (`pid:[<inode>]`, Linux): its pid means something only there. */
  readonly pidNamespace?: string
  /** The holder's host name; absent in locks written before these fields. */
  readonly host?: string
  /** The holder's boot (`/proc/sys/kernel/random/boot_id`, Linux). */
  readonly bootId?: string
  readonly holder: "service" | "command"
  readonly command?: string
  readonly since: string
}

/** The embedded database is open in another live process; nothing was opened. */
export class DatabaseInUse extends Data.TaggedError("DatabaseInUse")<{
  readonly message: string
  readonly dataDir: string
  readonly pid: number
}> {}

/** The lock could not be read or written (permissions, a full disk). */
export class DataDirLockFailed extends Data.TaggedError("DataDirLockFailed")<{ readonly message: string }> {}

export const LOCK_FILE = "pglite.lock"

/** Where this process runs: its PID namespace and boot id (Linux; absent elsewhere) and its host name. */
export const lockPlace = (): { readonly pidNamespace?: string; readonly host: string; readonly bootId?: string } => {
  const read = (f: () => string) => {
    try {
      return f().trim() || undefined
    } catch {
      return undefined
    }
  }
  const pidNamespace = read(() => readlinkSync("/proc/self/ns/pid"))
  const bootId = read(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8"))
  return {
    ...(pidNamespace === undefined ? {} : { pidNamespace }),
    host: hostname(),
    ...(bootId === undefined ? {} : { bootId })
  }
}

/** Lock files this process holds: a second open in the same process is refused like any other. */
const heldHere = new Set<string>()

/** A process's start time from `/proc` (Linux), or undefined where there is none to read. */
export const processStartOf = (pid: number): string | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses; starttime is field 22.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]
  } catch {
    return undefined
  }
}

const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** This process's place, read once: the namespace, host and boot id do not change while it runs. */
let herePlace: ReturnType<typeof lockPlace> | undefined
const here = () => herePlace ??= lockPlace()

/** Whether the lock was taken in another PID namespace, on another host or in another boot, where its pid says nothing here. */
const takenElsewhere = (record: LockRecord): boolean => {
  if (record.host === undefined) return false
  const place = here()
  return record.host !== place.host || record.pidNamespace !== place.pidNamespace || record.bootId !== place.bootId
}

/** How often a holder renews its lock's modification time, and how old a renewal may be before a lock taken elsewhere is abandoned. */
const HEARTBEAT_MS = 10_000
const ABANDONED_AFTER_MS = 30_000

const renewedRecently = (path: string): boolean => {
  try {
    return Date.now() - statSync(path).mtimeMs < ABANDONED_AFTER_MS
  } catch {
    return false
  }
}

const isLive = (path: string, record: LockRecord): boolean => {
  if (takenElsewhere(record)) return renewedRecently(path)
  if (record.pid === process.pid) return heldHere.has(path)
  if (!pidAlive(record.pid)) return false
  if (record.processStart === undefined) return true
  const start = processStartOf(record.pid)
  return start === undefined || start === record.processStart
}

const parse = (text: string): LockRecord | undefined => {
  try {
    const record = JSON.parse(text) as Partial<LockRecord>
    return Number.isSafeInteger(record.pid) && record.pid! > 0 ? record as LockRecord : undefined
  } catch {
    return undefined
  }
}

const readLock = (path: string): { readonly text: string; readonly record: LockRecord | undefined } | undefined => {
  try {
    const text = readFileSync(path, "utf8")
    return { text, record: parse(text) }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw error
  }
}

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code

/** Temporary names of this process's files beside the lock. */
let sequence = 0
const besideLock = (path: string, kind: string) => `${path}.${process.pid}-${++sequence}.${kind}`

/**
 * Creates `path` with the temporary file's content, failing with EEXIST when it exists: a hard link,
 * or where the file system has none, an exclusive create.
 */
const createFrom = (temporary: string, path: string, text: string) => {
  try {
    linkSync(temporary, path)
  } catch (error) {
    if (errorCode(error) === "EEXIST") throw error
    writeFileSync(path, text, { flag: "wx" })
  }
}

/** The refusal, in one line: who holds the database and what the opener can do. */
const refusal = (dataDir: string, held: LockRecord, opener: DatabaseOpener): string => {
  const holder = held.holder === "service"
    ? (opener._tag === "Service" ? "another service" : "the service")
    : `the operator command ${held.command ?? ""}`.trimEnd()
  const advice = held.holder === "command"
    ? "wait for it to finish, then try again"
    : opener._tag === "Service"
    ? "stop it first, or give this one another DATA_DIR"
    : opener.whileServing
  if (!takenElsewhere(held)) return `The embedded database in ${dataDir} is in use by ${holder} (pid ${held.pid}): ${advice}.`
  const boot = held.bootId !== here().bootId ? `, boot ${held.bootId ?? "unknown"}` : ""
  const where = `in PID namespace ${held.pidNamespace ?? "unknown"} on host ${held.host}${boot}`
  return `The embedded database in ${dataDir} is in use by ${holder} (pid ${held.pid} ${where}): ${advice}. ` +
    `Its pid cannot be checked from here; its holder renews it every ${HEARTBEAT_MS / 1000} s, and a lock not ` +
    `renewed for ${ABANDONED_AFTER_MS / 1000} s is taken over.`
}

/** Tries to take the lock once: the holder's record when another live process holds it, else undefined (taken). */
const tryTake = (path: string, text: string): LockRecord | undefined => {
  const temporary = besideLock(path, "tmp")
  writeFileSync(temporary, text)
  try {
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        createFrom(temporary, path, text)
        return undefined
      } catch (error) {
        if (errorCode(error) !== "EEXIST") throw error
      }
      const existing = readLock(path)
      if (existing === undefined) continue
      if (existing.record !== undefined && isLive(path, existing.record)) return existing.record
      // Stale: moved aside, and removed only if it is still the one judged stale.
      const aside = besideLock(path, "stale")
      try {
        renameSync(path, aside)
      } catch (error) {
        if (errorCode(error) === "ENOENT") continue
        throw error
      }
      const moved = readFileSync(aside, "utf8")
      if (moved !== existing.text) {
        // Another process took the stale lock over in between: its lock goes back.
        try {
          createFrom(aside, path, moved)
        } catch (error) {
          if (errorCode(error) !== "EEXIST") throw error
        }
      }
      unlinkSync(aside)
    }
    throw new Error("the lock file keeps changing")
  } finally {
    unlinkSync(temporary)
  }
}

/**
 * Holds `DATA_DIR/pglite.lock` for the scope: fails with DatabaseInUse, having opened nothing, when
 * another live process holds it. Released when the scope closes (after the database, which is opened
 * later in the same scope), removing the file only while it is still this process's.
 */
export const holdDataDir = (dataDir: string, opener: DatabaseOpener) => {
  const directory = resolve(dataDir)
  const path = join(directory, LOCK_FILE)
  const processStart = processStartOf(process.pid)
  const record: LockRecord = {
    pid: process.pid,
    ...(processStart === undefined ? {} : { processStart }),
    ...here(),
    holder: opener._tag === "Service" ? "service" : "command",
    ...(opener._tag === "Command" ? { command: opener.name } : {}),
    since: new Date().toISOString()
  }
  const ours = JSON.stringify(record) + "\n"
  return Effect.acquireRelease(
    Effect.try({
      try: () => tryTake(path, ours),
      catch: (cause) => new DataDirLockFailed({ message: `Cannot take the lock ${path}: ${String(cause)}` })
    }).pipe(
      Effect.flatMap((holder) =>
        holder === undefined
          ? Effect.sync(() => {
            heldHere.add(path)
            // The mark that this lock is alive, for readers that cannot check its pid (above).
            return setInterval(() => {
              try {
                if (readFileSync(path, "utf8") === ours) utimesSync(path, new Date(), new Date())
              } catch {
                // Gone or unreadable: the next renewal tries again; the release removes nothing not ours.
              }
            }, HEARTBEAT_MS).unref()
          })
          : Effect.fail(new DatabaseInUse({ message: refusal(directory, holder, opener), dataDir: directory, pid: holder.pid }))
      )
    ),
    (heartbeat) =>
      Effect.sync(() => {
        clearInterval(heartbeat)
        heldHere.delete(path)
        try {
          if (readFileSync(path, "utf8") === ours) unlinkSync(path)
        } catch {
          // Already gone: nothing to release.
        }
      })
  )
}
