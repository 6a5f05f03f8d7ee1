/**
 * Record ids (DECISIONS D3): PostgreSQL identity bigints, strings in JSON, `bigint` in code.
 * The `FromString` schemas validate path parameters: only a positive decimal integer is an id.
 */
import { Schema } from "effect"

const positiveBigInt = Schema.BigInt.pipe(
  Schema.filter((n) => n > 0n, { message: () => "must be a positive integer id" })
)

/** A path or body id: a positive decimal integer in a string, branded per entity. */
export const idFromString = <B extends string>(brand: B) =>
  Schema.String.pipe(
    Schema.pattern(/^[1-9][0-9]{0,18}$/, { message: () => "must be a positive integer id" }),
    Schema.compose(positiveBigInt),
    Schema.brand(brand)
  )

export const UserId = idFromString("UserId")
export type UserId = typeof UserId.Type

export const TransactionId = idFromString("TransactionId")
export type TransactionId = typeof TransactionId.Type

export const ItemId = idFromString("ItemId")
export type ItemId = typeof ItemId.Type

export const CaseId = idFromString("CaseId")
export type CaseId = typeof CaseId.Type
