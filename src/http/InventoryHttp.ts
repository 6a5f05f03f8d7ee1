/** Handlers of the inventory endpoints. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { SaleResult, SellAllResult } from "../schema/Inventory"
import { Inventory } from "../services/Inventory"
import { Api } from "./Api"
import { CurrentUser } from "./Authentication"
import { idempotent } from "./Idempotent"

export const InventoryLive = HttpApiBuilder.group(Api, "inventory", (handlers) =>
  Effect.gen(function*() {
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
  }))
