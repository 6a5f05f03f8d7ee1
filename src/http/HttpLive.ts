/**
 * The HTTP application: the API's handlers, the error envelope, and the documentation
 * (OpenAPI 3.1 JSON at /api/docs-json, an interactive reference at /api/docs).
 */
import { HttpApiBuilder, HttpApiScalar } from "@effect/platform"
import { Effect, Layer } from "effect"
import { AppConfig } from "../layers/AppConfig"
import { documentedAt } from "./Api"
import { ErrorEnvelopeLive } from "./ErrorEnvelope"
import { MetricsRouteLive } from "./MetricsHttp"
import { AdminTokenLive } from "./AdminToken"
import { AdminDashboardLive } from "./AdminDashboardHttp"
import { AdminDepositsLive } from "./AdminDepositsHttp"
import { AdminRafflesLive } from "./AdminRafflesHttp"
import { AdminUsersLive } from "./AdminUsersHttp"
import { AdminWithdrawalsLive } from "./AdminWithdrawalsHttp"
import { AuthLive, IdpLive } from "./AuthHttp"
import { AdminAuthenticationLive, AuthenticationLive } from "./Authentication"
import { BattlesLive } from "./BattlesHttp"
import { CasesLive } from "./CasesHttp"
import { CatalogAdminLive } from "./CatalogAdminHttp"
import { DepositsLive } from "./DepositsHttp"
import { HealthLive } from "./HealthHttp"
import { InventoryLive } from "./InventoryHttp"
import { LiveDropsAdminLive, LiveDropsLive } from "./LiveDropsHttp"
import { NotificationsLive } from "./NotificationsHttp"
import { OpeningsLive } from "./OpeningsHttp"
import { PaymentCallbackLive } from "./PaymentCallbackHttp"
import { ProvablyFairLive } from "./ProvablyFairHttp"
import { RafflesLive } from "./RafflesHttp"
import { RealtimeLive } from "./RealtimeHttp"
import { SandboxLive } from "./SandboxHttp"
import { UpgradesLive } from "./UpgradesHttp"
import { RateLimitLive } from "./RateLimit"
import { RequestBodyLive } from "./RequestBody"
import { ResponseHeadersLive } from "./ResponseHeaders"
import { WebhooksLive } from "./WebhooksHttp"
import { WithdrawalsLive } from "./WithdrawalsHttp"

export const DOCS_PATH = "/api/docs"
export const OPENAPI_PATH = "/api/docs-json"

const Docs = Layer.mergeAll(
  HttpApiBuilder.middlewareOpenApi({ path: OPENAPI_PATH }),
  HttpApiScalar.layer({ path: DOCS_PATH })
)

/**
 * API-level middlewares: the one added last wraps the others, so the error envelope is added after
 * the rate limiter and also rewrites what fails inside it (a store outage while counting). The body
 * limits come first, closest to the endpoints: a request over a rate limit is refused before them.
 */
const Middlewares = ErrorEnvelopeLive.pipe(
  Layer.provide(RateLimitLive),
  Layer.provide(ResponseHeadersLive),
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
    NotificationsLive,
    AdminUsersLive,
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
