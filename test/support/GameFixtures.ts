/** A catalog and funded players for game tests, made through the services and the public API. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { ItemId } from "../../src/schema/platform/Ids"
import { Catalog } from "../../src/services/games/Catalog"
import { signIn } from "./SignIn"
import type { TestClient } from "./TestApp"

let seq = 0

/**
 * Three items (common 100, rare 5000, jackpot 50000 cents) and a case of them at `priceCents`. Its
 * expected value is 1040 cents, far above a 500-cent price: tests use it to hand out items, so it is
 * saved as promotional (paying back more than the house edge on purpose: docs/rules.md#house-edge-rule).
 */
export const makeCase = (options: { readonly priceCents?: bigint; readonly flipChance?: number; readonly isActive?: boolean } = {}) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog
    const n = ++seq
    const item = (name: string, rarity: "CONSUMER" | "COVERT" | "EXTRAORDINARY", valueCents: bigint) =>
      catalog.createItem({ name: `${name} ${n}`, rarity, valueCents, imageUrl: `/i/${n}.png`, isUpgradable: true })
    const common = yield* item("Common", "CONSUMER", 100n)
    const rare = yield* item("Rare", "COVERT", 5_000n)
    const jackpot = yield* item("Jackpot", "EXTRAORDINARY", 50_000n)
    const created = yield* catalog.createCase({
      name: `Test Case ${n}`,
      slug: `test-case-${n}-${Date.now()}`,
      imageUrl: "/c.png",
      priceCents: options.priceCents ?? 500n,
      flipChance: options.flipChance ?? 0,
      isActive: options.isActive ?? true,
      promotional: true,
      items: [
        { itemId: common.id, dropChance: 0.9 },
        { itemId: rare.id, dropChance: 0.09 },
        { itemId: jackpot.id, dropChance: 0.01 }
      ]
    })
    return { kase: created.case, items: { common, rare, jackpot } as Record<string, { readonly id: ItemId }> }
  }).pipe(Effect.provide(Catalog.Default))

/** A signed-in player with `balanceCents`, credited by an administrator through the API. */
export const fundedPlayer = (client: TestClient, login: string, balanceCents: number) =>
  Effect.gen(function*() {
    const player = yield* signIn(client, login)
    const me = (yield* client.get("/api/auth/me", player.auth)).body
    if (balanceCents > 0) {
      const admin = yield* signIn(client, "root")
      const adjusted = yield* client.post(
        `/api/admin/users/${me.id}/adjust-balance`,
        { amountCents: balanceCents, reason: "test funds" },
        admin.auth
      )
      if (adjusted.status !== 200) throw new Error(`funding failed: ${JSON.stringify(adjusted.body)}`)
    }
    return { ...player, id: me.id as string }
  })

/**
 * Puts entries of `itemIds` into the user's inventory, as openings would, won at `acquiredAt` (default: the
 * database's now); returns the entry ids in order.
 */
export const grantItems = (userId: string, itemIds: ReadonlyArray<bigint | string>, acquiredAt?: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.forEach(itemIds, (itemId) =>
      Effect.map(
        sql<{ id: string }>`INSERT INTO inventory_items (user_id, item_id, source, acquired_at, updated_at)
                            VALUES (${userId}, ${itemId}, 'CASE_OPEN', COALESCE(${acquiredAt ?? null}::timestamptz, now()), now())
                            RETURNING id`,
        (rows) => rows[0]!.id
      )))

/** The player's balance, as `GET /api/auth/me` answers it. */
export const balanceOf = (client: TestClient, auth: Record<string, string>) =>
  Effect.map(client.get("/api/auth/me", auth), (r) => r.body.balanceCents as number)
