/**
 * Operator commands against the configured database (same variables as `npm start`):
 *   npm run seed              add the missing parts of the demo catalog
 *   npm run cli -- <command>  any command below, e.g. `npm run cli -- grant-admin alice`
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect, Option } from "effect"
import { OperatorLive } from "./App"
import { StartupError } from "./layers/AppConfig"
import { CatalogSeed } from "./services/games/CatalogSeed"
import { Users } from "./services/identity/Users"
import type { NotFound, ServiceUnavailable } from "./schema/platform/Errors"

interface Command {
  readonly help: string
  readonly run: Effect.Effect<void, StartupError | NotFound | ServiceUnavailable, CatalogSeed | Users>
}

const commands: Record<string, Command> = {
  seed: {
    help: "Load the demo catalog: items by name and cases by slug that are not there yet",
    run: Effect.gen(function*() {
      const report = yield* (yield* CatalogSeed).seed
      yield* Console.log(`Demo catalog: ${report.itemsCreated} items and ${report.casesCreated} cases added`)
    })
  },
  "grant-admin": {
    help: "<userId|idpId>  Make a user an administrator (they sign in at least once first)",
    run: Effect.gen(function*() {
      const who = process.argv[3] ?? ""
      if (who === "") return yield* Effect.fail(new StartupError({ message: "grant-admin needs a user id or idpId" }))
      const user = yield* (yield* Users).grantAdmin(who)
      yield* Console.log(`User ${user.id} (${user.username}, idpId ${user.idpId}) is now an administrator`)
    })
  }
}

const usage = Console.error(
  ["Usage: npm run cli -- <command>", "Commands:", ...Object.entries(commands).map(([name, c]) => `  ${name}  ${c.help}`)]
    .join("\n")
)

const name = process.argv[2] ?? ""
const command = Object.hasOwn(commands, name) ? commands[name] : undefined

const program = command === undefined
  ? Effect.zipRight(usage, Effect.sync(() => process.exitCode = 2))
  : command.run.pipe(
    Effect.provide(OperatorLive),
    Effect.tapErrorCause((cause) => {
      const failure = Cause.failureOption(cause)
      return Option.isSome(failure) ? Console.error(`Cannot run: ${failure.value.message}`) : Effect.void
    })
  )

NodeRuntime.runMain(program, { disableErrorReporting: true })
