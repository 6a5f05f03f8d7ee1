/**
 * Catalog administration (docs/rules.md#catalog-administration) through the public API: items, cases, ranges,
 * validation.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const withAdmin = makeTestClient({ config: { adminIdpIds: ["root"] } })

const put = (client: TestClient, path: string, body: unknown, headers: Record<string, string>) =>
  client.request(path, {
    method: "PUT",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })

let seq = 0

/** An administrator and helpers that create items and cases, expecting success. */
const adminSession = Effect.gen(function*() {
  const client = yield* withAdmin
  const admin = yield* signIn(client, "root")
  const item = (valueCents: number, rarity = "MIL_SPEC") =>
    Effect.gen(function*() {
      const created = yield* client.post(
        "/api/admin/items",
        { name: `Item ${++seq}`, rarity, valueCents, imageUrl: `/i/${seq}.png`, isUpgradable: true },
        admin.auth
      )
      if (created.status !== 201) throw new Error(`item: ${created.status} ${JSON.stringify(created.body)}`)
      return created.body.id as string
    })
  const newCase = (body: Record<string, unknown>) =>
    client.post(
      "/api/admin/cases",
      { name: `Case ${++seq}`, slug: `case-${seq}`, imageUrl: "/c.png", priceCents: 1_500, ...body },
      admin.auth
    )
  return { client, admin, item, newCase }
})

const countRows = (table: "cases" | "case_items" | "items") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: string }>`SELECT count(*)::text AS n FROM ${sql(table)}`)
    .pipe(Effect.map(([row]) => Number(row!.n)))

const fieldsOf = (body: { errors?: ReadonlyArray<{ field: string }> }) => (body.errors ?? []).map((e) => e.field).sort()

