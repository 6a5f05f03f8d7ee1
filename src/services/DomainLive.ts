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

/** Services that others build on: they need only the infrastructure. */
const Foundation = Layer.mergeAll(
  Catalog.Default,
  Audit.Default,
  Notifications.Default,
  Ledger.Default,
  Users.Default,
  ProvablyFair.Default,
  LiveDrops.Default,
  Realtime.Default
)

export const DomainLive = Layer.mergeAll(
  Upgrades.Default.pipe(Layer.provideMerge(Inventory.Default)),
  Webhooks.Default,
  WebhookDelivery.Default,
  CatalogSeed.DefaultWithoutDependencies,
  Sessions.Default,
  TwoFactor.DefaultWithoutDependencies,
  CaseOpenings.Default,
  GameStats.Default,
  Withdrawals.Default,
  Deposits.Default,
  Battles.Default,
  Raffles.Default,
  Dashboard.Default,
  Idempotency.Default
).pipe(Layer.provideMerge(Foundation))
