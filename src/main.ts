/**
 * The service: the application (src/App.ts) served by Node until SIGTERM/SIGINT, then shut down in
 * order (docs/rules.md#shutdown) and the process exits 0. Logs are configured here; a refusal to start
 * is one plain line.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Config, Console, Effect, Layer, Logger, LogLevel, Option } from "effect"
import { AppLive } from "./App"
import { isProduction, StartupError } from "./layers/AppConfig"
import { LogLineLive } from "./layers/LogLine"

// V8's default: the bundle's modules loaded with none (scripts/build.mjs, docs/decisions.md#the-source-map).
Error.stackTraceLimit = 10

/** JSON lines in production (for log shippers), readable lines otherwise (one per entry); LOG_LEVEL sets the floor. */
const LoggingLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const production = yield* isProduction
    const level = yield* Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info))
    return Layer.merge(production ? Logger.json : LogLineLive, Logger.minimumLogLevel(level))
  }).pipe(
    Effect.mapError(() =>
      new StartupError({ message: "LOG_LEVEL must be one of All, Trace, Debug, Info, Warn, Error, Fatal, None" })
    )
  )
)

const isStartupError = (cause: Cause.Cause<unknown>) =>
  Option.exists(Cause.failureOption(cause), (e) => e instanceof StartupError)

Layer.launch(AppLive).pipe(
  // A crash is logged through the configured logger; a refusal to start is one plain line below.
  Effect.tapErrorCause((cause) =>
    Cause.isInterruptedOnly(cause) || isStartupError(cause) ? Effect.void : Effect.logFatal("The service stopped", cause)
  ),
  Effect.provide(LoggingLive),
  Effect.tapErrorCause((cause) =>
    Option.match(Cause.failureOption(cause), {
      onNone: () => Effect.void,
      onSome: (error) => error instanceof StartupError ? Console.error(`Cannot start: ${error.message}`) : Effect.void
    })
  ),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
