/**
 * Raffles through the public API (docs/rules.md#raffles): consecutive ticket numbers across concurrent buyers, limits,
 * the draw when sold out and at endsAt (test clock), cancellation without tickets, the drawn ticket
 * recomputed from the revealed seed, and the ledger afterwards.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import { createHash, createHmac } from "node:crypto"
import { Ledger } from "../../src/services/money/Ledger"
import { Raffles } from "../../src/services/raffles/Raffles"
import { balanceOf, fundedPlayer, makeCase } from "../support/GameFixtures"
import { makeTestClient, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const appOptions = {
  config: {
    adminIdpIds: ["root"],
    rateLimits: { ...testConfig.rateLimits, auth: { count: 10_000, windowMs: 60_000 }, global: { count: 10_000, windowMs: 60_000 } }
  }
}

/** The raffle service on the test database, for running the draw job by hand. */

let logins = 0
const buyers = (client: TestClient, count: number, cents: number) =>
  Effect.forEach(Array.from({ length: count }), () => fundedPlayer(client, `buyer-${++logins}`, cents))

/** An item and a raffle of it, created by the administrator; ends an hour from the test clock's now. */
const newRaffle = (client: TestClient, admin: { auth: Record<string, string> }, options: { maxTickets: number; ticketPriceCents?: number }) =>
  Effect.gen(function*() {
    const { items } = yield* makeCase()
    const endsAt = new Date((yield* Clock.currentTimeMillis) + 3_600_000).toISOString()
    const created = yield* client.post(
      "/api/admin/raffles",
      { itemId: String(items.jackpot!.id), ticketPriceCents: options.ticketPriceCents ?? 100, maxTickets: options.maxTickets, endsAt },
      admin.auth
    )
    expect(created.status).toBe(201)
    return created.body as { id: string; serverSeedHash: string; item: { id: string } }
  })

/**
 * The draw recomputed from what `GET /raffles/:id` shows once drawn (docs/fairness.md): the digest of
 * every ticket's client seed in ticket order, then
 * (HMAC-SHA256(serverSeed, `${raffleId}:${ticketsSold}:${digest}`) mod ticketsSold) + 1.
 */
const recompute = (raffle: {
  readonly id: string
  readonly serverSeed: string
  readonly ticketsSold: number
  readonly ticketSeedsDigest: string
  readonly ticketSeeds: ReadonlyArray<{ firstTicket: number; lastTicket: number; clientSeed: string }>
}) => {
  const seeds = raffle.ticketSeeds.flatMap((b) => Array(b.lastTicket - b.firstTicket + 1).fill(b.clientSeed))
  expect(seeds.length).toBe(raffle.ticketsSold)
  const digest = createHash("sha256").update(seeds.join(":")).digest("hex")
  expect(digest).toBe(raffle.ticketSeedsDigest)
  const h = createHmac("sha256", raffle.serverSeed).update(`${raffle.id}:${raffle.ticketsSold}:${digest}`).digest("hex")
  return Number(BigInt(`0x${h}`) % BigInt(raffle.ticketsSold)) + 1
}

/**
 * The ledger checks (docs/rules.md#ledger-checks) plus: every raffle's ticket debits equal its price times the
 * tickets sold.
 */
const ledgerProblems = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const discrepancies = yield* Effect.flatMap(Ledger, (l) => l.discrepancies).pipe(Effect.provide(Ledger.Default))
  const raffles = yield* sql<{ id: string }>`
    SELECT r.id::text AS id FROM raffles r
    LEFT JOIN transactions t ON t.reference_type = 'RAFFLE' AND t.reference_id = r.id AND t.type = 'RAFFLE_TICKET'
    GROUP BY r.id HAVING COALESCE(-sum(t.amount_cents), 0) <> r.ticket_price_cents * r.tickets_sold`
  return { discrepancies, raffles }
})
const healthy = { discrepancies: [], raffles: [] }

/** The audit entries of one raffle, oldest first. */
const auditsOf = (raffleId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ action: string; userId: string | null; metadata: unknown }>`
      SELECT action, user_id::text AS user_id, metadata FROM audit_logs
      WHERE entity_type = 'Raffle' AND entity_id = ${raffleId} ORDER BY id`)

