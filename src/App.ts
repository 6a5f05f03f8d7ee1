/**
 * The application, composed of layers as docs/architecture.md "Composition" draws it; each layer is
 * given what is beneath it:
 *
 *   AppLive            the served process (src/main.ts launches it): tracing, the HTTP server
 *     application      the API over the background jobs over the domain over the world
 *       Domain         every domain service
 *       World          configuration, infrastructure, identity provider, payment gateway
 *
 * The tests build `application` over a world of test layers (test/support/TestApp.ts); the operator
 * commands (src/cli.ts) use `operatorLive`. Layers close in reverse order, so on a signal
 * (docs/rules.md#shutdown): shutdown begins (readiness 503, event streams end), the server stops
 * accepting and lets requests in flight finish (at most SHUTDOWN_GRACE), the background jobs stop after
 * their current run, then the pools close.
 */
import { Etag, FileSystem, HttpApi, HttpApiBuilder, HttpPlatform, HttpServer, Path } from "@effect/platform"
import { NodeContext, NodeHttpServer } from "@effect/platform-node"
import { Console, Duration, Effect, Layer, Redacted } from "effect"
import { ApiLive, DOCS_PATH, OPENAPI_PATH } from "./http/HttpLive"
import { makeAccessLog } from "./http/platform/AccessLog"
import { createHttpServer } from "./http/platform/NodeServer"
import { makeWebConsole } from "./http/platform/WebConsole"
import { buildOnly } from "./http/platform/RequestContext"
import { apiReferenceScript } from "./http/platform/ApiReference"
import { AppConfig, AppConfigLive, cannotListen, usesDevIdentityProvider } from "./layers/AppConfig"
import { GatewayFromConfig } from "./layers/gateway/GatewayFromConfig"
import { type SandboxCallback, SandboxCallbackLive } from "./layers/gateway/SandboxCallback"
import { IdentityProvider } from "./layers/IdentityProvider"
import { KycFromConfig } from "./layers/kyc/KycFromConfig"
import { ExclusionRegistryFromConfig } from "./layers/registry/ExclusionRegistryFromConfig"
import { PixKeyDirectoryFromConfig } from "./layers/gateway/PixKeyDirectoryFromConfig"
import type { DatabaseOpener } from "./layers/DataDirLock"
import { databaseFromConfig, Infrastructure, StoresFromConfig } from "./layers/Infrastructure"
import type { MigrationsOnOpen } from "./layers/Migrations"
import { Lifecycle } from "./layers/Lifecycle"
import { TracingFromEnv } from "./layers/Observability"
import { SharedSchedulerLive } from "./layers/SharedScheduler"
import type { PaymentGateway } from "./layers/PaymentGateway"
import { Randomness } from "./layers/Randomness"
import type { KeyValue } from "./layers/stores/KeyValue"
import { AdminPlayers } from "./services/admin/AdminPlayers"
import { AdminUsers } from "./services/admin/AdminUsers"
import { Audit } from "./services/admin/Audit"
import { AuditLog } from "./services/admin/AuditLog"
import { Dashboard } from "./services/admin/Dashboard"
import { Battles } from "./services/battles/Battles"
import { CaseOpenings } from "./services/games/CaseOpenings"
import { Catalog } from "./services/games/Catalog"
import { CatalogSeed, CatalogSeedOnStart } from "./services/games/CatalogSeed"
import { GameStats } from "./services/games/GameStats"
import { Inventory } from "./services/games/Inventory"
import { LiveDrops } from "./services/games/LiveDrops"
import { ProvablyFair } from "./services/games/ProvablyFair"
import { Upgrades } from "./services/games/Upgrades"
import { Sessions } from "./services/identity/Sessions"
import { Activity } from "./services/identity/Activity"
import { Identities } from "./services/identity/Identities"
import { TwoFactor } from "./services/identity/TwoFactor"
import { Users } from "./services/identity/Users"
import { Deposits } from "./services/money/Deposits"
import { GatewayEvents } from "./services/money/GatewayEvents"
import { Ledger } from "./services/money/Ledger"
import { PixKeyOwners } from "./services/money/PixKeyOwners"
import { SandboxCharges } from "./services/money/SandboxCharges"
import { Withdrawals } from "./services/money/Withdrawals"
import {
  DashboardCacheJob,
  DepositExpiryJob,
  ExclusionRegistryJob,
  IdempotencyCleanupJob,
  RaffleDrawJob
} from "./services/BackgroundJobs"
import { ResponsibleGaming } from "./services/identity/ResponsibleGaming"
import { Idempotency } from "./services/platform/Idempotency"
import { Notifications } from "./services/platform/Notifications"
import { Realtime } from "./services/platform/Realtime"
import { WebhookDelivery, WebhookDeliveryWorker } from "./services/platform/WebhookDelivery"
import { Webhooks } from "./services/platform/Webhooks"
import { Raffles } from "./services/raffles/Raffles"

/**
 * Every domain service. Each `Default` brings the services it uses (its `dependencies`), and a layer
 * is built once per application however many layers name it (layers are memoized by reference), so a
 * service several others use (Realtime, LiveDrops, ProvablyFair, ...) is one instance shared by all.
 */
const Domain = Layer.mergeAll(
  // identity
  Users.Default,
  Sessions.Default,
  Activity.Default,
  TwoFactor.Default,
  Identities.Default,
  ResponsibleGaming.Default,
  // games
  Catalog.Default,
  CatalogSeed.Default,
  CaseOpenings.Default,
  Upgrades.Default,
  Inventory.Default,
  ProvablyFair.Default,
  GameStats.Default,
  LiveDrops.Default,
  // battles, raffles
  Battles.Default,
  Raffles.Default,
  // money
  Ledger.Default,
  Deposits.Default,
  Withdrawals.Default,
  PixKeyOwners.Default,
  SandboxCharges.Default,
  GatewayEvents.Default,
  // admin
  AdminUsers.Default,
  AdminPlayers.Default,
  Dashboard.Default,
  Audit.Default,
  AuditLog.Default,
  // platform
  Idempotency.Default,
  Notifications.Default,
  Realtime.Default,
  Webhooks.Default,
  WebhookDelivery.Default
)

