/** The signed-in user's inventory and its sale (docs/rules.md#inventory-and-selling). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { InventoryItemId, InventoryPage, InventoryQuery, SaleResult, SellAllResult } from "../../schema/games/Inventory"
import { Authentication } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"
import { moneyMoving } from "../platform/Idempotent"
import { documented } from "../platform/OpenApiDocs"

export class InventoryApi extends HttpApiGroup.make("inventory")
  .annotate(OpenApi.Description, "The items a user won, and selling them back for balance.")
  .add(
    HttpApiEndpoint.get("list", "/inventory").setUrlParams(InventoryQuery).addSuccess(InventoryPage)
      .pipe(documented("My inventory", "The user's inventory entries with their values in cents, paged; `status` " +
        "narrows the list."))
  )
  .add(
    HttpApiEndpoint.post("sell", "/inventory/:id/sell").setPath(Schema.Struct({ id: InventoryItemId }))
      .addSuccess(SaleResult)
      .addError(HttpError.ItemNotAvailable)
      .pipe(moneyMoving)
      .pipe(documented("Sell an item", "Sells one inventory item back at its current value: the item leaves the " +
        "inventory and the balance is credited in the same transaction."))
  )
  .add(
    HttpApiEndpoint.post("sellAll", "/inventory/sell-all").addSuccess(SellAllResult)
      .pipe(moneyMoving)
      .pipe(documented("Sell all items", "Sells every available item of the user at its current value in one " +
        "transaction; answers how many were sold, the cents credited and the new balance."))
  )
  .middleware(Authentication)
{}
