/**
 * The service: configuration -> infrastructure (database, Redis or in-memory stores) -> domain
 * services -> HTTP API, served by Node until SIGTERM/SIGINT. Layers close in reverse order, so on a
 * signal (docs/rules.md#shutdown): shutdown begins (readiness 503, event streams end), the server stops accepting and
 * lets requests in flight finish (at most SHUTDOWN_GRACE), the background jobs stop after their
 * current run, then the pools close and the process exits 0.
 */
import { HttpApiBuilder } from "@effect/platform"
import { NodeContext, NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Cause, Config, Console, Duration, Effect, Layer, Logger, LogLevel, Option, Redacted } from "effect"
import { makeAccessLog } from "./http/platform/AccessLog"
import { ApiLive, DOCS_PATH, OPENAPI_PATH } from "./http/HttpLive"
import { createHttpServer } from "./http/platform/NodeServer"
import { makeWebConsole } from "./http/platform/WebConsole"
import { AppConfig, AppConfigLive, isProduction, StartupError, usesDevIdentityProvider } from "./layers/AppConfig"
import { GatewayFromConfig } from "./layers/gateway/GatewayFromConfig"
import { SandboxCallbackLive } from "./layers/gateway/SandboxCallback"
import { IdentityProvider } from "./layers/IdentityProvider"
import { Lifecycle } from "./layers/Lifecycle"
import { MetricsExport, TracingFromEnv } from "./layers/Observability"
import { Randomness } from "./layers/Randomness"
import { DatabaseFromConfig, StoresFromConfig } from "./layers/Infrastructure"
import { CatalogSeedOnStart } from "./services/games/CatalogSeed"
import { DashboardCacheJob, DepositExpiryJob, IdempotencyCleanupJob, RaffleDrawJob } from "./services/platform/BackgroundJobs"
import { DomainLive } from "./services/DomainLive"
import { WebhookDeliveryWorker } from "./services/platform/WebhookDelivery"

const Infrastructure = Layer.mergeAll(
  DatabaseFromConfig,
  StoresFromConfig,
  Randomness.live,
  Lifecycle.live,
  MetricsExport.prometheus
)

/** How long shutdown waits for in-flight requests before it closes their connections (docs/rules.md#shutdown). */
const SHUTDOWN_GRACE = Duration.seconds(20)

/**
 * Node's server, served by the API. On shutdown the server stops accepting and waits for open
 * connections; the deadline below closes those still open after SHUTDOWN_GRACE (a stuck client), so a
 * stop never hangs.
 */
const HttpServerLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => {
    const server = createHttpServer()
    const ShutdownDeadline = Layer.scopedDiscard(
      Effect.addFinalizer(() =>
        Effect.zipRight(
          Effect.logInfo("Shutting down: no new connections, finishing requests in flight"),
          Effect.sync(() => setTimeout(() => server.closeAllConnections(), Duration.toMillis(SHUTDOWN_GRACE)).unref())
        )
      )
    )
    // The browser pages (`/`, `/admin`) are answered in front of the API, outside its rate limits.
    const Serve = Layer.unwrapEffect(
      Effect.map(
        Effect.all([makeAccessLog, makeWebConsole]),
        ([accessLog, web]) => HttpApiBuilder.serve((app) => accessLog(web(app)))
      )
    )
    return Layer.merge(Serve, ShutdownDeadline).pipe(
      Layer.provide(NodeHttpServer.layer(() => server, { port: config.port }))
    )
  })
)

/** What a newcomer needs to find their way in, printed once the server listens. */
const Banner = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    yield* Effect.logInfo(`Listening on port ${config.port}`)
    yield* Console.log(`API reference: ${config.publicUrl}${DOCS_PATH}`)
    yield* Console.log(`OpenAPI 3.1:   ${config.publicUrl}${OPENAPI_PATH}`)
    if (usesDevIdentityProvider(config)) {
      yield* Console.log(`Sign in (development provider, any login name): ${config.publicUrl}/api/auth/idp/login`)
    }
    if (config.secretsGenerated) {
      yield* Console.log(`Development secrets (kept in ${config.dataDir}/dev-secrets.json):`)
      yield* Console.log(`  ADMIN_TOKEN=${Redacted.value(config.secrets.adminToken)}`)
      yield* Console.log(`  WEBHOOK_SECRET=${Redacted.value(config.secrets.webhookSecret)}`)
    }
  })
)

/** The first step of shutdown, before the server stops: readiness 503, event streams end. */
const ShutdownSignal = Layer.scopedDiscard(
  Effect.flatMap(Lifecycle, (lifecycle) =>
    Effect.addFinalizer(() =>
      Effect.zipRight(Effect.logInfo("Shutting down: readiness is 503, event streams end"), lifecycle.beginShutdown)
    ))
)

const AppLive = Layer.merge(Banner, ShutdownSignal).pipe(
  Layer.provideMerge(HttpServerLive),
  Layer.provide(ApiLive),
  Layer.provide(CatalogSeedOnStart),
  // Outbound webhooks: polls every second; stops (releasing what it was sending) before the pools close.
  Layer.provide(WebhookDeliveryWorker),
  // Expires unpaid deposits every minute.
  Layer.provide(DepositExpiryJob),
  // Draws raffles that reached their end.
  Layer.provide(RaffleDrawJob),
  // Computes the dashboard chart's settled days ahead of requests.
  Layer.provide(DashboardCacheJob),
  // Forgets idempotency keys older than 24 hours.
  Layer.provide(IdempotencyCleanupJob),
  Layer.provideMerge(DomainLive),
  Layer.provideMerge(IdentityProvider.layer),
  Layer.provideMerge(GatewayFromConfig),
  Layer.provideMerge(SandboxCallbackLive),
  Layer.provideMerge(Infrastructure),
  Layer.provideMerge(AppConfigLive),
  Layer.provide(NodeContext.layer),
  // Outermost, so that every layer and request below runs with the trace exporter (when configured).
  Layer.provide(TracingFromEnv)
)

/** JSON lines in production (for log shippers), readable lines otherwise; LOG_LEVEL sets the floor. */
const LoggingLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const production = yield* isProduction
    const level = yield* Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info))
    return Layer.merge(production ? Logger.json : Logger.pretty, Logger.minimumLogLevel(level))
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
