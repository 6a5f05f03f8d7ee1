/**
 * The HTTP application: the API's handlers, the error envelope, and the documentation
 * (OpenAPI 3.1 JSON at /api/docs-json, an interactive reference at /api/docs).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { AppConfig } from "../layers/AppConfig"
import { documentedAt } from "./Api"
import { apiReferenceLayer } from "./platform/ApiReference"
import { ErrorEnvelopeLive } from "./platform/ErrorEnvelope"
import { MetricsRouteLive } from "./platform/MetricsHttp"
import { AdminTokenLive } from "./platform/AdminToken"
import { AdminAuditLive } from "./admin/AdminAuditHttp"
import { AdminDashboardLive } from "./admin/AdminDashboardHttp"
import { AdminDepositsLive } from "./admin/AdminDepositsHttp"
import { AdminPlayersLive } from "./admin/AdminPlayersHttp"
import { AdminRafflesLive } from "./admin/AdminRafflesHttp"
import { AdminUsersLive } from "./admin/AdminUsersHttp"
import { AdminWithdrawalsLive } from "./admin/AdminWithdrawalsHttp"
import { AuthLive, IdpLive } from "./identity/AuthHttp"
import { AdminAuthenticationLive, AuthenticationLive } from "./identity/AuthenticationLive"
import { BattlesLive } from "./battles/BattlesHttp"
import { CasesLive } from "./games/CasesHttp"
import { CatalogAdminLive } from "./admin/CatalogAdminHttp"
import { ComplianceLive } from "./identity/ComplianceHttp"
import { DepositsLive } from "./money/DepositsHttp"
import { HealthLive } from "./platform/HealthHttp"
import { InventoryLive } from "./games/InventoryHttp"
import { LiveDropsAdminLive, LiveDropsLive } from "./games/LiveDropsHttp"
import { NotificationsLive } from "./platform/NotificationsHttp"
import { OpeningsLive } from "./games/OpeningsHttp"
import { PaymentCallbackLive } from "./money/PaymentCallbackHttp"
import { ProvablyFairLive } from "./games/ProvablyFairHttp"
import { RafflesLive } from "./raffles/RafflesHttp"
import { RealtimeLive } from "./platform/RealtimeHttp"
import { SandboxLive } from "./money/SandboxHttp"
import { UpgradesLive } from "./games/UpgradesHttp"
import { RateLimitLive } from "./platform/RateLimit"
import { RequestBodyLive } from "./platform/RequestBody"
import { ResponseHeadersLive } from "./platform/ResponseHeaders"
import { WebhooksLive } from "./platform/WebhooksHttp"
import { WithdrawalsLive } from "./money/WithdrawalsHttp"

export const DOCS_PATH = "/api/docs"
export const OPENAPI_PATH = "/api/docs-json"

/** The reference's script is served in front of the API (src/http/platform/ApiReference.ts). */
const Docs = Layer.mergeAll(
  HttpApiBuilder.middlewareOpenApi({ path: OPENAPI_PATH }),
  Layer.unwrapEffect(Effect.map(AppConfig, (config) => apiReferenceLayer({ path: DOCS_PATH, publicUrl: config.publicUrl })))
)

/**
 * API-level middlewares: the one added last wraps the others. The response headers wrap everything, so
 * every API answer carries them (a 429, an error envelope's). The error envelope is added after the rate
 * limiter and also rewrites what fails inside it (a store outage while counting). The body limits come
 * first, closest to the endpoints: a request over a rate limit is refused before them.
 */
const Middlewares = ResponseHeadersLive.pipe(
  Layer.provide(ErrorEnvelopeLive),
  Layer.provide(RateLimitLive),
  Layer.provide(RequestBodyLive)
)

/** The API, documented with this deployment's public address. */
const ApiDefinition = Layer.unwrapEffect(Effect.map(AppConfig, (config) => HttpApiBuilder.api(documentedAt(config.publicUrl))))

/** Everything the HTTP layer serves; needs the domain services and infrastructure beneath it. */
export const ApiLive = Layer.mergeAll(Docs, MetricsRouteLive, Middlewares).pipe(
  Layer.provideMerge(ApiDefinition),
  Layer.provide([
    HealthLive,
    IdpLive,
    AuthLive,
    ComplianceLive,
    NotificationsLive,
    AdminUsersLive,
    AdminPlayersLive,
    AdminAuditLive,
    CatalogAdminLive,
    CasesLive,
    OpeningsLive,
    ProvablyFairLive,
    LiveDropsLive,
    LiveDropsAdminLive,
    RealtimeLive,
    WebhooksLive,
    WithdrawalsLive,
    AdminWithdrawalsLive,
    InventoryLive,
    UpgradesLive,
    DepositsLive,
    PaymentCallbackLive,
    SandboxLive,
    AdminDepositsLive,
    BattlesLive,
    RafflesLive,
    AdminRafflesLive,
    AdminDashboardLive
  ]),
  Layer.provide([AdminTokenLive, AuthenticationLive, AdminAuthenticationLive])
)