/** How many RAFFLE_TICKET movements a user has. */
const ticketDebitsOf = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ n: number }>`SELECT count(*)::int AS n FROM transactions WHERE user_id = ${userId} AND type = 'RAFFLE_TICKET'`,
      (rows) => Number(rows[0]!.n)
    ))

layer(TestDatabase)("raffles", (it) => {
  it.scoped("administrators create raffles with a published seed hash; the request is validated", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const admin = yield* fundedPlayer(client, "root", 0)
      const [player] = yield* buyers(client, 1, 0)
      const raffle = yield* newRaffle(client, admin, { maxTickets: 10 })
      expect(raffle).toMatchObject({ status: "OPEN", ticketsSold: 0, serverSeed: null, winningTicket: null, winner: null, myTickets: [] })
      expect(raffle.serverSeedHash).toMatch(/^[0-9a-f]{64}$/)
      expect((yield* client.get(`/api/raffles/${raffle.id}`, player!.auth)).body.serverSeedHash).toBe(raffle.serverSeedHash)

      const post = (body: unknown, auth = admin.auth) => client.post("/api/admin/raffles", body, auth)
      const valid = { itemId: raffle.item.id, ticketPriceCents: 100, maxTickets: 10, endsAt: new Date(Date.UTC(2100, 0)).toISOString() }
      expect((yield* post(valid, player!.auth)).status).toBe(403)
      expect((yield* post({ ...valid, maxTickets: 0, ticketPriceCents: -1, endsAt: "soon" })).body.errors.map((e: { field: string }) => e.field).sort())
        .toEqual(["endsAt", "maxTickets", "ticketPriceCents"])
      expect((yield* post({ ...valid, itemId: "999999" })).body).toEqual({ statusCode: 404, message: "Item not found" })
      expect((yield* post({ ...valid, endsAt: new Date(0).toISOString() })).body).toEqual({ statusCode: 400, message: "endsAt must be in the future" })
      expect((yield* post({ ...valid, maxTickets: 10_001, ticketPriceCents: 1.5 })).body.errors.map((e: { field: string }) => e.field).sort())
        .toEqual(["maxTickets", "ticketPriceCents"])
      expect((yield* post({ ticketPriceCents: 100 })).status).toBe(400)
      expect((yield* client.post("/api/admin/raffles", valid, {})).status).toBe(401)
      expect((yield* auditsOf(raffle.id)).map((a) => [a.action, a.userId])).toEqual([["RAFFLE_CREATED", admin.id]])

      // Reading and buying: unknown ids are 404, malformed ones and bad counts 400.
      expect((yield* client.get("/api/raffles/999999", player!.auth)).body).toEqual({ statusCode: 404, message: "Raffle not found" })
      expect((yield* client.get("/api/raffles/abc", player!.auth)).status).toBe(400)
      expect((yield* client.get(`/api/raffles/${raffle.id}`, {})).status).toBe(401)
      expect((yield* client.post("/api/raffles/999999/tickets", { count: 1 }, player!.auth)).body)
        .toEqual({ statusCode: 404, message: "Raffle not found" })
      for (const count of [0, 101, 2.5, "3", null]) {
        const refused = yield* client.post(`/api/raffles/${raffle.id}/tickets`, { count }, player!.auth)
        expect(refused.status).toBe(400)
        expect(refused.body.errors.map((e: { field: string }) => e.field)).toEqual(["count"])
      }
      expect((yield* client.post(`/api/raffles/${raffle.id}/tickets`, {}, player!.auth)).status).toBe(400)

      // The list: status filter and pagination (docs/rules.md#pagination).
      const open = (yield* client.get("/api/raffles?status=OPEN", player!.auth)).body
      expect(open.raffles.map((r: { id: string }) => r.id)).toContain(raffle.id)
      expect(open).toMatchObject({ page: 1, total: expect.any(Number) })
      expect((yield* client.get("/api/raffles?status=DRAWN", player!.auth)).body.raffles.map((r: { id: string }) => r.id))
        .not.toContain(raffle.id)
      expect((yield* client.get("/api/raffles?status=BOGUS", player!.auth)).status).toBe(400)
      expect((yield* client.get("/api/raffles?limit=101", player!.auth)).status).toBe(400)
      expect((yield* client.get("/api/raffles?page=0", player!.auth)).status).toBe(400)
      yield* newRaffle(client, admin, { maxTickets: 10 })
      const first = (yield* client.get("/api/raffles?limit=1&page=1", player!.auth)).body
      const second = (yield* client.get("/api/raffles?limit=1&page=2", player!.auth)).body
      expect(first.raffles.length).toBe(1)
      expect(second).toMatchObject({ page: 2, total: first.total })
      expect(second.raffles[0].id).not.toBe(first.raffles[0].id)
      expect(yield* ledgerProblems).toEqual(healthy)
    }))

  it.scoped("concurrent buyers get consecutive numbers, each exactly once; overselling is refused and not charged", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const admin = yield* fundedPlayer(client, "root", 0)
      const raffle = yield* newRaffle(client, admin, { maxTickets: 60, ticketPriceCents: 100 })
      const crowd = yield* buyers(client, 10, 1_000)
      const answers = yield* Effect.all(
        crowd.map((buyer, i) => client.post(`/api/raffles/${raffle.id}/tickets`, { count: i + 1 }, buyer.auth)),
        { concurrency: "unbounded" }
      )
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200))
      const numbers = answers.flatMap((a) => a.body.tickets as ReadonlyArray<number>)
      expect([...numbers].sort((a, b) => a - b)).toEqual(Array.from({ length: 55 }, (_, i) => i + 1))
      for (const [i, answer] of answers.entries()) {
        const tickets = answer.body.tickets as ReadonlyArray<number>
        expect(tickets.length).toBe(i + 1)
        expect(tickets).toEqual(Array.from({ length: i + 1 }, (_, k) => tickets[0]! + k))
        expect(yield* balanceOf(client, crowd[i]!.auth)).toBe(1_000 - (i + 1) * 100)
        expect((yield* client.get(`/api/raffles/${raffle.id}`, crowd[i]!.auth)).body.myTickets).toEqual(tickets)
      }
      // 5 left: asking for 6 is refused and costs nothing, even to a buyer who could pay for them.
      const [rich, broke] = [...(yield* buyers(client, 1, 10_000)), ...(yield* buyers(client, 1, 99))]
      expect(yield* client.post(`/api/raffles/${raffle.id}/tickets`, { count: 6 }, rich!.auth))
        .toEqual(expect.objectContaining({ status: 409, body: { statusCode: 409, message: "Only 5 tickets left" } }))
      expect(yield* balanceOf(client, rich!.auth)).toBe(10_000)
      expect(yield* ticketDebitsOf(rich!.id)).toBe(0)
      expect(yield* client.post(`/api/raffles/${raffle.id}/tickets`, { count: 1 }, broke!.auth))
        .toEqual(expect.objectContaining({ status: 400, body: { statusCode: 400, message: "Insufficient balance" } }))
      expect(yield* balanceOf(client, broke!.auth)).toBe(99)
      const after = (yield* client.get(`/api/raffles/${raffle.id}`, rich!.auth)).body
      expect(after).toMatchObject({ ticketsSold: 55, status: "OPEN", myTickets: [] })
      // The refused purchases took no numbers: the next one continues at 56.
      expect((yield* client.post(`/api/raffles/${raffle.id}/tickets`, { count: 2 }, rich!.auth)).body.tickets).toEqual([56, 57])
      expect(yield* ledgerProblems).toEqual(healthy)
    }))

  it.scoped("selling out draws at once: the winner's ticket follows from the revealed seed; they get the item", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const admin = yield* fundedPlayer(client, "root", 0)
      const raffle = yield* newRaffle(client, admin, { maxTickets: 7, ticketPriceCents: 50 })
      const [a, b] = yield* buyers(client, 2, 1_000)
      // Each purchase records its buyer's client seed at that moment.
      const clientSeedA = (yield* client.get("/api/provably-fair/client-seed", a!.auth)).body.clientSeed
      const clientSeedB = "b-chose-this"
      yield* client.request("/api/provably-fair/client-seed", {
        method: "PUT",
        headers: { ...b!.auth, "content-type": "application/json" },
        body: JSON.stringify({ clientSeed: clientSeedB })
      })
      expect((yield* client.post(`/api/raffles/${raffle.id}/tickets`, { count: 3 }, a!.auth)).body.raffle.status).toBe("OPEN")
      const last = yield* client.post(`/api/raffles/${raffle.id}/tickets`, { count: 4 }, b!.auth)
      const drawn = last.body.raffle
      expect(drawn).toMatchObject({ status: "DRAWN", ticketsSold: 7, myTickets: [4, 5, 6, 7] })
      expect(createHash("sha256").update(drawn.serverSeed).digest("hex")).toBe(raffle.serverSeedHash)
      expect(drawn.ticketSeeds).toEqual([
        { firstTicket: 1, lastTicket: 3, clientSeed: clientSeedA },
        { firstTicket: 4, lastTicket: 7, clientSeed: clientSeedB }
      ])
      expect(drawn.winningTicket).toBe(recompute(drawn))
      // Lists carry the digest, not every ticket's seed.
      const listed = (yield* client.get("/api/raffles?status=DRAWN", a!.auth)).body.raffles
        .find((r: { id: string }) => r.id === raffle.id)
      expect(listed).toMatchObject({ ticketSeedsDigest: drawn.ticketSeedsDigest, ticketSeeds: null })
      const winner = drawn.winningTicket <= 3 ? a! : b!
      const loser = winner === a ? b! : a!
      expect(drawn.winner).toEqual({ id: winner.id, username: expect.any(String) })

      const won = (yield* client.get("/api/inventory", winner.auth)).body.items
      expect(won.map((e: { item: { id: string }; source: string }) => [e.item.id, e.source])).toEqual([[raffle.item.id, "RAFFLE"]])
      expect((yield* client.get("/api/inventory", loser.auth)).body.items).toEqual([])
      const told = (yield* client.get("/api/notifications", winner.auth)).body.notifications
      expect(told.map((n: { type: string; message: string }) => [n.type, n.message])).toEqual([
        ["RAFFLE_WON", expect.stringContaining(`Ticket #${drawn.winningTicket}`)]
      ])
      const drops = (yield* client.get("/api/live-drops/recent", loser.auth)).body.drops
      expect(drops.filter((d: { source: string; item: { id: string } }) => d.source === "RAFFLE" && d.item.id === raffle.item.id)
        .map((d: { user: { id: string } }) => d.user.id)).toEqual([winner.id])
      expect((yield* auditsOf(raffle.id)).map((a) => [a.action, a.userId])).toEqual([
        ["RAFFLE_CREATED", admin.id],
        ["RAFFLE_DRAWN", winner.id]
      ])
      // Anyone sees the revealed seed and the result; their own tickets are none.
      const outsider = (yield* client.get(`/api/raffles/${raffle.id}`, admin.auth)).body
      expect(outsider).toMatchObject({ serverSeed: drawn.serverSeed, winningTicket: drawn.winningTicket, winner: drawn.winner, myTickets: [] })
      expect(yield* client.post(`/api/raffles/${raffle.id}/tickets`, { count: 1 }, a!.auth))
        .toMatchObject({ status: 409, body: { message: "Raffle is not open" } })
      expect(yield* ledgerProblems).toEqual(healthy)
    }))

  it.scoped("buyers racing for the last tickets: the raffle sells out once and is drawn once; the rest pay nothing", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const admin = yield* fundedPlayer(client, "root", 0)
      const raffle = yield* newRaffle(client, admin, { maxTickets: 10, ticketPriceCents: 100 })
      const crowd = yield* buyers(client, 8, 200)
      const answers = yield* Effect.all(
        crowd.map((buyer) => client.post(`/api/raffles/${raffle.id}/tickets`, { count: 2 }, buyer.auth)),
        { concurrency: "unbounded" }
      )
      const bought = answers.flatMap((a, i) => a.status === 200 ? [i] : [])
      expect(bought.length).toBe(5)
      for (const [i, answer] of answers.entries()) {
        if (answer.status === 200) continue
        expect(answer.body).toEqual({ statusCode: 409, message: "Raffle is not open" })
        expect(yield* balanceOf(client, crowd[i]!.auth)).toBe(200)
      }
      expect(answers.flatMap((a) => a.status === 200 ? a.body.tickets : []).sort((x: number, y: number) => x - y))
        .toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
      const drawn = (yield* client.get(`/api/raffles/${raffle.id}`, admin.auth)).body
      expect(drawn).toMatchObject({ status: "DRAWN", ticketsSold: 10 })
      expect(drawn.winningTicket).toBe(recompute(drawn))
      const winnerIndex = bought.find((i) => answers[i]!.body.tickets.includes(drawn.winningTicket))!
      expect(drawn.winner.id).toBe(crowd[winnerIndex]!.id)
      expect((yield* auditsOf(raffle.id)).filter((a) => a.action === "RAFFLE_DRAWN").length).toBe(1)
      const prizes = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ userId: string }>`SELECT user_id::text AS user_id FROM inventory_items
          WHERE item_id = ${raffle.item.id} AND source = 'RAFFLE'`)
      expect(prizes.map((p) => p.userId)).toEqual([drawn.winner.id])
      expect(yield* ledgerProblems).toEqual(healthy)
    }))
})

