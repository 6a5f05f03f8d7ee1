/** The signed-in user's inventory and its sale (D8). */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { InventoryItemId, InventoryPage, InventoryStatus, SaleResult, SellAllResult } from "../schema/Inventory"
import { PageParams } from "../schema/Pagination"
import { Authentication } from "./Authentication"
import * as HttpError from "./HttpErrors"
import { IdempotencyKeyHeader } from "./Idempotent"

/** `status` absent: entries of every status. */
export const InventoryQuery = Schema.Struct({
  ...PageParams,
  status: Schema.optional(
    InventoryStatus.annotations({ message: () => `must be one of ${InventoryStatus.literals.join(", ")}` })
  )
}).annotations({ parseOptions: { errors: "all" } })

export class InventoryApi extends HttpApiGroup.make("inventory")
  .add(HttpApiEndpoint.get("list", "/inventory").setUrlParams(InventoryQuery).addSuccess(InventoryPage))
  .add(
    HttpApiEndpoint.post("sell", "/inventory/:id/sell")
      .setPath(Schema.Struct({ id: InventoryItemId }))
      .setHeaders(IdempotencyKeyHeader)
      .addSuccess(SaleResult)
      .addError(HttpError.ItemNotAvailable)
      .addError(HttpError.IdempotencyKeyReused)
      .addError(HttpError.OperationInProgress)
  )
  .add(
    HttpApiEndpoint.post("sellAll", "/inventory/sell-all")
      .setHeaders(IdempotencyKeyHeader)
      .addSuccess(SellAllResult)
      .addError(HttpError.IdempotencyKeyReused)
      .addError(HttpError.OperationInProgress)
  )
  .middleware(Authentication)
{}
