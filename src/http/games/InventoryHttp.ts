/** Handlers of the inventory endpoints. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { SaleResult, SellAllResult } from "../../schema/games/Inventory"
import { Inventory } from "../../services/games/Inventory"
import { Api } from "../Api"
import { Authentication, CurrentUser } from "../identity/Authentication"
import { idempotent } from "../platform/Idempotent"
import { Idempotency } from "../../services/platform/Idempotency"
import { Identities } from "../../services/identity/Identities"
import { buildOnly } from "../platform/RequestContext"

export const InventoryLive = HttpApiBuilder.group(Api, "inventory", Effect.fnUntraced(function*(handlers) {
  const inventory = yield* Inventory
  return handlers
    .handle("list", ({ urlParams }) => Effect.flatMap(CurrentUser, ({ user }) => inventory.list(user.id, urlParams)))
    .handle("sell", ({ headers, path }) =>
      Effect.flatMap(CurrentUser, ({ user }) =>
        idempotent(
          { userId: user.id, headers, operation: "inventory.sell", input: { path }, response: SaleResult },
          inventory.sell(user.id, path.id)
        )))
    .handle("sellAll", ({ headers }) =>
      Effect.flatMap(CurrentUser, ({ user }) =>
        idempotent(
          { userId: user.id, headers, operation: "inventory.sellAll", input: {}, response: SellAllResult },
          inventory.sellAll(user.id)
        )))
})).pipe(buildOnly([Authentication, Identities, Idempotency, Inventory]))
