/**
 * The whole HTTP interface: every group, and the errors any endpoint may answer with (docs/rules.md#error-body).
 * `.prefix("/api")` must stay last: it rewrites only the groups added before it.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { AdminAuditApi } from "./admin/AdminAuditApi"
import { AdminDashboardApi } from "./admin/AdminDashboardApi"
import { AdminDepositsApi } from "./admin/AdminDepositsApi"
import { AdminPlayersApi } from "./admin/AdminPlayersApi"
import { AdminRafflesApi } from "./admin/AdminRafflesApi"
import { AdminUsersApi } from "./admin/AdminUsersApi"
import { AdminWithdrawalsApi } from "./admin/AdminWithdrawalsApi"
import { AuthApi, IdpApi } from "./identity/AuthApi"
import { BattlesApi } from "./battles/BattlesApi"
import { CasesApi } from "./games/CasesApi"
import { CatalogAdminApi } from "./admin/CatalogAdminApi"
import { ComplianceApi } from "./identity/ComplianceApi"
import { DepositsApi } from "./money/DepositsApi"
import { HealthApi } from "./platform/HealthApi"
import { InventoryApi } from "./games/InventoryApi"
import * as HttpError from "./platform/HttpErrors"
import { LiveDropsAdminApi, LiveDropsApi } from "./games/LiveDropsApi"
import { NotificationsApi } from "./platform/NotificationsApi"
import { withoutDecodeError } from "./platform/OpenApiCleanup"
import { OpeningsApi } from "./games/OpeningsApi"
import { PaymentCallbackApi } from "./money/PaymentCallbackApi"
import { ProvablyFairApi } from "./games/ProvablyFairApi"
import { RafflesApi } from "./raffles/RafflesApi"
import { RealtimeApi } from "./platform/RealtimeApi"
import { SandboxApi } from "./money/SandboxApi"
import { UpgradesApi } from "./games/UpgradesApi"
import { WebhooksApi } from "./platform/WebhooksApi"
import { WithdrawalsApi } from "./money/WithdrawalsApi"

export class Api extends HttpApi.make("game-platform")
  .add(HealthApi)
  .add(IdpApi)
  .add(AuthApi)
  .add(ComplianceApi)
  .add(NotificationsApi)
  .add(AdminUsersApi)
  .add(AdminPlayersApi)
  .add(AdminAuditApi)
  .add(CatalogAdminApi)
  .add(CasesApi)
  .add(OpeningsApi)
  .add(ProvablyFairApi)
  .add(LiveDropsApi)
  .add(LiveDropsAdminApi)
  .add(RealtimeApi)
  .add(WebhooksApi)
  .add(WithdrawalsApi)
  .add(AdminWithdrawalsApi)
  .add(InventoryApi)
  .add(UpgradesApi)
  .add(DepositsApi)
  .add(PaymentCallbackApi)
  .add(SandboxApi)
  .add(AdminDepositsApi)
  .add(BattlesApi)
  .add(RafflesApi)
  .add(AdminRafflesApi)
  .add(AdminDashboardApi)
  .addError(HttpError.Validation)
  .addError(HttpError.MalformedBody)
  .addError(HttpError.NotFound)
  .addError(HttpError.Unauthenticated)
  .addError(HttpError.RateLimited)
  .addError(HttpError.PayloadTooLarge)
  .addError(HttpError.UnsupportedMediaType)
  .addError(HttpError.Internal)
  .addError(HttpError.ServiceUnavailable)
  .addError(HttpError.PleaseRetry)
  .annotate(OpenApi.Title, "Game Platform API")
  .annotate(OpenApi.Version, "0.1.0")
  .annotate(
    OpenApi.Description,
    "Case openings with provably fair rolls, upgrades, battles, raffles, PIX deposits and withdrawals. Money is integer BRL cents; ids are strings."
  )
  .annotate(OpenApi.Transform, withoutDecodeError)
  .prefix("/api")
{}

/**
 * The API as one deployment documents it: `servers` is its public address (PUBLIC_URL), the contact
 * points at its API reference there; the license is proprietary (an SPDX reference of our own).
 */
export const documentedAt = (publicUrl: string) =>
  Api.annotateContext(OpenApi.annotations({
    servers: [{ url: publicUrl, description: "This deployment" }],
    transform: (spec) => {
      const document = withoutDecodeError(spec)
      const license = { name: "Proprietary", identifier: "LicenseRef-Proprietary" }
      const contact = { name: "API reference", url: `${publicUrl}/api/docs` }
      return { ...document, info: { ...document.info, license, contact } }
    }
  }))
