/**
 * Operator commands against the configured database (same variables as `npm start`):
 *   npm run seed                        add the missing parts of the demo catalog
 *   npm run cli -- <command> [--json]   any command below, e.g. `npm run cli -- admins grant alice`
 *   npm run cli -- <command> --help     what it does, its arguments and exit codes
 *
 * Exit codes: 0 done (or the check passed), 1 it could not be done, a check failed or what was named was not
 * found, 2 a usage error (unknown command or option, a missing argument), 75 the embedded database is held by
 * another process (docs/rules.md#embedded-database-owner): nothing was opened or changed; try again once it is free.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect, Logger, LogLevel, Option } from "effect"
import { operatorLive, operatorWithSessionsLive } from "./App"
import { AppConfig } from "./layers/AppConfig"
import { DatabaseInUse, type DatabaseOpener } from "./layers/DataDirLock"
import { migrationStatus, runMigrations } from "./layers/Migrations"
import { CatalogSeed } from "./services/games/CatalogSeed"
import { Sessions } from "./services/identity/Sessions"
import { Users } from "./services/identity/Users"
import { Ledger } from "./services/money/Ledger"

// V8's default: the bundle's modules loaded with none (scripts/build.mjs, docs/decisions.md#the-source-map).
Error.stackTraceLimit = 10

/** What a command prints once the database is closed: its text, or with --json its data; exit code 1 for a failed check. */
interface Outcome {
  readonly text: string
  readonly json?: unknown
  readonly failed?: boolean
}

interface Command {
  /** Its arguments, as usage shows them. */
  readonly args: ReadonlyArray<string>
  readonly summary: string
  /** More than the summary, for `--help`. */
  readonly details?: string
  /** Prints data that `--json` gives as JSON. */
  readonly json: boolean
  /** What to do instead while the service holds the embedded database (docs/rules.md#embedded-database-owner). */
  readonly whileServing: string
  readonly run: (opener: DatabaseOpener, args: ReadonlyArray<string>) => Effect.Effect<Outcome, unknown>
}

/** A user as the commands show them, JSON-ready (ids as strings, cents as numbers). */
type OperatorUser = Effect.Effect.Success<ReturnType<Users["find"]>>
const userJson = (user: OperatorUser) => ({
  id: String(user.id),
  username: user.username,
  idpId: user.idpId,
  role: user.role,
  balanceCents: Number(user.balanceCents),
  twoFactorEnabled: user.twoFactorEnabled,
  banned: user.bannedAt === null ? null : { at: user.bannedAt.toISOString(), reason: user.banReason },
  createdAt: user.createdAt.toISOString(),
  lastActiveAt: user.lastActiveAt?.toISOString() ?? null
})
const userLabel = (user: { readonly id: bigint; readonly username: string; readonly idpId: string }) =>
  `User ${user.id} (${user.username}, idpId ${user.idpId})`

/** A command that could not be done, in one line. */
class CommandFailed {
  constructor(readonly message: string) {}
}

/** The user named on the command line, by id or else idpId; not found, a line naming what was looked for. */
const findUser = (who: string) =>
  Effect.flatMap(Users, (users) => users.find(who)).pipe(
    Effect.catchTag("NotFound", () => Effect.fail(new CommandFailed(`User not found: no user has the id or idpId ${JSON.stringify(who)}`)))
  )

/** Sessions are shared (and readable here) only in Redis; in memory they are the running service's alone. */
const sessionsUnreachable = "sessions are kept in the service's memory (no Redis configured: REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES)"

/** `admins grant` and `admins revoke` (`roleChange`): the named user given `role`. */
const setRole = Effect.fnUntraced(function*(role: "ADMIN" | "USER", who: string) {
  const config = yield* AppConfig
  const found = yield* findUser(who)
  const { changed, user } = yield* (yield* Users).setRole(String(found.id), role)
  const listed = role === "USER" && config.adminIdpIds.includes(user.idpId)
    ? `; ADMIN_IDP_IDS lists ${user.idpId}, so their next sign-in makes them an administrator again: remove it there too`
    : ""
  const text = role === "ADMIN"
    ? `${userLabel(user)} ${changed ? "is now" : "was already"} an administrator`
    : `${userLabel(user)} ${changed ? "is no longer" : "was not"} an administrator${listed}`
  return { text, json: { changed, user: userJson(user) } }
})