/** What runs beside the API: the background jobs (src/services/BackgroundJobs.ts) and the demo catalog on start. */
const Jobs = CatalogSeedOnStart.pipe(
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
  // Looks up in the self-exclusion registry every verified player not looked up for 15 days (JURISDICTION=BR).
  Layer.provide(ExclusionRegistryJob)
)

/** What the domain works with outside itself; the tests replace each part. */
interface World<EC, RC, I, EI, RI, EP, EG> {
  readonly config: Layer.Layer<AppConfig, EC, RC>
  /** The database (migrated), the stores, randomness, the lifecycle and the metrics export. */
  readonly infrastructure: Layer.Layer<I, EI, RI>
  readonly identityProvider: Layer.Layer<IdentityProvider, EP, AppConfig | KeyValue>
  readonly gateway: Layer.Layer<PaymentGateway, EG, AppConfig | SandboxCallback>
  /** How the sandbox gateway reaches the service's payment callback. */
  readonly sandboxCallback: Layer.Layer<SandboxCallback, never, AppConfig>
}

/** `npm start`'s world: everything chosen from the environment (docs/rules.md#embedded-defaults). */
const LiveWorld = {
  config: AppConfigLive,
  infrastructure: Infrastructure,
  identityProvider: IdentityProvider.layer,
  gateway: GatewayFromConfig,
  sandboxCallback: SandboxCallbackLive
}

/** The HTTP API (handlers, middlewares, OpenAPI, GET /metrics) over `jobs` over the domain over `world`. */
export const application = <EC, RC, I, EI, RI, EP, EG, EJ, RJ>(
  world: World<EC, RC, I, EI, RI, EP, EG>,
  jobs: Layer.Layer<never, EJ, RJ>
) =>
  ApiLive.pipe(
    Layer.provide(jobs),
    Layer.provideMerge(Domain),
    Layer.provideMerge(world.identityProvider),
    Layer.provideMerge(world.gateway),
    Layer.provideMerge(world.sandboxCallback),
    // The identity (KYC) provider: chosen from the configuration, as the gateway is (docs/rules.md#kyc-provider).
    Layer.provideMerge(KycFromConfig),
    // The centralized self-exclusion registry: chosen from the configuration, as the KYC provider is
    // (docs/rules.md#exclusion-registry).
    Layer.provideMerge(ExclusionRegistryFromConfig),
    // The gateway's PIX key directory: the sandbox's or the real gateway's, as the gateway (docs/rules.md#pix-key-owner).
    Layer.provideMerge(PixKeyDirectoryFromConfig),
    Layer.provideMerge(world.infrastructure),
    Layer.provideMerge(world.config),
    // Outermost, so that every fiber below (servers, jobs, requests) runs on it.
    Layer.provide(SharedSchedulerLive)
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
    // The browser pages (`/`, `/admin`) and the API reference's script are answered in front of the
    // API, outside its rate limits.
    const Serve = Layer.unwrapEffect(
      Effect.map(
        Effect.all([makeAccessLog, makeWebConsole]),
        ([accessLog, web]) => HttpApiBuilder.serve((app) => accessLog(apiReferenceScript(web(app))))
      )
    ).pipe(
      // What the server keeps for every request: the platform's services (docs/architecture.md "Composition").
      buildOnly([HttpApi.Api, HttpServer.HttpServer, HttpPlatform.HttpPlatform, Etag.Generator, FileSystem.FileSystem, Path.Path])
    )
    // A port that cannot be listened on (in use, privileged) is a refusal to start: one line naming PORT.
    const Listening = NodeHttpServer.layer(() => server, { port: config.port }).pipe(
      Layer.mapError((error) => cannotListen(config.port, "PORT", error.cause))
    )
    return Layer.merge(Serve, ShutdownDeadline).pipe(Layer.provide(Listening))
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

/** The service as `npm start` runs it: Node's server (access log -> browser pages -> API) over the application. */
export const AppLive = Layer.merge(Banner, ShutdownSignal).pipe(
  Layer.provideMerge(HttpServerLive),
  Layer.provide(application(LiveWorld, Jobs)),
  Layer.provide(NodeContext.layer),
  // Outermost, so that every layer and request below runs with the trace exporter (when configured).
  Layer.provide(TracingFromEnv)
)

/**
 * The operator commands' services (src/cli.ts): the demo catalog's loader, the users, the ledger and the
 * configuration, over the database, opened for `command` (which holds the embedded database's lock while it runs).
 * `migrations` as `npm start` does (MIGRATE_ON_START) unless given: `npm run cli -- migrate` leaves them to itself.
 */
export const operatorLive = (command: DatabaseOpener, migrations?: MigrationsOnOpen) =>
  Layer.mergeAll(CatalogSeed.Default, Users.Default, Ledger.Default).pipe(
    Layer.provideMerge(databaseFromConfig(command, migrations)),
    Layer.provideMerge(Randomness.live),
    Layer.provideMerge(AppConfigLive),
    Layer.provideMerge(NodeContext.layer)
  )

/** `operatorLive` with the sessions, in the key-value store the configuration names (Redis, or this process's memory). */
export const operatorWithSessionsLive = (command: DatabaseOpener) =>
  Sessions.Default.pipe(Layer.provideMerge(StoresFromConfig), Layer.provideMerge(operatorLive(command)))