// Its own database: the draw job acts on every raffle there is.
layer(TestDatabase)("raffle draw job", (it) => {
  it.scoped("at endsAt the job draws raffles with tickets and cancels those without; nothing before", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const raffles = yield* client.service(Raffles)
      const admin = yield* fundedPlayer(client, "root", 0)
      const sold = yield* newRaffle(client, admin, { maxTickets: 100 })
      const empty = yield* newRaffle(client, admin, { maxTickets: 100 })
      const [buyer] = yield* buyers(client, 1, 500)
      yield* client.post(`/api/raffles/${sold.id}/tickets`, { count: 5 }, buyer!.auth)

      yield* TestClock.adjust(3_600_000 - 1)
      expect(yield* raffles.drawDue()).toBe(0)
      expect((yield* client.get(`/api/raffles/${sold.id}`, buyer!.auth)).body).toMatchObject({ status: "OPEN", serverSeed: null })
      expect((yield* client.get(`/api/raffles/${empty.id}`, buyer!.auth)).body).toMatchObject({ status: "OPEN", serverSeed: null })
      yield* TestClock.adjust(1)
      expect(yield* client.post(`/api/raffles/${sold.id}/tickets`, { count: 1 }, buyer!.auth))
        .toMatchObject({ status: 409, body: { message: "Raffle is not open" } })
      expect(yield* raffles.drawDue()).toBe(2)
      expect(yield* raffles.drawDue()).toBe(0)

      const drawn = (yield* client.get(`/api/raffles/${sold.id}`, buyer!.auth)).body
      expect(drawn).toMatchObject({ status: "DRAWN", ticketsSold: 5, winner: { id: buyer!.id }, myTickets: [1, 2, 3, 4, 5] })
      expect(drawn.winningTicket).toBe(recompute(drawn))
      const cancelled = (yield* client.get(`/api/raffles/${empty.id}`, buyer!.auth)).body
      expect(cancelled).toMatchObject({ status: "CANCELLED", ticketsSold: 0, winningTicket: null, winner: null })
      expect(createHash("sha256").update(drawn.serverSeed).digest("hex")).toBe(sold.serverSeedHash)
      expect(yield* balanceOf(client, buyer!.auth)).toBe(0)
      expect((yield* client.get("/api/inventory", buyer!.auth)).body.items.map((e: { source: string }) => e.source)).toEqual(["RAFFLE"])
      expect((yield* client.get("/api/notifications", buyer!.auth)).body.notifications.map((n: { type: string }) => n.type))
        .toEqual(["RAFFLE_WON"])
      expect((yield* auditsOf(sold.id)).map((a) => a.action)).toEqual(["RAFFLE_CREATED", "RAFFLE_DRAWN"])
      expect((yield* auditsOf(empty.id)).map((a) => a.action)).toEqual(["RAFFLE_CREATED", "RAFFLE_CANCELLED"])
      expect((yield* client.get("/api/raffles?status=CANCELLED", buyer!.auth)).body.raffles.map((r: { id: string }) => r.id))
        .toEqual([empty.id])
      expect(yield* ledgerProblems).toEqual(healthy)
    }))
})
