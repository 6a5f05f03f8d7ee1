/** Handlers of the inventory endpoints. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Inventory } from "../services/Inventory"
import { Api } from "./Api"
import { CurrentUser } from "./Authentication"

export const InventoryLive = HttpApiBuilder.group(Api, "inventory", (handlers) =>
  Effect.gen(function*() {
    const inventory = yield* Inventory
    return handlers
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentUser, ({ user }) => inventory.list(user.id, urlParams)))
      .handle("sell", ({ path }) => Effect.flatMap(CurrentUser, ({ user }) => inventory.sell(user.id, path.id)))
      .handle("sellAll", () => Effect.flatMap(CurrentUser, ({ user }) => inventory.sellAll(user.id)))
  }))
