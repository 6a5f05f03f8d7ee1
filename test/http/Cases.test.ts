/** The public case catalog (`GET /cases`, `GET /cases/:id`; docs/rules.md#case-listing) through the public API. */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { signIn } from "../support/SignIn"
import { makeTestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const app = makeTestClient({ config: { adminIdpIds: ["root"] } })

let seq = 0

/** A signed-in player, an administrator and helpers that build the catalog through the admin API. */
const setup = Effect.gen(function*() {
  const client = yield* app
  const admin = yield* signIn(client, "root")
  const player = yield* signIn(client, `player-${++seq}`)
  const item = (name: string, rarity: string, valueCents: number) =>
    Effect.gen(function*() {
      const created = yield* client.post(
        "/api/admin/items",
        { name, rarity, valueCents, imageUrl: `/items/${++seq}.png` },
        admin.auth
      )
      if (created.status !== 201) throw new Error(`item: ${created.status} ${JSON.stringify(created.body)}`)
      return created.body as { id: string; name: string; rarity: string; valueCents: number; imageUrl: string }
    })
  // These tests are about what players see, not economics: the cases pay back what they do on purpose
  // (docs/rules.md#house-edge-rule).
  const newCase = (name: string, body: Record<string, unknown>) =>
    Effect.gen(function*() {
      const created = yield* client.post(
        "/api/admin/cases",
        {
          name,
          slug: `${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${++seq}`,
          imageUrl: `/cases/${seq}.png`,
          promotional: true,
          ...body
        },
        admin.auth
      )
      if (created.status !== 201) throw new Error(`case: ${created.status} ${JSON.stringify(created.body)}`)
      return created.body as { id: string; slug: string; category: string }
    })
  return { client, admin, player, item, newCase }
})

const idsOf = (body: { cases: ReadonlyArray<{ id: string }> }) => body.cases.map((c) => c.id)
const fieldsOf = (body: { errors?: ReadonlyArray<{ field: string }> }) => (body.errors ?? []).map((e) => e.field).sort()

layer(TestDatabase)("public cases", (it) => {
  it.scoped("both endpoints need a session", () =>
    Effect.gen(function*() {
      const client = yield* app
      for (const path of ["/api/cases", "/api/cases/1"]) {
        const response = yield* client.get(path)
        expect(response.status, path).toBe(401)
        expect(response.body).toEqual({ statusCode: 401, message: "Unauthorized" })
      }
    }))

  it.scoped("GET /cases: active cases, featured first then by price then id, with item count and best item", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM cases`
      const { admin, client, item, newCase, player } = yield* setup
      const common = yield* item("P250 | Sand Dune", "CONSUMER", 100)
      const rare = yield* item("AWP | Asiimov", "COVERT", 5_000)
      const jackpot = yield* item("Karambit | Fade", "EXTRAORDINARY", 50_000)
      const twin = yield* item("Butterfly | Fade", "EXTRAORDINARY", 50_000)

      const cheap1 = yield* newCase("Cheap One", {
        priceCents: 500,
        items: [{ itemId: common.id, dropChance: 0.9 }, { itemId: rare.id, dropChance: 0.1 }]
      })
      const medium = yield* newCase("Featured Medium", {
        priceCents: 2_500,
        isFeatured: true,
        // The most valuable item is not the last one given nor the rarest chance.
        items: [
          { itemId: jackpot.id, dropChance: 0.3 },
          { itemId: common.id, dropChance: 0.6 },
          { itemId: rare.id, dropChance: 0.1 }
        ]
      })
      const event = yield* newCase("Featured Event", {
        priceCents: 30_000,
        category: "EVENT",
        isFeatured: true,
        items: [{ itemId: twin.id, dropChance: 0.5 }, { itemId: jackpot.id, dropChance: 0.5 }]
      })
      const premium = yield* newCase("Premium", { priceCents: 25_000, items: [{ itemId: rare.id, dropChance: 1 }] })
      yield* newCase("Hidden", { priceCents: 100, isActive: false, items: [{ itemId: common.id, dropChance: 1 }] })
      const cheap2 = yield* newCase("Cheap Two", { priceCents: 500, items: [{ itemId: common.id, dropChance: 1 }] })

      const all = yield* client.get("/api/cases", player.auth)
      expect(all.status).toBe(200)
      expect(all.body.total).toBe(5)
      expect(all.body.page).toBe(1)
      expect(idsOf(all.body)).toEqual([medium.id, event.id, cheap1.id, cheap2.id, premium.id])
      expect(all.body.cases[0]).toEqual({
        id: medium.id,
        name: "Featured Medium",
        slug: medium.slug,
        imageUrl: expect.stringMatching(/^\/cases\/\d+\.png$/),
        priceCents: 2_500,
        category: "MEDIUM",
        isFeatured: true,
        itemCount: 3,
        bestItem: { name: "Karambit | Fade", rarity: "EXTRAORDINARY", valueCents: 50_000 },
        // 0.3 x 50000 + 0.6 x 100 + 0.1 x 5000 = 15560 of 2500.
        rtp: 6.224
      })
      const byId = Object.fromEntries(all.body.cases.map((c: { id: string }) => [c.id, c]))
      expect(byId[cheap1.id]).toMatchObject({ itemCount: 2, category: "CHEAP", isFeatured: false, bestItem: { name: "AWP | Asiimov", rarity: "COVERT", valueCents: 5_000 } })
      expect(byId[cheap2.id]).toMatchObject({ itemCount: 1, bestItem: { name: "P250 | Sand Dune", valueCents: 100 } })
      expect(byId[premium.id]).toMatchObject({ itemCount: 1, category: "PREMIUM" })
      // Equal values: the item created first.
      expect(byId[event.id]).toMatchObject({ itemCount: 2, category: "EVENT", bestItem: { name: "Karambit | Fade" } })

      const cheapOnly = yield* client.get("/api/cases?category=CHEAP", player.auth)
      expect(cheapOnly.body).toMatchObject({ total: 2, page: 1 })
      expect(idsOf(cheapOnly.body)).toEqual([cheap1.id, cheap2.id])
      expect(idsOf((yield* client.get("/api/cases?category=EVENT", player.auth)).body)).toEqual([event.id])
      expect((yield* client.get("/api/cases?category=EXPENSIVE", player.auth)).body).toEqual({ cases: [], total: 0, page: 1 })

      const featured = (yield* client.get("/api/cases?featured=true", player.auth)).body
      expect(idsOf(featured)).toEqual([medium.id, event.id])
      expect(featured.total).toBe(2)
      const notFeatured = (yield* client.get("/api/cases?featured=false", player.auth)).body
      expect(idsOf(notFeatured)).toEqual([cheap1.id, cheap2.id, premium.id])
      expect(notFeatured.total).toBe(3)
      expect(idsOf((yield* client.get("/api/cases?featured=false&category=PREMIUM", player.auth)).body)).toEqual([premium.id])
      expect(idsOf((yield* client.get("/api/cases?featured=true&category=CHEAP", player.auth)).body)).toEqual([])

      const page2 = (yield* client.get("/api/cases?page=2&limit=2", player.auth)).body
      expect(page2).toMatchObject({ total: 5, page: 2 })
      expect(idsOf(page2)).toEqual([cheap1.id, cheap2.id])
      expect(idsOf((yield* client.get("/api/cases?page=3&limit=2", player.auth)).body)).toEqual([premium.id])
      const beyond = (yield* client.get("/api/cases?page=4&limit=2", player.auth)).body
      expect(beyond).toEqual({ cases: [], total: 5, page: 4 })
      expect(idsOf((yield* client.get("/api/cases?limit=100", player.auth)).body)).toHaveLength(5)

      // Deactivating a case hides it.
      const hidden = yield* client.request(`/api/admin/cases/${medium.id}`, {
        method: "PUT",
        headers: { "content-type": "application/json", ...admin.auth },
        body: JSON.stringify({ isActive: false })
      })
      expect(hidden.status).toBe(200)
      const after = (yield* client.get("/api/cases", player.auth)).body
      expect(idsOf(after)).toEqual([event.id, cheap1.id, cheap2.id, premium.id])
      expect(after.total).toBe(4)
    }))

  it.scoped("GET /cases: query values out of range are 400 naming each field", () =>
    Effect.gen(function*() {
      const { client, player } = yield* setup
      const cases = [
        ["limit=0", ["limit"]],
        ["limit=101", ["limit"]],
        ["page=0", ["page"]],
        ["page=1.5&limit=abc", ["limit", "page"]],
        ["category=LUXURY&featured=yes", ["category", "featured"]],
        ["category=cheap", ["category"]]
      ] as const
      for (const [query, fields] of cases) {
        const refused = yield* client.get(`/api/cases?${query}`, player.auth)
        expect(refused.status, query).toBe(400)
        expect(refused.body.statusCode, query).toBe(400)
        expect(fieldsOf(refused.body), query).toEqual(fields)
      }
      expect((yield* client.get("/api/cases?limit=100&page=1", player.auth)).status).toBe(200)
      expect((yield* client.get("/api/cases?limit=1", player.auth)).status).toBe(200)
    }))

  it.scoped("GET /cases/:id: the items in roll order with exact drop chances; inactive or absent is 404", () =>
    Effect.gen(function*() {
      const { admin, client, item, newCase, player } = yield* setup
      const common = yield* item("MP9 | Storm", "INDUSTRIAL", 300)
      const rare = yield* item("M4A4 | Howl", "COVERT", 80_000)
      const kase = yield* newCase("Exact Chances", {
        priceCents: 1_200,
        items: [{ itemId: common.id, dropChance: 0.57 }, { itemId: rare.id, dropChance: 0.43 }]
      })
      const found = yield* client.get(`/api/cases/${kase.id}`, player.auth)
      expect(found.status).toBe(200)
      expect(found.body).toEqual({
        id: kase.id,
        name: "Exact Chances",
        priceCents: 1_200,
        flipChance: 0,
        // 0.57 x 300 + 0.43 x 80000 = 34571 of 1200 = 28.80916...
        rtp: 28.8092,
        items: [
          { id: rare.id, name: "M4A4 | Howl", rarity: "COVERT", valueCents: 80_000, imageUrl: rare.imageUrl, dropChance: 0.43 },
          { id: common.id, name: "MP9 | Storm", rarity: "INDUSTRIAL", valueCents: 300, imageUrl: common.imageUrl, dropChance: 0.57 }
        ]
      })

      // 0.0000001 is below the 0.0001 minimum: refused, so nothing to show.
      const tiny = yield* client.post("/api/admin/cases", {
        name: "Tiny Chance",
        slug: `tiny-${++seq}`,
        imageUrl: "/t.png",
        priceCents: 100,
        items: [{ itemId: common.id, dropChance: 0.9999999 }, { itemId: rare.id, dropChance: 0.0000001 }]
      }, admin.auth)
      expect(tiny.status).toBe(400)
      expect(fieldsOf(tiny.body)).toEqual(["items[1].dropChance"])
      const fine = yield* newCase("Fine Chance", {
        priceCents: 100,
        items: [{ itemId: common.id, dropChance: 0.9998766 }, { itemId: rare.id, dropChance: 0.0001234 }]
      })
      expect((yield* client.get(`/api/cases/${fine.id}`, player.auth)).body.items.map((i: { dropChance: number }) => i.dropChance))
        .toEqual([0.0001234, 0.9998766])

      const inactive = yield* newCase("Retired", { priceCents: 100, isActive: false, items: [{ itemId: common.id, dropChance: 1 }] })
      for (const id of [inactive.id, "999999"]) {
        const missing = yield* client.get(`/api/cases/${id}`, player.auth)
        expect(missing.status, id).toBe(404)
        expect(missing.body).toEqual({ statusCode: 404, message: "Case not found" })
      }
      for (const id of ["abc", "0", "-1", "1e3", "12345678901234567890"]) {
        const refused = yield* client.get(`/api/cases/${id}`, player.auth)
        expect(refused.status, id).toBe(400)
        expect(fieldsOf(refused.body), id).toEqual(["id"])
      }
    }))

  it.scoped("GET /cases and GET /cases/:id show every player each case's rtp, FLIP included, as administrators see it (D23)", () =>
    Effect.gen(function*() {
      const { admin, client, item, newCase, player } = yield* setup
      const low = yield* item("Glock-18 | Candy Apple", "MIL_SPEC", 100)
      const high = yield* item("AK-47 | Redline", "CLASSIFIED", 5_000)
      const items = [{ itemId: low.id, dropChance: 0.9 }, { itemId: high.id, dropChance: 0.1 }]
      // With FLIP 0.1 the better of two rolls: P(max = 5000) = 1 - 0.9^2 = 0.19, E[max] = 0.81 x 100 + 0.19 x
      // 5000 = 1031; EV = 0.9 x 590 + 0.1 x 1031 = 634.1 of 3000 = 0.211366... (without FLIP it would be 0.1967).
      const flip = yield* newCase("Flip Odds", { priceCents: 3_000, flipChance: 0.1, items })
      // EV 590 of 16000 = 0.036875 exactly: rounded half up to 0.0369.
      const halfUp = yield* newCase("Half Up", { priceCents: 16_000, items })
      const expected = { [flip.id]: 0.2114, [halfUp.id]: 0.0369 }

      const listed = yield* client.get("/api/cases?limit=100", player.auth)
      expect(listed.status).toBe(200)
      for (const [id, rtp] of Object.entries(expected)) {
        expect(listed.body.cases.find((c: { id: string }) => c.id === id), id).toMatchObject({ id, rtp })
        const detail = yield* client.get(`/api/cases/${id}`, player.auth)
        expect(detail.status, id).toBe(200)
        expect(detail.body.rtp, id).toBe(rtp)
        // The same figure administrators see (docs/rules.md#house-edge-rule).
        expect((yield* client.get(`/api/admin/cases/${id}`, admin.auth)).body.rtp, id).toBe(rtp)
      }
      // Every listed case carries it.
      expect(listed.body.cases.every((c: { rtp: unknown }) => typeof c.rtp === "number")).toBe(true)

      // At the items' current values: revaluing an item moves it at once.
      const revalued = yield* client.request(`/api/admin/items/${high.id}`, {
        method: "PUT",
        headers: { "content-type": "application/json", ...admin.auth },
        body: JSON.stringify({ valueCents: 6_000 })
      })
      expect(revalued.status).toBe(200)
      // E[max] = 81 + 0.19 x 6000 = 1221; EV = 0.9 x 690 + 0.1 x 1221 = 743.1 of 3000 = 0.2477.
      expect((yield* client.get(`/api/cases/${flip.id}`, player.auth)).body.rtp).toBe(0.2477)
      const relisted = (yield* client.get("/api/cases?limit=100", player.auth)).body
      expect(relisted.cases.find((c: { id: string }) => c.id === flip.id).rtp).toBe(0.2477)
    }))

  it.scoped("the openings history at /cases/openings is not taken for a case id", () =>
    Effect.gen(function*() {
      const { client, player } = yield* setup
      const history = yield* client.get("/api/cases/openings", player.auth)
      expect(history.status).toBe(200)
      expect(history.body).toMatchObject({ openings: [], total: 0, page: 1 })
    }))
})
