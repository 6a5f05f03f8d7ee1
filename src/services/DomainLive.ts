/** Every domain service, to be given the infrastructure (database, stores, clock, outside world). */
import { Layer } from "effect"
import { Audit } from "./admin/Audit"
import { Battles } from "./battles/Battles"
import { CaseOpenings } from "./games/CaseOpenings"
import { Catalog } from "./games/Catalog"
import { Dashboard } from "./admin/Dashboard"
import { Deposits } from "./money/Deposits"
import { CatalogSeed } from "./games/CatalogSeed"
import { GameStats } from "./games/GameStats"
import { Idempotency } from "./platform/Idempotency"
import { Inventory } from "./games/Inventory"
import { Ledger } from "./money/Ledger"
import { LiveDrops } from "./games/LiveDrops"
import { Notifications } from "./platform/Notifications"
import { ProvablyFair } from "./games/ProvablyFair"
import { Raffles } from "./raffles/Raffles"
import { Realtime } from "./platform/Realtime"
import { Sessions } from "./identity/Sessions"
import { TwoFactor } from "./identity/TwoFactor"
import { Upgrades } from "./games/Upgrades"
import { Users } from "./identity/Users"
import { WebhookDelivery } from "./platform/WebhookDelivery"
import { Webhooks } from "./platform/Webhooks"
import { Withdrawals } from "./money/Withdrawals"

/**
 * Each `Default` brings the services it uses (its `dependencies`); layers are memoized by reference
 * within one build, so each service is built once and shared by all that use it.
 */
export const DomainLive = Layer.mergeAll(
  Users.Default,
  Sessions.Default,
  TwoFactor.Default,
  Catalog.Default,
  CatalogSeed.Default,
  CaseOpenings.Default,
  Upgrades.Default,
  Inventory.Default,
  ProvablyFair.Default,
  GameStats.Default,
  LiveDrops.Default,
  Battles.Default,
  Raffles.Default,
  Ledger.Default,
  Deposits.Default,
  Withdrawals.Default,
  Dashboard.Default,
  Audit.Default,
  Idempotency.Default,
  Notifications.Default,
  Realtime.Default,
  Webhooks.Default,
  WebhookDelivery.Default
)