const roleChange = (role: "ADMIN" | "USER") => (opener: DatabaseOpener, [who]: ReadonlyArray<string>) =>
  setRole(role, who!).pipe(Effect.provide(operatorLive(opener)))

const ROLES_WHILE_SERVING = "stop it first (roles do not change through the admin API; ADMIN_IDP_IDS promotes at sign-in)"

const commands: Record<string, Command> = {
  seed: {
    args: [],
    summary: "Load the demo catalog: items by name and cases by slug that are not there yet",
    json: false,
    whileServing: "stop it first, or use the admin API while it runs (POST /api/admin/items, POST /api/admin/cases)",
    run: (opener) =>
      Effect.flatMap(CatalogSeed, (seed) => seed.seed).pipe(
        Effect.map((report) => ({ text: `Demo catalog: ${report.itemsCreated} items and ${report.casesCreated} cases added` })),
        Effect.provide(operatorLive(opener))
      )
  },
  migrate: {
    args: [],
    summary: "Apply the pending migrations of sql/ and print those applied",
    details: "Run it before starting a new version (docs/operations.md#upgrades); `npm start` applies them itself\n" +
      "unless MIGRATE_ON_START=false, which makes it refuse to start while any is pending.",
    json: true,
    whileServing: "stop it first (it applies pending migrations itself when it starts, unless MIGRATE_ON_START=false)",
    run: Effect.fnUntraced(function*(_opener) {
      const applied = (yield* runMigrations).map(([id, name]) => ({ id, name, file: `${String(id).padStart(4, "0")}_${name}.sql` }))
      const { applied: all } = yield* migrationStatus
      const latest = all.at(-1)
      const at = latest === undefined ? "no migration" : `${String(latest.id).padStart(4, "0")}_${latest.name}`
      return {
        text: applied.length === 0
          ? `Nothing to apply: the database is at ${at}`
          : `Applied ${applied.length} migration${applied.length === 1 ? "" : "s"}: ${applied.map((m) => m.file).join(", ")}`,
        json: { applied, latest: latest === undefined ? null : { id: latest.id, name: latest.name } }
      }
    }, (effect, opener) => effect.pipe(Effect.provide(operatorLive(opener, "leave"))))
  },
  "migrate status": {
    args: [],
    summary: "The applied migrations (with the sha256 of each file as it is on disk now) and the pending ones",
    details: "The migrations table records no checksum of what it applied: a file changed since it was applied\n" +
      "cannot be told from here, and none is flagged; the checksums shown are of the files now, to compare\n" +
      "between installations. An applied migration whose file is gone or renamed is flagged. Exit 0 whatever is pending.",
    json: true,
    whileServing: "stop it first",
    run: (opener) =>
      Effect.map(migrationStatus, (status) => {
        const id = (n: number) => String(n).padStart(4, "0")
        const flag = (m: (typeof status.applied)[number]) =>
          m.file === null ? "  (its file is gone from sql/)" : m.renamed ? `  (the file is now ${m.file})` : ""
        const text = [
          `Applied (${status.applied.length}):`,
          ...status.applied.map((m) =>
            `  ${id(m.id)}_${m.name}  ${m.appliedAt.toISOString()}  sha256 ${m.sha256 ?? "-"}${flag(m)}`
          ),
          `Pending (${status.pending.length}):${status.pending.length === 0 ? " none" : ""}`,
          ...status.pending.map((m) => `  ${m.file.replace(/\.sql$/, "")}  sha256 ${m.sha256}`),
          "Checksums: the migrations table stores none, so a file changed since it was applied cannot be flagged;",
          "each sha256 above is of the file as it is on disk now."
        ].join("\n")
        return {
          text,
          json: {
            checksumsStored: status.checksumsStored,
            applied: status.applied.map((m) => ({ ...m, appliedAt: m.appliedAt.toISOString() })),
            pending: status.pending
          }
        }
      }).pipe(Effect.provide(operatorLive(opener, "leave")))
  },
  "users show": {
    args: ["<id|idpId>"],
    summary: "A user's profile: balance, role, 2FA, ban and number of sessions",
    json: true,
    whileServing: "stop it first, or use the admin API while it runs (GET /api/admin/users/:id)",
    run: Effect.fnUntraced(function*(_opener, [who]) {
      const config = yield* AppConfig
      const user = yield* findUser(who!)
      const sessions = Option.isSome(config.redis) ? (yield* (yield* Sessions).list(user.id)).length : null
      const text = [
        userLabel(user),
        `  role         ${user.role}`,
        `  balance      ${user.balanceCents} cents`,
        `  2FA          ${user.twoFactorEnabled ? "on" : "off"}`,
        `  banned       ${user.bannedAt === null ? "no" : `since ${user.bannedAt.toISOString()}: ${user.banReason ?? ""}`}`,
        `  created      ${user.createdAt.toISOString()}`,
        `  last active  ${user.lastActiveAt?.toISOString() ?? "never"}`,
        `  sessions     ${sessions ?? `unknown: ${sessionsUnreachable}`}`
      ].join("\n")
      return { text, json: { ...userJson(user), sessions } }
    }, (effect, opener) => effect.pipe(Effect.provide(operatorWithSessionsLive(opener))))
  },
  "admins list": {
    args: [],
    summary: "Every administrator",
    json: true,
    whileServing: "stop it first, or use the admin API while it runs (GET /api/admin/users shows each user's role)",
    run: (opener) =>
      Effect.flatMap(Users, (users) => users.admins).pipe(
        Effect.map((admins) => ({
          text: admins.length === 0
            ? "No administrators"
            : admins.map((a) => `${a.id}  ${a.username}  idpId ${a.idpId}${a.bannedAt === null ? "" : "  (banned)"}`).join("\n"),
          json: admins.map(userJson)
        })),
        Effect.provide(operatorLive(opener))
      )
  },
  "admins grant": {
    args: ["<id|idpId>"],
    summary: "Make a user an administrator (they sign in at least once first)",
    json: true,
    whileServing: ROLES_WHILE_SERVING,
    run: roleChange("ADMIN")
  },
  "admins revoke": {
    args: ["<id|idpId>"],
    summary: "Make an administrator a user again (their sessions see it within 30 s)",
    json: true,
    whileServing: ROLES_WHILE_SERVING,
    run: roleChange("USER")
  },
  "grant-admin": {
    args: ["<id|idpId>"],
    summary: "The same as `admins grant`",
    json: true,
    whileServing: ROLES_WHILE_SERVING,
    run: roleChange("ADMIN")
  },
  "ledger check": {
    args: [],
    summary: "Check the ledger's invariants; exit 1 and the offending rows on any mismatch",
    details: "Every balance equals the sum of its movements and none is negative; every movement's user exists;\n" +
      "every CONFIRMED deposit has exactly one DEPOSIT credit of its amount and no other deposit has any; every\n" +
      "withdrawal has exactly one WITHDRAWAL debit of its amount, plus one WITHDRAWAL_REFUND exactly when\n" +
      "CANCELLED, REJECTED or FAILED; no such movement is without its deposit or withdrawal;\n" +
      "every case opening has its CASE_OPEN debit of its price and every CASE_OPEN debit its opening\n" +
      "(docs/rules.md#ledger-checks).",
    json: true,
    whileServing: "stop it first (no API runs these checks)",
    run: (opener) =>
      Effect.flatMap(Ledger, (ledger) => ledger.check).pipe(
        Effect.map((found) => {
          const sections: Array<[string, ReadonlyArray<string>]> = [
            ["Balances not equal to their ledger sum, or negative", found.balances.map((r) =>
              `user ${r.userId}: ${r.balanceCents === null ? "no such user" : `balance ${r.balanceCents}`}, ledger sum ${r.ledgerSumCents}`)],
            ["Deposits not credited exactly once when CONFIRMED (or credited otherwise)", found.deposits.map((r) =>
              `deposit ${r.id} of user ${r.userId}: ${r.status}, ${r.amountCents} cents, ${r.credits} DEPOSIT credits of that amount, ${r.movements} movements`)],
            ["DEPOSIT movements without their deposit", found.depositOrphans.map((r) =>
              `transaction ${r.id} of user ${r.userId}: ${r.type} ${r.amountCents}`)],
            ["Withdrawals not debited exactly once (or refunded other than when CANCELLED, REJECTED or FAILED)", found.withdrawals.map((r) =>
              `withdrawal ${r.id}: ${r.status}, ${r.debits} debits, ${r.refunds} refunds, ${r.movements} movements`)],
            ["Withdrawal movements without their withdrawal", found.withdrawalOrphans.map((r) =>
              `transaction ${r.id} of user ${r.userId}: ${r.type} ${r.amountCents}`)],
            ["Case openings and CASE_OPEN debits that do not pair up", found.openings.map((r) =>
              `user ${r.userId}, case ${r.caseId ?? "-"}, ${r.priceCents} cents at ${r.at.toISOString()}: openings [${r.openingIds}], debits [${r.debitIds}]`)]
          ]
          const failing = sections.filter(([, rows]) => rows.length > 0)
          const text = failing.length === 0
            ? "Ledger check passed: every balance equals its ledger sum; every deposit, withdrawal and case opening has its movements"
            : ["Ledger check FAILED", ...failing.flatMap(([title, rows]) => [`${title} (${rows.length}):`, ...rows.map((r) => `  ${r}`)])]
              .join("\n")
          const json = {
            ok: failing.length === 0,
            balances: found.balances.map((r) => ({
              userId: r.userId,
              balanceCents: r.balanceCents === null ? null : Number(r.balanceCents),
              ledgerSumCents: Number(r.ledgerSumCents)
            })),
            deposits: found.deposits.map((r) => ({ ...r, amountCents: Number(r.amountCents) })),
            depositOrphans: found.depositOrphans.map((r) => ({ ...r, amountCents: Number(r.amountCents) })),
            withdrawals: found.withdrawals,
            withdrawalOrphans: found.withdrawalOrphans.map((r) => ({ ...r, amountCents: Number(r.amountCents) })),
            openings: found.openings.map((r) => ({
              ...r,
              priceCents: Number(r.priceCents),
              at: r.at.toISOString(),
              openingIds: r.openingIds === "" ? [] : r.openingIds.split(","),
              debitIds: r.debitIds === "" ? [] : r.debitIds.split(",")
            }))
          }
          return { text, json, failed: failing.length > 0 }
        }),
        Effect.provide(operatorLive(opener))
      )
  },
  "sessions revoke": {
    args: ["<id|idpId>"],
    summary: "End every session of a user (they sign in again); needs REDIS_URL, where sessions are kept",
    json: true,
    whileServing:
      "stop it first, or use the admin API while it runs (POST /api/admin/users/:id/sessions/:sessionId/revoke; a ban ends them all)",
    run: Effect.fnUntraced(function*(_opener, [who]) {
      const config = yield* AppConfig
      const user = yield* findUser(who!)
      if (Option.isNone(config.redis)) {
        return yield* Effect.fail(
          new CommandFailed(
            `${sessionsUnreachable}: a stopped service has none, a running one's are ended through its admin API`
          )
        )
      }
      const revoked = yield* (yield* Sessions).revokeAll(user.id)
      return {
        text: `Revoked ${revoked} session${revoked === 1 ? "" : "s"} of ${userLabel(user)}`,
        json: { user: userJson(user), revoked }
      }
    }, (effect, opener) => effect.pipe(Effect.provide(operatorWithSessionsLive(opener))))
  }
}

