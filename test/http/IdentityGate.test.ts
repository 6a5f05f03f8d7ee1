/**
 * The identity gate (docs/rules.md#identity-required): under JURISDICTION=BR every game or money action is 403
 * IDENTITY_REQUIRED until the player's identity is verified, and moves nothing; reading stays allowed. Under NONE
 * nothing changes. Each gated endpoint declares the refusal in the OpenAPI document.
 */
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import type { Jurisdiction } from "../../src/layers/AppConfig"
import { cpfOf } from "../support/Cpf"
import { balanceOf, fundedPlayer, grantItems, makeCase } from "../support/GameFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"
import { withdrawal } from "../support/WithdrawalFixtures"

const NOON_UTC = Date.parse("2026-11-26T12:00:00Z")
const GATED = [
  "open",
  "upgrade",
  "sell",
  "sellAll",
  "battleCreate",
  "battleJoin",
  "raffleTickets",
  "depositInitiate",
  "withdrawalRequest"
] as const

const app = (jurisdiction: Jurisdiction) =>
  makeTestClient({
    config: {
      jurisdiction,
      adminIdpIds: ["root"],
      rateLimits: {
        ...testConfig.rateLimits,
        global: { count: 1000, windowMs: 60_000 },
        auth: { count: 1000, windowMs: 60_000 },
        caseOpen: { count: 100, windowMs: 60_000 }
      }
    }
  })

let cpfs = 100_000_000
const verify = (client: TestClient, auth: Record<string, string>) =>
  Effect.gen(function*() {
    const response = yield* client.post(
      "/api/users/me/identity",
      { cpf: cpfOf(String(++cpfs + 300_000_000)), fullName: "Gated Player", birthDate: "1990-01-01" },
      auth
    )
    expect(response.status).toBe(200)
    // Under BR a verified player sets a loss and a play limit before playing (docs/responsible-gaming.md#limits-required).
    const limits = yield* client.put("/api/users/me/limits", { dailyLossCents: 100_000, dailyPlayMinutes: 600 }, auth)
    expect(limits.status).toBe(200)
  })

/**
 * A player with money and items, and what each gated action needs (a case, a battle to join, a raffle); the
 * nine actions as requests.
 */
const scene = (client: TestClient, login: string, verifyOthers: boolean) =>
  Effect.gen(function*() {
    const { items, kase } = yield* makeCase()
    const player = yield* fundedPlayer(client, login, 100_000)
    const [upgradable, sellable] = yield* grantItems(player.id, [items.rare!.id, items.common!.id, items.common!.id])
    const creator = yield* fundedPlayer(client, `${login}-creator`, 100_000)
    if (verifyOthers) yield* verify(client, creator.auth)
    const battle = yield* client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, creator.auth)
    expect(battle.status).toBe(201)
    const admin = yield* signIn(client, "root")
    const endsAt = new Date((yield* Clock.currentTimeMillis) + 3_600_000).toISOString()
    const raffle = yield* client.post(
      "/api/admin/raffles",
      { itemId: String(items.jackpot!.id), ticketPriceCents: 100, maxTickets: 100, endsAt },
      admin.auth
    )
    expect(raffle.status).toBe(201)
    const auth = player.auth
    const actions: Record<(typeof GATED)[number], () => ReturnType<TestClient["post"]>> = {
      open: () => client.post(`/api/cases/${kase.id}/open`, undefined, auth),
      upgrade: () =>
        client.post("/api/upgrades", { fromItemId: String(items.rare!.id), toItemId: String(items.jackpot!.id), inventoryItemId: upgradable }, auth),
      sell: () => client.post(`/api/inventory/${sellable}/sell`, undefined, auth),
      sellAll: () => client.post("/api/inventory/sell-all", undefined, auth),
      battleCreate: () => client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, auth),
      battleJoin: () => client.post(`/api/battles/${battle.body.id}/join`, undefined, auth),
      raffleTickets: () => client.post(`/api/raffles/${raffle.body.id}/tickets`, { count: 1 }, auth),
      depositInitiate: () => client.post("/api/payment/deposit/initiate", { amountCents: 5_000, method: "PIX" }, auth),
      withdrawalRequest: () => client.post("/api/withdrawals/request", withdrawal(5_000), auth)
    }
    return { player, actions }
  })

layer(TestDatabase)("the identity gate", (it) => {
  it.scoped("under BR each game or money action is 403 IDENTITY_REQUIRED before verification, moving nothing; allowed after", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const client = yield* app("BR")
      const { actions, player } = yield* scene(client, "gated-br", true)

      for (const name of GATED) {
        const refused = yield* actions[name]()
        expect(refused.status, name).toBe(403)
        expect(refused.body, name).toEqual({
          statusCode: 403,
          error: "IDENTITY_REQUIRED",
          message: "Verify your identity (POST /api/users/me/identity) before playing or moving money"
        })
      }
      // Nothing moved; reading is allowed.
      expect(yield* balanceOf(client, player.auth)).toBe(100_000)
      for (const path of ["/api/auth/me", "/api/inventory", "/api/cases", "/api/payment/deposits", "/api/withdrawals", "/api/users/me/compliance"]) {
        expect((yield* client.get(path, player.auth)).status, path).toBe(200)
      }
      expect((yield* client.get("/api/inventory", player.auth)).body.items).toHaveLength(3)

      yield* verify(client, player.auth)
      for (const name of GATED) {
        const allowed = yield* actions[name]()
        expect([200, 201], `${name}: ${JSON.stringify(allowed.body)}`).toContain(allowed.status)
      }
    }))

  it.scoped("under NONE the same actions are allowed without any identity", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOON_UTC)
      const client = yield* app("NONE")
      const { actions } = yield* scene(client, "gated-none", false)
      for (const name of GATED) {
        const allowed = yield* actions[name]()
        expect([200, 201], `${name}: ${JSON.stringify(allowed.body)}`).toContain(allowed.status)
      }
    }))

  it.scoped("every gated endpoint declares 403 IDENTITY_REQUIRED in the OpenAPI document; reads do not", () =>
    Effect.gen(function*() {
      const client = yield* app("NONE")
      const document = (yield* client.get("/api/docs-json")).body
      expect(JSON.stringify(document.components.schemas.IdentityRequired)).toContain("IDENTITY_REQUIRED")
      const declares = (path: string, method: string) =>
        JSON.stringify(document.paths[path]?.[method]?.responses?.["403"] ?? {}).includes("#/components/schemas/IdentityRequired")
      for (
        const path of [
          "/api/cases/{id}/open",
          "/api/upgrades",
          "/api/inventory/{id}/sell",
          "/api/inventory/sell-all",
          "/api/battles",
          "/api/battles/{id}/join",
          "/api/raffles/{id}/tickets",
          "/api/payment/deposit/initiate",
          "/api/withdrawals/request"
        ]
      ) {
        expect(declares(path, "post"), path).toBe(true)
      }
      for (const [path, method] of [["/api/inventory", "get"], ["/api/battles/{id}/leave", "post"], ["/api/users/me/identity", "post"]] as const) {
        expect(declares(path, method), path).toBe(false)
      }
    }))
})