layer(TestDatabase)("catalog administration", (it) => {
  it.scoped("every catalog endpoint: 401 without a session, 403 for a user", () =>
    Effect.gen(function*() {
      const client = yield* withAdmin
      const user = yield* signIn(client, "not-an-admin")
      const before = yield* countRows("items")
      const item = { name: "X", rarity: "CONSUMER", valueCents: 1, imageUrl: "/x.png" }
      const calls = [
        (auth: Record<string, string>) => client.get("/api/admin/items", auth),
        (auth: Record<string, string>) => client.post("/api/admin/items", item, auth),
        (auth: Record<string, string>) => put(client, "/api/admin/items/1", { name: "Y" }, auth),
        (auth: Record<string, string>) => client.get("/api/admin/cases", auth),
        (auth: Record<string, string>) => client.get("/api/admin/cases/1", auth),
        (auth: Record<string, string>) => client.post("/api/admin/cases", {}, auth),
        (auth: Record<string, string>) => put(client, "/api/admin/cases/1", { name: "Y" }, auth)
      ]
      for (const call of calls) {
        const anonymous = yield* call({})
        expect(anonymous.status).toBe(401)
        expect(anonymous.body).toEqual({ statusCode: 401, message: "Unauthorized" })
        const refused = yield* call(user.auth)
        expect(refused.status).toBe(403)
        expect(refused.body).toEqual({ statusCode: 403, message: "Forbidden" })
      }
      expect(yield* countRows("items")).toBe(before)
    }))

  it.scoped("items: create (201, every item field), partial update, list; unknown ids 404, bad ids 400", () =>
    Effect.gen(function*() {
      const { admin, client } = yield* adminSession
      const created = yield* client.post(
        "/api/admin/items",
        { name: "AK-47 | Redline", rarity: "CLASSIFIED", valueCents: 4_250, imageUrl: "/ak.png" },
        admin.auth
      )
      expect(created.status).toBe(201)
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[1-9][0-9]*$/),
        name: "AK-47 | Redline",
        rarity: "CLASSIFIED",
        valueCents: 4_250,
        imageUrl: "/ak.png",
        isUpgradable: true
      })
      const id = created.body.id as string

      const updated = yield* put(client, `/api/admin/items/${id}`, { valueCents: 5_000, isUpgradable: false }, admin.auth)
      expect(updated.status).toBe(200)
      expect(updated.body).toEqual({ ...created.body, valueCents: 5_000, isUpgradable: false })
      const renamed = yield* put(client, `/api/admin/items/${id}`, { name: "AK-47 | Vulcan", rarity: "COVERT" }, admin.auth)
      expect(renamed.body).toEqual({ ...updated.body, name: "AK-47 | Vulcan", rarity: "COVERT" })
      const unchanged = yield* put(client, `/api/admin/items/${id}`, {}, admin.auth)
      expect(unchanged.body).toEqual(renamed.body)

      const second = yield* client.post(
        "/api/admin/items",
        { name: "Glock", rarity: "CONSUMER", valueCents: 10, imageUrl: "/g.png", isUpgradable: false },
        admin.auth
      )
      expect(second.body.isUpgradable).toBe(false)
      const listed = yield* client.get("/api/admin/items", admin.auth)
      expect(listed.status).toBe(200)
      expect(listed.body).toEqual({ items: [renamed.body, second.body], total: 2, page: 1 })
      const paged = yield* client.get("/api/admin/items?page=2&limit=1", admin.auth)
      expect(paged.body).toEqual({ items: [second.body], total: 2, page: 2 })

      const missing = yield* put(client, "/api/admin/items/999999", { name: "Ghost" }, admin.auth)
      expect(missing.status).toBe(404)
      expect(missing.body).toEqual({ statusCode: 404, message: "Item not found" })
      for (const bad of ["abc", "0", "-3", "1.5"]) {
        const refused = yield* put(client, `/api/admin/items/${bad}`, { name: "Ghost" }, admin.auth)
        expect(refused.status, bad).toBe(400)
        expect(fieldsOf(refused.body), bad).toEqual(["id"])
      }
    }))

  it.scoped("imageUrl: an https:// URL or a path starting with / (not //), for items and cases", () =>
    Effect.gen(function*() {
      const { admin, client, item, newCase: validCase } = yield* adminSession
      const itemId = yield* item(100)
      const caseId = (yield* validCase({ items: [{ itemId, dropChance: 1 }] })).body.id as string
      const before = { items: yield* countRows("items"), cases: yield* countRows("cases") }
      const refusal = {
        statusCode: 400,
        message: "Validation failed",
        errors: [{ field: "imageUrl", message: "must be an https:// URL or a path starting with /" }]
      }
      for (const imageUrl of [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "http://cdn.example/x.png",
        "//evil.example/x.png",
        "/\\evil.example/x.png",
        "data:image/svg+xml,<svg onload=alert(1)>",
        "https:evil.example/x.png",
        "images/x.png",
        "https://cdn.example/x .png"
      ]) {
        const newItem = yield* client.post(
          "/api/admin/items",
          { name: "Bad image", rarity: "CONSUMER", valueCents: 1, imageUrl },
          admin.auth
        )
        expect({ imageUrl, status: newItem.status, body: newItem.body }).toEqual({ imageUrl, status: 400, body: refusal })
        const newCase = yield* client.post(
          "/api/admin/cases",
          { name: "Bad image", slug: `bad-image-${++seq}`, imageUrl, priceCents: 1_500, items: [{ itemId, dropChance: 1 }] },
          admin.auth
        )
        expect({ imageUrl, status: newCase.status, body: newCase.body }).toEqual({ imageUrl, status: 400, body: refusal })
        const update = yield* put(client, `/api/admin/items/${itemId}`, { imageUrl }, admin.auth)
        expect({ imageUrl, status: update.status, body: update.body }).toEqual({ imageUrl, status: 400, body: refusal })
        const caseUpdate = yield* put(client, `/api/admin/cases/${caseId}`, { imageUrl }, admin.auth)
        expect({ imageUrl, status: caseUpdate.status, body: caseUpdate.body }).toEqual({ imageUrl, status: 400, body: refusal })
      }
      expect(yield* countRows("items")).toBe(before.items)
      expect(yield* countRows("cases")).toBe(before.cases)

      for (const imageUrl of ["https://cdn.example/x.png", "/images/x.svg", "HTTPS://CDN.example/Case.PNG?v=2"]) {
        const created = yield* client.post(
          "/api/admin/items",
          { name: `Good image ${++seq}`, rarity: "CONSUMER", valueCents: 1, imageUrl },
          admin.auth
        )
        expect({ imageUrl, status: created.status }).toEqual({ imageUrl, status: 201 })
        expect(created.body.imageUrl).toBe(imageUrl)
        const kase = yield* client.post(
          "/api/admin/cases",
          { name: "Good image", slug: `good-image-${++seq}`, imageUrl, priceCents: 1_500, items: [{ itemId, dropChance: 1 }] },
          admin.auth
        )
        expect({ imageUrl, status: kase.status }).toEqual({ imageUrl, status: 201 })
        const changed = yield* put(client, `/api/admin/items/${itemId}`, { imageUrl }, admin.auth)
        expect({ imageUrl, status: changed.status }).toEqual({ imageUrl, status: 200 })
        const caseChanged = yield* put(client, `/api/admin/cases/${caseId}`, { imageUrl }, admin.auth)
        expect({ imageUrl, status: caseChanged.status }).toEqual({ imageUrl, status: 200 })
      }
    }))

  it.scoped("items: every bad field is named in one 400, and nothing is written", () =>
    Effect.gen(function*() {
      const { admin, client } = yield* adminSession
      const before = yield* countRows("items")
      const refused = yield* client.post(
        "/api/admin/items",
        { name: "", rarity: "LEGENDARY", valueCents: 1.5, imageUrl: "x".repeat(501), isUpgradable: "yes" },
        admin.auth
      )
      expect(refused.status).toBe(400)
      expect(refused.body).toEqual({ statusCode: 400, message: "Validation failed", errors: expect.any(Array) })
      expect(fieldsOf(refused.body)).toEqual(["imageUrl", "isUpgradable", "name", "rarity", "valueCents"])
      const messages = Object.fromEntries(refused.body.errors.map((e: { field: string; message: string }) => [e.field, e.message]))
      expect(messages.rarity).toContain("CONSUMER")
      expect(messages.valueCents).toBe("must be a positive integer")
      expect(messages.imageUrl).toBe("must be at most 500 characters")

      const missing = yield* client.post("/api/admin/items", {}, admin.auth)
      expect(fieldsOf(missing.body)).toEqual(["imageUrl", "name", "rarity", "valueCents"])
      const tooLong = yield* client.post(
        "/api/admin/items",
        { name: "n".repeat(101), rarity: "CONSUMER", valueCents: 0, imageUrl: "/x.png" },
        admin.auth
      )
      expect(fieldsOf(tooLong.body)).toEqual(["name", "valueCents"])
      const longest = yield* client.post(
        "/api/admin/items",
        { name: "n".repeat(100), rarity: "CONSUMER", valueCents: 1, imageUrl: `/${"x".repeat(499)}` },
        admin.auth
      )
      expect(longest.status).toBe(201)
      expect(yield* countRows("items")).toBe(before + 1)

      const id = longest.body.id as string
      const badUpdate = yield* put(client, `/api/admin/items/${id}`, { valueCents: -1, rarity: "RARE", name: "" }, admin.auth)
      expect(badUpdate.status).toBe(400)
      expect(fieldsOf(badUpdate.body)).toEqual(["name", "rarity", "valueCents"])
      // Beyond R$ 1 000 000 000: a value whose sales could overflow a balance. The most is accepted.
      const dearest = yield* put(client, `/api/admin/items/${id}`, { valueCents: 100_000_000_001 }, admin.auth)
      expect(dearest.status).toBe(400)
      expect(dearest.body.errors).toEqual([{ field: "valueCents", message: "must be at most 100000000000" }])
      expect((yield* put(client, `/api/admin/items/${id}`, { valueCents: 100_000_000_000 }, admin.auth)).status).toBe(200)
    }))

  it.scoped("cases: 201 with ranges in roll order; 0.57 + 0.43 is stored and answered exactly", () =>
    Effect.gen(function*() {
      const { item, newCase } = yield* adminSession
      const cheap = yield* item(100)
      const dear = yield* item(2_000)
      const created = yield* newCase({
        name: "Dust II",
        slug: "dust-ii",
        priceCents: 1_500,
        items: [{ itemId: cheap, dropChance: 0.57 }, { itemId: dear, dropChance: 0.43 }]
      })
      expect(created.status).toBe(201)
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[1-9][0-9]*$/),
        name: "Dust II",
        slug: "dust-ii",
        priceCents: 1_500,
        category: "MEDIUM",
        isActive: true,
        isFeatured: false,
        houseEdge: 0.1,
        flipChance: 0,
        promotional: false,
        // 0.57 x 100 + 0.43 x 2000 = 917 of 1500 (docs/rules.md#house-edge-rule).
        expectedValueCents: 917,
        rtp: 0.6113,
        items: [
          { itemId: dear, dropChance: 0.43, rangeStart: 1, rangeEnd: 4_300_000 },
          { itemId: cheap, dropChance: 0.57, rangeStart: 4_300_001, rangeEnd: 10_000_000 }
        ]
      })
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ itemId: string; dropChance: string; rangeStart: number; rangeEnd: number }>`
        SELECT item_id::text, drop_chance::text, range_start, range_end FROM case_items
        WHERE case_id = ${created.body.id} ORDER BY range_start`
      expect(rows).toEqual([
        { itemId: dear, dropChance: "0.4300000", rangeStart: 1, rangeEnd: 4_300_000 },
        { itemId: cheap, dropChance: "0.5700000", rangeStart: 4_300_001, rangeEnd: 10_000_000 }
      ])

      const options = yield* newCase({
        description: "Rare knives",
        isActive: false,
        isFeatured: true,
        houseEdge: 0.5,
        flipChance: 0.25,
        items: [{ itemId: cheap, dropChance: 1 }]
      })
      expect(options.status).toBe(201)
      expect(options.body).toMatchObject({ isActive: false, isFeatured: true, houseEdge: 0.5, flipChance: 0.25 })
      const [stored] = yield* sql<{ description: string }>`SELECT description FROM cases WHERE id = ${options.body.id}`
      expect(stored!.description).toBe("Rare knives")
    }))

  it.scoped("cases: chances that do not add up to 1 are 422 on items and write nothing", () =>
    Effect.gen(function*() {
      const { item, newCase } = yield* adminSession
      const a = yield* item(100)
      const b = yield* item(200)
      const before = { cases: yield* countRows("cases"), caseItems: yield* countRows("case_items") }
      for (const items of [
        [{ itemId: a, dropChance: 0.5 }, { itemId: b, dropChance: 0.4 }],
        [{ itemId: a, dropChance: 0.6 }, { itemId: b, dropChance: 0.5 }],
        [{ itemId: a, dropChance: 0.5 }, { itemId: a, dropChance: 0.5 }],
        [{ itemId: a, dropChance: 0.5 }, { itemId: "987654", dropChance: 0.5 }]
      ]) {
        const refused = yield* newCase({ items })
        expect(refused.status, JSON.stringify(items)).toBe(422)
        expect(refused.body).toEqual({
          statusCode: 422,
          message: "Invalid case items",
          errors: [{ field: "items", message: expect.any(String) }]
        })
      }
      expect({ cases: yield* countRows("cases"), caseItems: yield* countRows("case_items") }).toEqual(before)
    }))

  it.scoped("cases: every bad field is named in one 400", () =>
    Effect.gen(function*() {
      const { admin, client, item } = yield* adminSession
      const a = yield* item(100)
      const before = yield* countRows("cases")
      const refused = yield* client.post("/api/admin/cases", {
        name: "",
        slug: "Bad Slug",
        imageUrl: "",
        priceCents: -5,
        category: "LUXURY",
        houseEdge: 0.7,
        flipChance: -0.1,
        isFeatured: "no",
        items: [{ itemId: "abc", dropChance: 0.00000001 }]
      }, admin.auth)
      expect(refused.status).toBe(400)
      expect(fieldsOf(refused.body)).toEqual([
        "category",
        "flipChance",
        "houseEdge",
        "imageUrl",
        "isFeatured",
        "items[0].dropChance",
        "items[0].itemId",
        "name",
        "priceCents",
        "slug"
      ])
      const empty = yield* client.post(
        "/api/admin/cases",
        { name: "Empty", slug: "-lead", imageUrl: "/e.png", priceCents: 100, items: [] },
        admin.auth
      )
      expect(fieldsOf(empty.body)).toEqual(["items", "slug"])
      const longSlug = yield* client.post(
        "/api/admin/cases",
        { name: "Long", slug: "a".repeat(65), imageUrl: "/e.png", priceCents: 100, items: [{ itemId: a, dropChance: 1 }] },
        admin.auth
      )
      expect(fieldsOf(longSlug.body)).toEqual(["slug"])
      const missing = yield* client.post("/api/admin/cases", {}, admin.auth)
      expect(fieldsOf(missing.body)).toEqual(["imageUrl", "items", "name", "priceCents", "slug"])
      expect(yield* countRows("cases")).toBe(before)

      // A 1-cent case of a 100-cent item pays back on purpose (docs/rules.md#house-edge-rule).
      const ok = yield* client.post(
        "/api/admin/cases",
        {
          name: "Edge",
          slug: `a-1-b${"c".repeat(59)}`,
          imageUrl: "/e.png",
          priceCents: 1,
          promotional: true,
          items: [{ itemId: a, dropChance: 1 }]
        },
        admin.auth
      )
      expect(ok.status).toBe(201)
    }))

  it.scoped("a duplicate slug is 409 on create and on update", () =>
    Effect.gen(function*() {
      const { admin, client, item, newCase } = yield* adminSession
      const a = yield* item(100)
      const items = [{ itemId: a, dropChance: 1 }]
      const first = yield* newCase({ slug: "taken", items })
      expect(first.status).toBe(201)
      const twin = yield* newCase({ slug: "taken", items })
      expect(twin.status).toBe(409)
      expect(twin.body).toEqual({ statusCode: 409, message: "Slug already exists" })

      const other = yield* newCase({ slug: "other", items })
      const clash = yield* put(client, `/api/admin/cases/${other.body.id}`, { slug: "taken", name: "Renamed" }, admin.auth)
      expect(clash.status).toBe(409)
      expect(clash.body).toEqual({ statusCode: 409, message: "Slug already exists" })
      const sql = yield* SqlClient.SqlClient
      const [kept] = yield* sql<{ slug: string; name: string }>`SELECT slug, name FROM cases WHERE id = ${other.body.id}`
      expect(kept).toEqual({ slug: "other", name: other.body.name })

      const same = yield* put(client, `/api/admin/cases/${first.body.id}`, { slug: "taken" }, admin.auth)
      expect(same.status).toBe(200)
      const moved = yield* put(client, `/api/admin/cases/${other.body.id}`, { slug: "free-now" }, admin.auth)
      expect(moved.body.slug).toBe("free-now")
    }))

  it.scoped("category follows the price unless EVENT is asked for, on create and on update", () =>
    Effect.gen(function*() {
      const { admin, client, item, newCase } = yield* adminSession
      const a = yield* item(100)
      const items = [{ itemId: a, dropChance: 1 }]
      const categoryAt = (priceCents: number, category?: string) =>
        Effect.map(newCase({ priceCents, items, ...(category ? { category } : {}) }), (r) => r.body.category)
      expect(yield* categoryAt(999)).toBe("CHEAP")
      expect(yield* categoryAt(1_000)).toBe("MEDIUM")
      expect(yield* categoryAt(4_999)).toBe("MEDIUM")
      expect(yield* categoryAt(5_000)).toBe("EXPENSIVE")
      expect(yield* categoryAt(20_000)).toBe("EXPENSIVE")
      expect(yield* categoryAt(20_001)).toBe("PREMIUM")
      expect(yield* categoryAt(500, "PREMIUM")).toBe("CHEAP")
      expect(yield* categoryAt(500, "EVENT")).toBe("EVENT")

      const update = (id: string, body: Record<string, unknown>) =>
        Effect.map(put(client, `/api/admin/cases/${id}`, body, admin.auth), (r) => r.body)
      const plain = (yield* newCase({ priceCents: 500, items })).body.id as string
      expect((yield* update(plain, { priceCents: 30_000 })).category).toBe("PREMIUM")
      expect((yield* update(plain, { category: "EVENT" })).category).toBe("EVENT")
      // Not asked for: an EVENT case stays EVENT whatever its price.
      expect(yield* update(plain, { priceCents: 700 })).toMatchObject({ category: "EVENT", priceCents: 700 })
      expect((yield* update(plain, { name: "Still event" })).category).toBe("EVENT")
      // Any other category asked for: back to the price's category.
      expect((yield* update(plain, { category: "PREMIUM" })).category).toBe("CHEAP")
      expect((yield* update(plain, { priceCents: 6_000 })).category).toBe("EXPENSIVE")
    }))

  it.scoped("update: new items replace the old ones with recomputed ranges; other fields are kept", () =>
    Effect.gen(function*() {
      const { admin, client, item, newCase } = yield* adminSession
      const [a, b, c] = [yield* item(100), yield* item(2_000), yield* item(90_000)]
      const created = (yield* newCase({
        name: "Mirage",
        description: "Kept",
        priceCents: 2_000,
        isFeatured: true,
        items: [{ itemId: a, dropChance: 0.9 }, { itemId: b, dropChance: 0.1 }]
      })).body
      const updated = yield* put(client, `/api/admin/cases/${created.id}`, {
        items: [{ itemId: c, dropChance: 0.0001 }, { itemId: a, dropChance: 0.7999 }, { itemId: b, dropChance: 0.2 }]
      }, admin.auth)
      expect(updated.status).toBe(200)
      expect(updated.body).toEqual({
        ...created,
        // 0.0001 x 90000 + 0.2 x 2000 + 0.7999 x 100 = 488.99 of 2000 (docs/rules.md#house-edge-rule).
        expectedValueCents: 489,
        rtp: 0.2445,
        items: [
          { itemId: c, dropChance: 0.0001, rangeStart: 1, rangeEnd: 1_000 },
          { itemId: b, dropChance: 0.2, rangeStart: 1_001, rangeEnd: 2_001_000 },
          { itemId: a, dropChance: 0.7999, rangeStart: 2_001_001, rangeEnd: 10_000_000 }
        ]
      })
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ itemId: string; rangeStart: number }>`
        SELECT item_id::text, range_start FROM case_items WHERE case_id = ${created.id} ORDER BY range_start`
      expect(rows).toEqual([{ itemId: c, rangeStart: 1 }, { itemId: b, rangeStart: 1_001 }, { itemId: a, rangeStart: 2_001_001 }])
      const [kept] = yield* sql<{ description: string }>`SELECT description FROM cases WHERE id = ${created.id}`
      expect(kept!.description).toBe("Kept")

      // A bad replacement changes nothing.
      const refused = yield* put(client, `/api/admin/cases/${created.id}`, {
        name: "Half",
        items: [{ itemId: a, dropChance: 0.5 }]
      }, admin.auth)
      expect(refused.status).toBe(422)
      expect(refused.body.errors).toEqual([{ field: "items", message: expect.any(String) }])
      const unknownItem = yield* put(client, `/api/admin/cases/${created.id}`, {
        name: "Half",
        items: [{ itemId: "987654", dropChance: 1 }]
      }, admin.auth)
      expect(unknownItem.status).toBe(422)
      const listed = (yield* client.get("/api/admin/cases?limit=100", admin.auth)).body.cases
      expect(listed.find((k: { id: string }) => k.id === created.id)).toEqual(updated.body)

      const fields = yield* put(client, `/api/admin/cases/${created.id}`, {
        name: "Mirage 2",
        houseEdge: 0.2,
        flipChance: 0.05,
        isFeatured: false,
        description: null
      }, admin.auth)
      // With FLIP 0.05: 0.95 x 488.99 + 0.05 x E[max of two] 801.903101 = 504.63565505 (docs/economics.md).
      expect(fields.body).toEqual({
        ...updated.body,
        name: "Mirage 2",
        houseEdge: 0.2,
        flipChance: 0.05,
        isFeatured: false,
        expectedValueCents: 505,
        rtp: 0.2523
      })
      const [cleared] = yield* sql<{ description: string | null }>`SELECT description FROM cases WHERE id = ${created.id}`
      expect(cleared!.description).toBeNull()

      const missing = yield* put(client, "/api/admin/cases/999999", { name: "Ghost" }, admin.auth)
      expect(missing.status).toBe(404)
      expect(missing.body).toEqual({ statusCode: 404, message: "Case not found" })
      const badId = yield* put(client, "/api/admin/cases/abc", { name: "Ghost" }, admin.auth)
      expect(badId.status).toBe(400)
      expect(fieldsOf(badId.body)).toEqual(["id"])
      const badFields = yield* put(client, `/api/admin/cases/${created.id}`, { houseEdge: 1, items: [] }, admin.auth)
      expect(fieldsOf(badFields.body)).toEqual(["houseEdge", "items"])
    }))

  it.scoped("GET /admin/cases lists every case, inactive included, with items; pages by id", () =>
    Effect.gen(function*() {
      const { admin, client, item, newCase } = yield* adminSession
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM cases`
      const a = yield* item(100)
      const active = (yield* newCase({ items: [{ itemId: a, dropChance: 1 }] })).body
      const inactive = (yield* newCase({ isActive: false, items: [{ itemId: a, dropChance: 1 }] })).body
      const listed = yield* client.get("/api/admin/cases", admin.auth)
      expect(listed.status).toBe(200)
      expect(listed.body).toEqual({ cases: [active, inactive], total: 2, page: 1 })
      expect((yield* client.get("/api/admin/cases?page=2&limit=1", admin.auth)).body).toEqual({
        cases: [inactive],
        total: 2,
        page: 2
      })
      const bad = yield* client.get("/api/admin/cases?page=0&limit=101", admin.auth)
      expect(bad.status).toBe(400)
      expect(fieldsOf(bad.body)).toEqual(["limit", "page"])
    }))

  it.scoped("economics: a case over its house edge is 422 with the figures, unless promotional (stored, shown, audited)", () =>
    Effect.gen(function*() {
      const { admin, client, item, newCase } = yield* adminSession
      const sql = yield* SqlClient.SqlClient
      const common = yield* item(100, "CONSUMER")
      const rare = yield* item(5_000, "COVERT")
      const jackpot = yield* item(50_000, "EXTRAORDINARY")
      // docs/economics.md's worked example: 1040 without FLIP, 1128.65 with FLIP 0.1.
      const items = [
        { itemId: common, dropChance: 0.9 },
        { itemId: rare, dropChance: 0.09 },
        { itemId: jackpot, dropChance: 0.01 }
      ]
      const before = { cases: yield* countRows("cases"), caseItems: yield* countRows("case_items") }
      const refused = yield* newCase({ priceCents: 1_000, flipChance: 0.1, items })
      expect(refused.status).toBe(422)
      expect(refused.body).toEqual({
        statusCode: 422,
        message: "Case pays back more than its house edge allows",
        errors: [
          { field: "expectedValueCents", message: "1128.65: the exact expected value of an opening in cents, FLIP included" },
          {
            field: "rtp",
            message: "1.1287: expectedValueCents / priceCents, rounded to 4 decimals; at most 1 - houseEdge is allowed"
          },
          {
            field: "houseEdge",
            message: "0.1: an opening may pay back at most 900 cents on average (1 - houseEdge of priceCents 1000)"
          },
          { field: "promotional", message: "false: save the case with promotional true to pay back more on purpose" }
        ]
      })
      expect({ cases: yield* countRows("cases"), caseItems: yield* countRows("case_items") }).toEqual(before)

      const promotional = yield* newCase({ name: "Free Spin", priceCents: 1_000, flipChance: 0.1, promotional: true, items })
      expect(promotional.status).toBe(201)
      expect(promotional.body).toMatchObject({ promotional: true, houseEdge: 0.1, expectedValueCents: 1_129, rtp: 1.1287 })
      const shown = yield* client.get(`/api/admin/cases/${promotional.body.id}`, admin.auth)
      expect(shown.status).toBe(200)
      expect(shown.body).toEqual(promotional.body)
      const listed = (yield* client.get("/api/admin/cases?limit=100", admin.auth)).body.cases
      expect(listed.find((c: { id: string }) => c.id === promotional.body.id)).toEqual(promotional.body)
      const adminId = (yield* client.get("/api/auth/me", admin.auth)).body.id
      expect(yield* sql`SELECT user_id::text AS user_id, metadata FROM audit_logs
                        WHERE action = 'CASE_PROMOTIONAL' AND entity_id = ${promotional.body.id}`).toEqual([
        { userId: adminId, metadata: { promotional: true, houseEdge: 0.1, expectedValueCents: "1128.65", rtp: 1.1287 } }
      ])

      // Priced at 1260, the same case pays back 89.58 %: within the edge.
      const priced = yield* newCase({ priceCents: 1_260, flipChance: 0.1, items })
      expect(priced.status).toBe(201)
      expect(priced.body).toMatchObject({ promotional: false, expectedValueCents: 1_129, rtp: 0.8958 })
      expect((yield* client.get("/api/admin/cases/999999", admin.auth)).body).toEqual({ statusCode: 404, message: "Case not found" })
    }))

  it.scoped("economics: edits and activation are checked; taking a case out of play never is", () =>
    Effect.gen(function*() {
      const { admin, client, item, newCase } = yield* adminSession
      const update = (id: string, body: Record<string, unknown>) => put(client, `/api/admin/cases/${id}`, body, admin.auth)
      const [common, rare, jackpot] = [yield* item(100, "CONSUMER"), yield* item(5_000, "COVERT"), yield* item(50_000, "EXTRAORDINARY")]
      const kase = (yield* newCase({
        priceCents: 1_260,
        flipChance: 0.1,
        items: [{ itemId: common, dropChance: 0.9 }, { itemId: rare, dropChance: 0.09 }, { itemId: jackpot, dropChance: 0.01 }]
      })).body
      const cheaper = yield* update(kase.id, { priceCents: 1_000 })
      expect(cheaper.status).toBe(422)
      expect(cheaper.body.message).toBe("Case pays back more than its house edge allows")
      expect((yield* client.get(`/api/admin/cases/${kase.id}`, admin.auth)).body).toEqual(kase)
      // Less FLIP: 0.95 x 1040 + 0.05 x 1926.5 = 1084.325 of 1260.
      const lessFlip = yield* update(kase.id, { flipChance: 0.05 })
      expect(lessFlip.body).toMatchObject({ flipChance: 0.05, expectedValueCents: 1_084, rtp: 0.8606 })
      // A 20 % edge allows 1008: refused, unless the same change takes the case out of play.
      expect((yield* update(kase.id, { houseEdge: 0.2 })).status).toBe(422)
      const retired = yield* update(kase.id, { houseEdge: 0.2, isActive: false })
      expect(retired.status).toBe(200)
      expect(retired.body).toMatchObject({ isActive: false, houseEdge: 0.2, rtp: 0.8606 })
      // Activation is checked; so is any edit of the inactive case.
      expect((yield* update(kase.id, { isActive: true })).status).toBe(422)
      expect((yield* update(kase.id, { name: "Renamed" })).status).toBe(422)
      const reactivated = yield* update(kase.id, { isActive: true, priceCents: 1_400 })
      expect(reactivated.body).toMatchObject({ isActive: true, priceCents: 1_400, rtp: 0.7745 })
      const event = yield* update(kase.id, { promotional: true, priceCents: 500 })
      expect(event.body).toMatchObject({ promotional: true, priceCents: 500, rtp: 2.1687 })
      expect((yield* update(kase.id, { promotional: false })).status).toBe(422)
      const sql = yield* SqlClient.SqlClient
      const audits = yield* sql<{ metadata: { promotional: boolean } }>`
        SELECT metadata FROM audit_logs WHERE action = 'CASE_PROMOTIONAL' AND entity_id = ${kase.id} ORDER BY id`
      expect(audits.map((a) => a.metadata.promotional)).toEqual([true])
      expect((yield* update(kase.id, { promotional: false, priceCents: 1_400 })).body).toMatchObject({ promotional: false })
      expect((yield* sql<{ metadata: { promotional: boolean } }>`
        SELECT metadata FROM audit_logs WHERE action = 'CASE_PROMOTIONAL' AND entity_id = ${kase.id} ORDER BY id`)
        .map((a) => a.metadata.promotional)).toEqual([true, false])
    }))

  it.scoped("economics: item values may change; one that pushes an active case over its edge raises a CRITICAL alert", () =>
    Effect.gen(function*() {
      const { admin, client, item, newCase } = yield* adminSession
      const sql = yield* SqlClient.SqlClient
      const low = yield* item(800)
      const high = yield* item(1_000)
      // 0.5 x 800 + 0.5 x 1000 = 900: exactly the 90 % a 10 % edge allows.
      const kase = (yield* newCase({
        name: "On The Line",
        priceCents: 1_000,
        items: [{ itemId: low, dropChance: 0.5 }, { itemId: high, dropChance: 0.5 }]
      })).body
      expect(kase).toMatchObject({ rtp: 0.9, expectedValueCents: 900 })
      const caseAlerts = Effect.map(
        client.get("/api/admin/dashboard/alerts", admin.auth),
        (r) => (r.body.alerts as ReadonlyArray<{ id: string }>).filter((a) => a.id.startsWith("case-over-house-edge"))
      )
      const revalue = (id: string, valueCents: number) => put(client, `/api/admin/items/${id}`, { valueCents }, admin.auth)

      // Lower: the case keeps paying back less; nothing to report.
      expect((yield* revalue(high, 900)).status).toBe(200)
      expect((yield* client.get(`/api/admin/cases/${kase.id}`, admin.auth)).body).toMatchObject({ isActive: true, rtp: 0.85 })
      expect(yield* caseAlerts).toEqual([])

      // Higher, past the line: the item changes (the case is not touched), and the dashboard says so.
      const raised = yield* revalue(high, 1_100)
      expect(raised.status).toBe(200)
      expect(raised.body.valueCents).toBe(1_100)
      expect((yield* client.get(`/api/admin/cases/${kase.id}`, admin.auth)).body).toMatchObject({
        isActive: true,
        expectedValueCents: 950,
        rtp: 0.95
      })
      expect(yield* caseAlerts).toEqual([{
        id: `case-over-house-edge:${kase.id}`,
        level: "CRITICAL",
        title: "Case pays back more than its house edge allows",
        message: `On The Line (case ${kase.id}, ${kase.slug}) pays back 0.95 of its price: 950 cents per opening of 1000 on ` +
          "average, where its house edge 0.1 allows 900. Take it out of play, change its items or price, or mark it promotional."
      }])
      const adminId = (yield* client.get("/api/auth/me", admin.auth)).body.id
      expect(yield* sql`SELECT user_id::text AS user_id, metadata FROM audit_logs
                        WHERE action = 'CASE_OVER_HOUSE_EDGE' AND entity_id = ${kase.id}`).toEqual([
        { userId: adminId, metadata: { itemId: high, valueCents: 1_100, houseEdge: 0.1, expectedValueCents: "950", rtp: 0.95 } }
      ])
      // Raising it further is audited only once: the case was already over.
      expect((yield* revalue(high, 1_200)).status).toBe(200)
      expect((yield* sql`SELECT 1 FROM audit_logs WHERE action = 'CASE_OVER_HOUSE_EDGE' AND entity_id = ${kase.id}`).length).toBe(1)

      // Taken out of play, it no longer loses money: no alert. A promotional case never alerts.
      expect((yield* put(client, `/api/admin/cases/${kase.id}`, { isActive: false }, admin.auth)).status).toBe(200)
      expect(yield* caseAlerts).toEqual([])
      expect((yield* put(client, `/api/admin/cases/${kase.id}`, { isActive: true, promotional: true }, admin.auth)).status).toBe(200)
      expect(yield* caseAlerts).toEqual([])
    }))

  it.scoped("base probabilities: items without dropChance get their rarity's, scaled to fill 1 exactly", () =>
    Effect.gen(function*() {
      const { item, newCase } = yield* adminSession
      const consumer = yield* item(10, "CONSUMER")
      const industrial = yield* item(50, "INDUSTRIAL")
      const covert = yield* item(900, "COVERT")
      // 0.7992 : 0.1598 : 0.0004 scaled to 1 by the largest remainder, in 0.0000001 units.
      const defaults = yield* newCase({
        priceCents: 100,
        items: [{ itemId: consumer }, { itemId: industrial }, { itemId: covert }]
      })
      expect(defaults.status).toBe(201)
      expect(defaults.body.items).toEqual([
        { itemId: covert, dropChance: 0.0004169, rangeStart: 1, rangeEnd: 4_169 },
        { itemId: industrial, dropChance: 0.1665624, rangeStart: 4_170, rangeEnd: 1_669_793 },
        { itemId: consumer, dropChance: 0.8330207, rangeStart: 1_669_794, rangeEnd: 10_000_000 }
      ])
      // Given chances are kept; the others share what they leave.
      const mixed = yield* newCase({
        priceCents: 200,
        items: [{ itemId: consumer }, { itemId: industrial }, { itemId: covert, dropChance: 0.001 }]
      })
      expect(mixed.body.items).toEqual([
        { itemId: covert, dropChance: 0.001, rangeStart: 1, rangeEnd: 10_000 },
        { itemId: industrial, dropChance: 0.1664653, rangeStart: 10_001, rangeEnd: 1_674_653 },
        { itemId: consumer, dropChance: 0.8325347, rangeStart: 1_674_654, rangeEnd: 10_000_000 }
      ])
      const full = yield* newCase({ priceCents: 200, items: [{ itemId: consumer }, { itemId: covert, dropChance: 1 }] })
      expect(full.status).toBe(422)
      expect(full.body.errors).toEqual([{
        field: "items",
        message: "The drop chances given add up to 1, which leaves less than 0.0001 for each of the 1 item without one"
      }])
    }))
})