/** The groups of two-word commands, for a group named alone. */
const GROUPS = new Set(Object.keys(commands).filter((name) => name.includes(" ")).map((name) => name.split(" ")[0]!))

const EXIT_CODES = "Exit codes: 0 done, 1 failed (a check failed, not found), 2 usage, 75 the embedded database is in use."
const usageOf = (name: string, command: Command) =>
  `npm run cli -- ${[name, ...command.args].join(" ")}${command.json ? " [--json]" : ""}`
const usage = [
  "Usage: npm run cli -- <command> [arguments] [--json] [--help]",
  "Commands:",
  ...Object.entries(commands).map(([name, c]) => `  ${[name, ...c.args].join(" ").padEnd(28)}${c.summary}`),
  EXIT_CODES
].join("\n")
const helpOf = (name: string, command: Command) =>
  [
    `Usage: ${usageOf(name, command)}`,
    command.summary,
    ...(command.details === undefined ? [] : [command.details]),
    ...(command.json ? ["--json  print the result as JSON"] : []),
    "On the embedded database run it with the service stopped: while `npm start` holds DATA_DIR it refuses (exit 75).",
    EXIT_CODES
  ].join("\n")

/** Exit code when another process holds the embedded database: EX_TEMPFAIL, try again later. */
const IN_USE = 75
const USAGE = 2

