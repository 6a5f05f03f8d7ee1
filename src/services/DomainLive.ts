/** Every domain service, to be given the infrastructure (database, stores, clock, outside world). */
import { Layer } from "effect"
import { Audit } from "./Audit"
import { Battles } from "./Battles"
import { CaseOpenings } from "./CaseOpenings"
import { Catalog } from "./Catalog"
import { Dashboard } from "./Dashboard"
import { Deposits } from "./Deposits"
import { CatalogSeed } from "./CatalogSeed"
import { GameStats } from "./GameStats"
import { Idempotency } from "./Idempotency"
import { Inventory } from "./Inventory"
import { Ledger } from "./Ledger"
import { LiveDrops } from "./LiveDrops"
import { Notifications } from "./Notifications"
import { ProvablyFair } from "./ProvablyFair"
import { Raffles } from "./Raffles"
import { Realtime } from "./Realtime"
import { Sessions } from "./Sessions"
import { TwoFactor } from "./TwoFactor"
import { Upgrades } from "./Upgrades"
import { Users } from "./Users"
import { WebhookDelivery } from "./WebhookDelivery"
import { Webhooks } from "./Webhooks"
import { Withdrawals } from "./Withdrawals"

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
