/**
 * Battle settlement (docs/rules.md#battle-settlement, with its tie-breaks) as a pure function: the
 * items dropped and the winners in, the settlement records out. It moves items only; BattleRun applies
 * the records in the battle's transaction (step 7).
 *
 * 1. Every dropped item counts, with its value.
 * 2. fairShare = floor(total dropped / winners).
 * 3. Items worth more than fairShare go to the pool (REMOVED_TO_POOL, no user).
 * 4. The rest, most valuable first, each to the winner with the lowest accumulated value (ties: the
 *    lowest slot): DROPPED.
 * 5-6. A winner short of fairShare by more than TOLERANCE gets catalog items (ADDED_FROM_POOL, no
 *    round): the head of the candidates within deficit ± TOLERANCE (by distance, then higher value,
 *    then lower id; at most MAX_CANDIDATES considered), else greedily the most valuable item worth at
 *    most what is left, until nothing fits or nothing is left. The catalog is unlimited: an item can
 *    be added more than once.
 */
import type { SettlementType } from "../../schema/battles/Battle"

/** The settlement tolerance in cents (docs/rules.md#battle-settlement). */
export const TOLERANCE = 100n
/** At most 5 compensation candidates (docs/rules.md#battle-settlement). */
const MAX_CANDIDATES = 5


export interface Drop<U extends bigint, I extends bigint> {
  readonly userId: U
  readonly itemId: I
  readonly valueCents: bigint
  readonly roundNumber: number
}

interface Winner<U extends bigint> {
  readonly userId: U
  readonly slot: number
}

export interface PoolItem<I extends bigint> {
  readonly itemId: I
  readonly valueCents: bigint
}

interface SettlementRecord<U extends bigint, I extends bigint> {
  readonly type: SettlementType
  /** null exactly for REMOVED_TO_POOL. */
  readonly userId: U | null
  readonly itemId: I
  readonly valueCents: bigint
  /** null exactly for ADDED_FROM_POOL. */
  readonly roundNumber: number | null
}

interface Settlement<U extends bigint, I extends bigint> {
  readonly fairShare: bigint
  readonly records: ReadonlyArray<SettlementRecord<U, I>>
  readonly summary: {
    readonly totalDropped: bigint
    readonly removedToPool: bigint
    readonly addedFromPool: bigint
    readonly winnersCount: number
  }
}

const abs = (n: bigint) => (n < 0n ? -n : n)
const byValueDescThenId = <I extends bigint>(a: PoolItem<I>, b: PoolItem<I>) =>
  a.valueCents !== b.valueCents ? (a.valueCents > b.valueCents ? -1 : 1) : a.itemId < b.itemId ? -1 : a.itemId > b.itemId ? 1 : 0

/** Step 6: the catalog items that make up `deficit`. */
const compensation = <I extends bigint>(deficit: bigint, pool: ReadonlyArray<PoolItem<I>>): ReadonlyArray<PoolItem<I>> => {
  const usable = pool.filter((item) => item.valueCents > 0n)
  const candidates = usable
    .filter((item) => abs(item.valueCents - deficit) <= TOLERANCE)
    .sort((a, b) => {
      const da = abs(a.valueCents - deficit)
      const db = abs(b.valueCents - deficit)
      return da !== db ? (da < db ? -1 : 1) : byValueDescThenId(a, b)
    })
    .slice(0, MAX_CANDIDATES)
  if (candidates.length > 0) return [candidates[0]!]
  const byValue = [...usable].sort(byValueDescThenId)
  const taken: Array<PoolItem<I>> = []
  let left = deficit
  while (left > 0n) {
    const next = byValue.find((item) => item.valueCents <= left)
    if (next === undefined) break
    taken.push(next)
    left -= next.valueCents
  }
  return taken
}

export const settle = <U extends bigint, I extends bigint>(input: {
  readonly drops: ReadonlyArray<Drop<U, I>>
  readonly winners: ReadonlyArray<Winner<U>>
  readonly pool: ReadonlyArray<PoolItem<I>>
}): Settlement<U, I> => {
  if (input.winners.length === 0) throw new Error("settle: a battle has at least one winner")
  const totalDropped = input.drops.reduce((sum, d) => sum + d.valueCents, 0n)
  const fairShare = totalDropped / BigInt(input.winners.length)
  const records: Array<SettlementRecord<U, I>> = []

  for (const drop of input.drops) {
    if (drop.valueCents > fairShare) {
      records.push({ type: "REMOVED_TO_POOL", userId: null, itemId: drop.itemId, valueCents: drop.valueCents, roundNumber: drop.roundNumber })
    }
  }

  const winners = [...input.winners].sort((a, b) => a.slot - b.slot)
  const accumulated = new Map(winners.map((w) => [w.userId, 0n]))
  // Most valuable first; equal values in round order, then by item id, so the result is deterministic.
  const distributable = input.drops
    .filter((drop) => drop.valueCents <= fairShare)
    .sort((a, b) =>
      a.valueCents !== b.valueCents
        ? (a.valueCents > b.valueCents ? -1 : 1)
        : a.roundNumber !== b.roundNumber
        ? a.roundNumber - b.roundNumber
        : a.itemId < b.itemId ? -1 : a.itemId > b.itemId ? 1 : 0
    )
  for (const drop of distributable) {
    // `winners` is in slot order and the comparison strict, so ties go to the lowest slot.
    const receiver = winners.reduce((low, w) => (accumulated.get(w.userId)! < accumulated.get(low.userId)! ? w : low))
    accumulated.set(receiver.userId, accumulated.get(receiver.userId)! + drop.valueCents)
    records.push({ type: "DROPPED", userId: receiver.userId, itemId: drop.itemId, valueCents: drop.valueCents, roundNumber: drop.roundNumber })
  }

  for (const winner of winners) {
    const deficit = fairShare - accumulated.get(winner.userId)!
    if (deficit <= TOLERANCE) continue
    for (const item of compensation(deficit, input.pool)) {
      records.push({ type: "ADDED_FROM_POOL", userId: winner.userId, itemId: item.itemId, valueCents: item.valueCents, roundNumber: null })
    }
  }

  const sumOf = (type: SettlementType) => records.filter((r) => r.type === type).reduce((sum, r) => sum + r.valueCents, 0n)
  return {
    fairShare,
    records,
    summary: {
      totalDropped,
      removedToPool: sumOf("REMOVED_TO_POOL"),
      addedFromPool: sumOf("ADDED_FROM_POOL"),
      winnersCount: winners.length
    }
  }
}
