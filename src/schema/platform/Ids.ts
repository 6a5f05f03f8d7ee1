/**
 * Record ids (docs/rules.md#ids): PostgreSQL identity bigints, strings in JSON, `bigint` in code.
 * The `FromString` schemas validate path parameters: only a positive decimal integer is an id.
 */
import { Schema } from "effect"

/** The largest PostgreSQL bigint: a larger id names no record, and the database would refuse it. */
const MAX_ID = 9_223_372_036_854_775_807n
const notAnId = { message: () => "must be a positive integer id" }

/** An id as it comes in (path or body): a positive decimal integer within bigint, still a string. */
export const IdString = Schema.String.pipe(
  Schema.pattern(/^[1-9][0-9]{0,18}$/, notAnId),
  Schema.filter((text) => BigInt(text) <= MAX_ID, notAnId)
)

/** A path or body id, decoded to a `bigint` branded per entity. */
export const idFromString = <B extends string>(brand: B) =>
  IdString.pipe(Schema.compose(Schema.BigInt), Schema.brand(brand))

export const UserId = idFromString("UserId")
export type UserId = typeof UserId.Type

export const TransactionId = idFromString("TransactionId")
export type TransactionId = typeof TransactionId.Type

export const ItemId = idFromString("ItemId")
export type ItemId = typeof ItemId.Type

export const CaseId = idFromString("CaseId")
export type CaseId = typeof CaseId.Type
