/** The money ledger's vocabulary (docs/rules.md#ledger-and-money). */
import { Schema } from "effect"
import { TransactionId } from "../platform/Ids"

/** Movements that add to the user's balance. */
export const CreditType = Schema.Literal("DEPOSIT", "WITHDRAWAL_REFUND", "BATTLE_REFUND", "ITEM_SELL")
export type CreditType = typeof CreditType.Type

/** Movements that take from the user's balance; each is refused rather than overdraw. */
export const DebitType = Schema.Literal("WITHDRAWAL", "CASE_OPEN", "BATTLE_ENTRY", "RAFFLE_TICKET")
export type DebitType = typeof DebitType.Type

export const TransactionType = Schema.Literal(...CreditType.literals, ...DebitType.literals, "ADMIN_ADJUSTMENT")
export type TransactionType = typeof TransactionType.Type

/** Who is on the other side of a movement: the platform itself, or money entering/leaving it. */
const Counterparty = Schema.Literal("HOUSE", "EXTERNAL")
type Counterparty = typeof Counterparty.Type

export const counterpartyOf = (type: TransactionType): Counterparty =>
  type === "DEPOSIT" || type === "WITHDRAWAL" || type === "WITHDRAWAL_REFUND" ? "EXTERNAL" : "HOUSE"

/** What a movement refers to, e.g. `{ type: "CASE", id: caseId }`. */
export interface Reference {
  readonly type: string
  readonly id: bigint
}

/** The outcome of a posted movement. */
export interface Posting {
  readonly transactionId: TransactionId
  readonly balanceAfterCents: bigint
}
