/**
 * Operator commands against the configured database (same variables as `npm start`):
 *   npm run seed              add the missing parts of the demo catalog
 *   npm run cli -- <command>  any command below, e.g. `npm run cli -- grant-admin alice`
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect, Option } from "effect"
import { operatorLive } from "./App"
import { StartupError } from "./layers/AppConfig"
import { DatabaseInUse } from "./layers/DataDirLock"
import { CatalogSeed } from "./services/games/CatalogSeed"
import { Users } from "./services/identity/Users"
import type { NotFound, ServiceUnavailable } from "./schema/platform/Errors"

interface Command {
  readonly help: string
  /** What to do instead while the service holds the embedded database (docs/rules.md#embedded-database-owner). */
  readonly whileServing: string
  /** Makes the change; succeeds with the line that reports it, printed once the database is closed. */
  readonly run: Effect.Effect<string, StartupError | NotFound | ServiceUnavailable, CatalogSeed | Users>
}

const commands: Record<string, Command> = {
  seed: {
    help: "Load the demo catalog: items by name and cases by slug that are not there yet",
    whileServing: "stop it first, or use the admin API while it runs (POST /api/admin/items, POST /api/admin/cases)",
    run: Effect.map(
      Effect.flatMap(CatalogSeed, (seed) => seed.seed),
      (report) => `Demo catalog: ${report.itemsCreated} items and ${report.casesCreated} cases added`
    )
  },
  "grant-admin": {
    help: "<userId|idpId>  Make a user an administrator (they sign in at least once first)",
    whileServing: "stop it first (roles do not change through the admin API; ADMIN_IDP_IDS promotes at sign-in)",
    run: Effect.gen(function*() {
      const who = process.argv[3] ?? ""
      if (who === "") return yield* Effect.fail(new StartupError({ message: "grant-admin needs a user id or idpId" }))
      const user = yield* (yield* Users).grantAdmin(who)
      return `User ${user.id} (${user.username}, idpId ${user.idpId}) is now an administrator`
    })
  }
}

const usage = Console.error(
  ["Usage: npm run cli -- <command>", "Commands:", ...Object.entries(commands).map(([name, c]) => `  ${name}  ${c.help}`)]
    .join("\n")
)

/** Exit code when another process holds the embedded database: EX_TEMPFAIL, try again later. */
const IN_USE = 75

const name = process.argv[2] ?? ""
const command = Object.hasOwn(commands, name) ? commands[name] : undefined

// The report is printed only after the change committed and the database closed: a command that did
// not make its change says so (one line, exit code not 0) and never reports it.
const program = command === undefined
  ? Effect.zipRight(usage, Effect.sync(() => process.exitCode = 2))
  : command.run.pipe(
    Effect.provide(operatorLive({ _tag: "Command", name, whileServing: command.whileServing })),
    Effect.flatMap(Console.log),
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
      const failure = Cause.failureOption(cause)
      const inUse = Option.exists(failure, (error) => error instanceof DatabaseInUse)
      const line = Option.match(failure, {
        onNone: () => `Cannot run: ${Cause.pretty(cause)}`,
        onSome: (error) => inUse ? error.message : `Cannot run: ${error.message}`
      })
      return Effect.zipRight(Console.error(line), Effect.sync(() => process.exitCode = inUse ? IN_USE : 1))
    }),
    Effect.asVoid
  )

NodeRuntime.runMain(program, { disableErrorReporting: true })
