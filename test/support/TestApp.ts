/**
 * The whole HTTP application in-process, for tests: the application of src/App.ts (without its
 * background jobs) over test layers; requests go through the real router, handlers, middleware and
 * error envelope, without a socket. Built inside the test's fiber, so TestClock drives
 * everything the handlers do with time. The database comes from the surrounding `layer(TestDatabase)`.
 */
import { HttpApiBuilder, HttpApp, type HttpServer, HttpServerRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import type { Server } from "node:http"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { type Context, Effect, Layer, Redacted, Option, type Runtime, type Scope } from "effect"
import { makeAccessLog } from "../../src/http/platform/AccessLog"
import { createHttpServer } from "../../src/http/platform/NodeServer"
import { application } from "../../src/App"
import { AppConfig, type AppConfigShape, type StartupError } from "../../src/layers/AppConfig"
import type { KeyValue } from "../../src/layers/stores/KeyValue"
import { Lifecycle } from "../../src/layers/Lifecycle"
import { MetricsExport } from "../../src/layers/Observability"
import { Randomness } from "../../src/layers/Randomness"
import { type StoreServices, Stores } from "../../src/layers/stores/Stores"
import type { IdentityProvider } from "../../src/layers/IdentityProvider"
import { TestIdentityProvider } from "./TestIdentityProvider"
import type { PaymentGateway } from "../../src/layers/PaymentGateway"
import { TestGateway } from "./TestGateway"
import { makeSandboxCallback, type SandboxCallback } from "../../src/layers/gateway/SandboxCallback"

export const testConfig: AppConfigShape = {
  production: false,
  jurisdiction: "NONE",
  autoPayoutMaxCents: 100_000,
  businessTimeZone: "UTC",
  port: 3000,
  publicUrl: "http://localhost:3000",
  dataDir: "./.data-test",
  databaseUrl: Option.none(),
  migrateOnStart: true,
  redis: Option.none(),
  redisKeyPrefix: "test:",
  trustProxy: 0,
  trustedProxies: ["127.0.0.0/8", "::1/128"],
  sandbox: true,
  serviceName: "GamePlatform",
  webhookBlockPrivateTargets: false,
  oidc: {
    issuer: Option.none(),
    clientId: "game-platform",
    clientSecret: Redacted.make("test-client-secret"),
    devIdpPort: 0
  },
  loginRedirectUrl: "/",
  adminIdpIds: [],
  rateLimits: {
    global: { count: 100, windowMs: 60_000 },
    auth: { count: 10, windowMs: 60_000 },
    caseOpen: { count: 5, windowMs: 60_000 },
    withdrawal: { count: 3, windowMs: 60_000 },
    twoFactorVerify: { count: 5, windowMs: 300_000 },
    twoFactorDisable: { count: 5, windowMs: 300_000 },
    identityVerify: { count: 1000, windowMs: 3_600_000 }
  },
  gateway: {
    url: Option.none(),
    key: Option.none(),
    allowedIps: [],
    requireTimestamp: false,
    depositTtlMinutes: 30,
    sandboxCryptoDelaySeconds: 0
  },
  kyc: { url: Option.none(), key: Option.none() },
  exclusionRegistry: { url: Option.none(), key: Option.none() },
  secretsGenerated: false,
  secrets: {
    webhookSecret: Redacted.make("test-webhook-secret"),
    adminToken: Redacted.make("test-admin-token"),
    twoFactorKey: Redacted.make(Buffer.alloc(32, 7)),
    identityKey: Option.some(Redacted.make(Buffer.alloc(32, 9)))
  }
}

export interface TestResponse {
  readonly status: number
  readonly headers: Headers
  /** Parsed JSON when the response is JSON, else the text. */
  readonly body: any
}

export interface TestClient {
  readonly request: (path: string, init?: RequestInit) => Effect.Effect<TestResponse>
  /** The raw response, for streams (Server-Sent Events) read as they arrive. */
  readonly open: (path: string, init?: RequestInit) => Effect.Effect<Response>
  readonly get: (path: string, headers?: Record<string, string>) => Effect.Effect<TestResponse>
  readonly post: (path: string, body?: unknown, headers?: Record<string, string>) => Effect.Effect<TestResponse>
  readonly put: (path: string, body?: unknown, headers?: Record<string, string>) => Effect.Effect<TestResponse>
  /**
   * Serves the same app over a real socket (Node's server, as in production; `createServer` chooses its
   * options) until the scope closes; the base URL, e.g. `http://127.0.0.1:40123`.
   */
  readonly listen: (createServer?: () => Server) => Effect.Effect<string, never, Scope.Scope>
  /** A service of this app as its handlers see it (e.g. a sandbox twin's state). */
  readonly service: <I, S>(tag: Context.Tag<I, S>) => Effect.Effect<S>
}

export interface TestAppOptions {
  /** The stores; the in-memory twins unless a test needs a store in a particular state. */
  readonly stores?: Layer.Layer<StoreServices>
  /** Settings that differ from `testConfig`. */
  readonly config?: Partial<AppConfigShape>
  /** The identity provider; a quick stand-in unless the test drives the real OpenID flow. */
  readonly identityProvider?: Layer.Layer<IdentityProvider, StartupError, AppConfig | KeyValue>
  /** Where seeds come from; a fixed stream by default, so rolls and items are the same on every run. */
  readonly randomness?: Layer.Layer<Randomness>
  /**
   * The payment gateway; `TestGateway` (payouts and charges succeed) unless a test brings its own,
   * e.g. the sandbox, which reaches this app's callback in-process.
   */
  readonly gateway?: Layer.Layer<PaymentGateway, never, AppConfig | SandboxCallback>
  /** The process lifecycle; a fresh one unless a test needs to begin the shutdown itself. */
  readonly lifecycle?: Layer.Layer<Lifecycle>
  /** The app's logger and level (`Logger.replace`, `Logger.minimumLogLevel`), e.g. to read what it logs. */
  readonly logging?: Layer.Layer<never>
  /** Serves through the access log, as `npm start` does. */
  readonly accessLog?: boolean
}

/** Builds the application over the surrounding database. */
export const makeTestClient = (options: TestAppOptions = {}) =>
  Effect.gen(function*() {
    const database = yield* Effect.context<SqlClient.SqlClient | PgClient.PgClient>()
    // The sandbox gateway calls our callback "over HTTP": here, into this very app once it is built.
    let handler: ((request: Request) => Promise<Response>) | undefined
    const sandboxCallback = makeSandboxCallback((url, init) => handler!(new Request(url, init)))
    const runtime = yield* Layer.toRuntime(
      application({
        config: Layer.succeed(AppConfig, { ...testConfig, ...options.config }),
        infrastructure: Layer.mergeAll(
          Layer.succeedContext(database),
          options.stores ?? Stores.memory,
          options.randomness ?? Randomness.seeded("test"),
          options.lifecycle ?? Lifecycle.live,
          MetricsExport.prometheus
        ),
        identityProvider: options.identityProvider ?? TestIdentityProvider,
        gateway: options.gateway ?? TestGateway,
        sandboxCallback
      }, Layer.empty).pipe(
        Layer.provideMerge(HttpApiBuilder.Router.Live),
        Layer.provideMerge(HttpApiBuilder.Middleware.layer),
        Layer.provideMerge(options.logging ?? Layer.empty)
      )
    )
    const api = yield* HttpApiBuilder.httpApp.pipe(Effect.provide(runtime))
    const served = options.accessLog === true ? (yield* makeAccessLog)(api) : api
    // In-process requests have no socket: they come from this machine, as a local client's would.
    const app = Effect.updateService(
      served,
      HttpServerRequest.HttpServerRequest,
      (request) => Option.isSome(request.remoteAddress) ? request : request.modify({ remoteAddress: "127.0.0.1" })
    )
    // The runtime holds every service the app needs; its type lists them, the app's does not.
    handler = HttpApp.toWebHandlerRuntime(runtime as any)(app)

    const request = (path: string, init?: RequestInit) =>
      Effect.promise(async () => {
        const response = await handler!(new Request(`http://localhost${path}`, init))
        const text = await response.text()
        const isJson = response.headers.get("content-type")?.includes("json") ?? false
        return { status: response.status, headers: response.headers, body: isJson && text ? JSON.parse(text) : text }
      })

    const listen = (createServer: () => Server = () => createHttpServer()) =>
      Effect.gen(function*() {
        const server = yield* NodeHttpServer.make(createServer, { port: 0, host: "127.0.0.1" }).pipe(Effect.orDie)
        yield* server.serve(app).pipe(Effect.provide(runtime as Runtime.Runtime<never>), Effect.provide(NodeHttpServer.layerContext))
        const address = server.address as HttpServer.TcpAddress
        return `http://127.0.0.1:${address.port}`
      })

    const withBody = (method: string, path: string, body: unknown, headers?: Record<string, string>) =>
      request(path, {
        method,
        headers: { "content-type": "application/json", ...headers },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body)
      })

    const client: TestClient = {
      listen,
      request,
      open: (path, init) => Effect.promise(() => handler!(new Request(`http://localhost${path}`, init))),
      service: (tag) => Effect.provide(tag, runtime as Runtime.Runtime<any>),
      get: (path, headers) => request(path, { headers }),
      post: (path, body, headers) => withBody("POST", path, body, headers),
      put: (path, body, headers) => withBody("PUT", path, body, headers)
    }
    return client
  })