const usageError = (line: string, help = usage) =>
  Effect.zipRight(Console.error(`${line}\n${help}`), Effect.sync(() => process.exitCode = USAGE))

const argv = process.argv.slice(2)
const options = argv.filter((arg) => arg.startsWith("-"))
const words = argv.filter((arg) => !arg.startsWith("-"))
const wantsHelp = options.includes("--help") || options.includes("-h") || words[0] === "help"
const json = options.includes("--json")
const unknownOption = options.find((option) => !["--help", "-h", "--json"].includes(option))
const twoWords = words.slice(0, 2).join(" ")
const name = Object.hasOwn(commands, twoWords) ? twoWords : words[0] ?? ""
const command = Object.hasOwn(commands, name) ? commands[name] : undefined
const args = words.slice(name.split(" ").length)

const execute = (name: string, command: Command) =>
  command.run({ _tag: "Command", name, whileServing: command.whileServing }, args).pipe(
    // Printed only after the change committed and the database closed: a command that did not make its change
    // says so (one line, exit code not 0) and never reports it.
    Effect.flatMap((outcome) =>
      Effect.zipRight(
        Console.log(json ? JSON.stringify(outcome.json ?? null, null, 2) : outcome.text),
        Effect.sync(() => process.exitCode = outcome.failed === true ? 1 : 0)
      )
    ),
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
      const failure = Cause.failureOption(cause)
      const inUse = Option.exists(failure, (error) => error instanceof DatabaseInUse)
      const line = Option.match(failure, {
        onNone: () => `Cannot run: ${Cause.pretty(cause)}`,
        onSome: (error) =>
          inUse ? (error as DatabaseInUse).message : `Cannot run: ${(error as { message?: string }).message ?? String(error)}`
      })
      return Effect.zipRight(Console.error(line), Effect.sync(() => process.exitCode = inUse ? IN_USE : 1))
    }),
    Effect.asVoid,
    // With --json, standard output holds the JSON alone: the start-up's log lines (Info, Warning) are left out.
    json ? Logger.withMinimumLogLevel(LogLevel.Error) : (effect) => effect
  )

const program = unknownOption !== undefined
  ? usageError(`Unknown option ${unknownOption}`, command === undefined ? usage : helpOf(name, command))
  : command === undefined
  ? (wantsHelp && (words.length === 0 || words[0] === "help")
    ? Console.log(usage)
    : usageError(
      words.length === 0
        ? "No command given"
        : GROUPS.has(words[0]!)
        ? `${words[0]} needs one of: ${Object.keys(commands).filter((c) => c.startsWith(`${words[0]} `)).map((c) => c.split(" ")[1]).join(", ")}`
        : `Unknown command ${words.join(" ")}`
    ))
  : wantsHelp
  ? Console.log(helpOf(name, command))
  : args.length !== command.args.length
  ? usageError(
    args.length < command.args.length ? `${name} needs ${command.args.join(" ")}` : `${name} takes no more than ${command.args.length} arguments`,
    helpOf(name, command)
  )
  : json && !command.json
  ? usageError(`${name} has no --json output`, helpOf(name, command))
  : execute(name, command)

NodeRuntime.runMain(program, { disableErrorReporting: true })
