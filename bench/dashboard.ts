/**
 * Dashboard benchmark: seeds a large history straight into PostgreSQL (50 000 users, 1 000 000 case
 * openings, a third of their items sold back, 100 000 deposits over every method with their fees,
 * 20 000 withdrawals, 50 000 upgrades, 30 000 battles with their settlements, 2 000 drawn raffles,
 * 200 000 active user-days over 90 days, each with its ledger rows), then times every dashboard
 * endpoint of a running service on that database, and checks the chart against the records.
 *
 *   psql -h 127.0.0.1 -U postgres -c 'CREATE DATABASE gp_bench_dashboard'
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/gp_bench_dashboard ADMIN_IDP_IDS=bench-admin \
 *     RATE_LIMIT_GLOBAL=1000000/60000 RATE_LIMIT_AUTH=1000000/60000 PORT=3300 npm start
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/gp_bench_dashboard PORT=3300 \
 *     npm run bench:dashboard -- [--requests 200] [--url http://localhost:3300]
 * The service: `--url`, else where the service says it is (PUBLIC_URL, else PORT; scripts/ServiceUrl.ts).
 *
 * Seeding happens once, in one transaction (skipped when the database already holds the seeded users);
 * then the tables are laid out in time order, as the service would have written them. The service must
 * have started on the database first (it applies the migrations and loads the demo catalog). Seeding writes
 * days that are over, which never happens in service; so it empties the chart's cache of settled days
 * (`dashboard_days`, filled at the service's start), and the first chart request computes them again.
 */
import { performance } from "node:perf_hooks"
import { parseArgs } from "node:util"
import pg from "pg"
import { expectService, serviceUrl } from "../scripts/ServiceUrl"
import { devSessionAt } from "../test/support/DevSignIn"

const { values } = parseArgs({
  options: {
    url: { type: "string", default: serviceUrl() },
    requests: { type: "string", default: "200" }
  }
})
const databaseUrl = process.env.DATABASE_URL
if (databaseUrl === undefined) {
  console.error("DATABASE_URL must name the benchmark's database (see the top of bench/dashboard.ts)")
  process.exit(2)
}
// Before the seeding (minutes), that the service answers.
await expectService(values.url)

const USERS = 50_000
const OPENINGS = 1_000_000
const DEPOSITS = 100_000
const WITHDRAWALS = 20_000
const UPGRADES = 50_000
const BATTLES = 30_000
const RAFFLES = 2_000
const DAYS = 90

const db = new pg.Client({ connectionString: databaseUrl })
await db.connect()

const step = async (label: string, statement: string) => {
  const start = performance.now()
  const result = await db.query(statement)
  console.log(`  ${label}: ${result.rowCount ?? 0} rows in ${((performance.now() - start) / 1000).toFixed(1)} s`)
}

const seeded = Number((await db.query("SELECT count(*) AS n FROM users WHERE idp_id LIKE 'seed-%'")).rows[0].n)
if (seeded === 0) {
  // All or nothing: an interrupted seeding leaves nothing behind.
  await db.query("BEGIN")
  const catalog = Number((await db.query("SELECT count(*) AS n FROM case_items")).rows[0].n)
  if (catalog === 0) throw new Error("The catalog is empty: start the service on this database first")
  console.log(`Seeding ${DAYS} days of history into ${new URL(databaseUrl).pathname.slice(1)}:`)
  // Random instants of the last 90 days, spread over users, cases and items of the demo catalog.
  const when = `now() - random() * interval '${DAYS} days'`
  // Per row of generate_series g: a LATERAL subquery that does not name g is evaluated once, and every
  // row would get the same instant.
  const whenPerRow = `(SELECT ${when} + 0 * g * interval '1 second' AS t)`
  await step("users", `
    INSERT INTO users (idp_id, username, balance_cents, created_at, updated_at)
    SELECT 'seed-' || g, 'seed' || g, 0, t, t FROM generate_series(1, ${USERS}) g, LATERAL ${whenPerRow} x`)
  await db.query(`CREATE TEMP TABLE seed_users AS SELECT id, row_number() OVER (ORDER BY id) AS n FROM users WHERE idp_id LIKE 'seed-%'`)
  await db.query(`CREATE TEMP TABLE seed_pairs AS
    SELECT ci.case_id, ci.item_id, c.price_cents, i.value_cents, row_number() OVER (ORDER BY ci.case_id, ci.item_id) AS n
    FROM case_items ci JOIN cases c ON c.id = ci.case_id JOIN items i ON i.id = ci.item_id`)
  const pairs = Number((await db.query("SELECT count(*) AS n FROM seed_pairs")).rows[0].n)
  await step("openings (with their inventory entries and ledger rows)", `
    WITH picks AS (
      SELECT g, 1 + (g::bigint * 7919) % ${USERS} AS u, 1 + (g::bigint * 104729) % ${pairs} AS p, ${when} AS t
      FROM generate_series(1, ${OPENINGS}) g
    ),
    entries AS (
      INSERT INTO inventory_items (user_id, item_id, status, source, acquired_at, updated_at)
      SELECT su.id, sp.item_id, 'SOLD', 'CASE_OPEN', picks.t, picks.t
      FROM picks JOIN seed_users su ON su.n = picks.u JOIN seed_pairs sp ON sp.n = picks.p
      RETURNING id, user_id, item_id, acquired_at
    ),
    openings AS (
      INSERT INTO case_openings (case_id, user_id, item_id, inventory_item_id, server_seed, server_seed_hash, client_seed,
        nonce, roll, roll_item_id, roll_range_start, roll_range_end, flip_chance, roll_item_value_cents, price_paid_cents,
        item_value_cents, profit, created_at)
      SELECT sp.case_id, e.user_id, e.item_id, e.id, 'seed', 'seed', 'seed', 1, 1, e.item_id, 1, 1, 0, sp.value_cents,
             sp.price_cents, sp.value_cents, sp.value_cents - sp.price_cents, e.acquired_at
      FROM entries e JOIN LATERAL (SELECT * FROM seed_pairs WHERE item_id = e.item_id LIMIT 1) sp ON true
      RETURNING user_id, price_paid_cents, created_at, case_id
    )
    INSERT INTO transactions (user_id, type, amount_cents, balance_after_cents, counterparty, reference_type, reference_id, created_at)
    SELECT user_id, 'CASE_OPEN', -price_paid_cents, 0, 'HOUSE', 'CASE', case_id, created_at FROM openings`)
  await step("items sold back (ITEM_SELL rows)", `
    INSERT INTO transactions (user_id, type, amount_cents, balance_after_cents, counterparty, reference_type, reference_id, created_at)
    SELECT o.user_id, 'ITEM_SELL', o.item_value_cents, o.item_value_cents, 'HOUSE', 'INVENTORY_ITEM', o.inventory_item_id,
           o.created_at + interval '1 minute'
    FROM case_openings o WHERE o.id % 3 = 0`)
  await step("deposits over every method with their fees (and DEPOSIT rows of the confirmed ones)", `
    WITH made AS (
      INSERT INTO deposits (user_id, amount_cents, fee_cents, method, status, external_id, expires_at, confirmed_at,
                            failure_reason, qr_code, qr_code_text, created_at, updated_at)
      SELECT su.id, a.amount, (a.amount * m.basis_points + 5000) / 10000, m.method, s.status, 'seed_' || g,
             x.t + interval '30 minutes',
             CASE WHEN s.status = 'CONFIRMED' THEN x.t + interval '2 minutes' END,
             CASE WHEN s.status = 'FAILED' THEN 'seed' END, '', '', x.t, x.t
      FROM generate_series(1, ${DEPOSITS}) g
      JOIN seed_users su ON su.n = 1 + (g * 31) % ${USERS}
      CROSS JOIN LATERAL ${whenPerRow} x
      CROSS JOIN LATERAL (SELECT (ARRAY['CONFIRMED','CONFIRMED','CONFIRMED','CONFIRMED','CONFIRMED','CONFIRMED','FAILED','EXPIRED','PENDING','CONFIRMED'])[1 + g % 10] AS status) s
      CROSS JOIN LATERAL (SELECT 500 + (g * 37) % 50000 AS amount) a
      CROSS JOIN LATERAL (SELECT (ARRAY['PIX','PIX','CREDIT_CARD','CRYPTO'])[1 + g % 4] AS method,
                                 (ARRAY[0, 0, 350, 100])[1 + g % 4] AS basis_points) m
      RETURNING id, user_id, amount_cents, status, confirmed_at
    )
    INSERT INTO transactions (user_id, type, amount_cents, balance_after_cents, counterparty, reference_type, reference_id, created_at)
    SELECT user_id, 'DEPOSIT', amount_cents, amount_cents, 'EXTERNAL', 'DEPOSIT', id, confirmed_at FROM made WHERE status = 'CONFIRMED'`)
  await step("withdrawals (and their WITHDRAWAL rows)", `
    WITH made AS (
      INSERT INTO withdrawals (user_id, amount_cents, status, payment_method, pix_key_type, pix_key, payout_id,
                               rejection_reason, requested_at, processed_at)
      SELECT su.id, 1000 + (g * 53) % 20000, s.status, 'PIX', 'EMAIL', 'seed@example.com',
             CASE WHEN s.status = 'COMPLETED' THEN 'po_seed_' || g END,
             CASE WHEN s.status = 'REJECTED' THEN 'seed' END,
             x.t, CASE WHEN s.status <> 'PENDING' THEN x.t + interval '1 hour' END
      FROM generate_series(1, ${WITHDRAWALS}) g
      JOIN seed_users su ON su.n = 1 + (g * 17) % ${USERS}
      CROSS JOIN LATERAL ${whenPerRow} x
      CROSS JOIN LATERAL (SELECT (ARRAY['COMPLETED','COMPLETED','COMPLETED','REJECTED','CANCELLED','PENDING'])[1 + g % 6] AS status) s
      RETURNING id, user_id, amount_cents, requested_at
    )
    INSERT INTO transactions (user_id, type, amount_cents, balance_after_cents, counterparty, reference_type, reference_id, created_at)
    SELECT user_id, 'WITHDRAWAL', -amount_cents, 0, 'EXTERNAL', 'WITHDRAWAL', id, requested_at FROM made`)
  await step("upgrades (with their staked entries)", `
    WITH staked AS (
      INSERT INTO inventory_items (user_id, item_id, status, source, acquired_at, updated_at)
      SELECT su.id, sp.item_id, 'UPGRADED', 'CASE_OPEN', x.t, x.t
      FROM generate_series(1, ${UPGRADES}) g
      JOIN seed_users su ON su.n = 1 + (g * 13) % ${USERS}
      JOIN seed_pairs sp ON sp.n = 1 + (g * 11) % ${pairs}
      CROSS JOIN LATERAL ${whenPerRow} x
      RETURNING id, user_id, item_id, acquired_at
    )
    INSERT INTO upgrades (user_id, inventory_item_id, from_item_id, to_item_id, from_value_cents, to_value_cents, probability,
                          threshold, roll, success, server_seed, server_seed_hash, client_seed, nonce, created_at)
    SELECT s.user_id, s.id, s.item_id, s.item_id, i.value_cents, i.value_cents * 2, 0.45, 45000, 50000, false,
           'seed', 'seed', 'seed', 1, s.acquired_at
    FROM staked s JOIN items i ON i.id = s.item_id`)
  await db.query(`CREATE TEMP TABLE seed_cases AS
    SELECT id, price_cents, row_number() OVER (ORDER BY id) AS n FROM cases WHERE is_active`)
  const cases = Number((await db.query("SELECT count(*) AS n FROM seed_cases")).rows[0].n)
  await step("battles (one round; 1 in 10 cancelled and refunded) and their ledger rows", `
    WITH made AS (
      INSERT INTO battles (creator_id, mode, max_players, status, entry_price_cents, player_count, fair_share_cents,
                           winners_count, created_at, finished_at)
      SELECT su.id, 'NORMAL', 2, s.status, sc.price_cents, CASE WHEN s.status = 'FINISHED' THEN 2 ELSE 1 END,
             CASE WHEN s.status = 'FINISHED' THEN 0 END, CASE WHEN s.status = 'FINISHED' THEN 1 END,
             x.t, x.t + interval '1 minute'
      FROM generate_series(1, ${BATTLES}) g
      JOIN seed_users su ON su.n = 1 + (g * 23) % ${USERS}
      JOIN seed_cases sc ON sc.n = 1 + g % ${cases}
      CROSS JOIN LATERAL ${whenPerRow} x
      CROSS JOIN LATERAL (SELECT CASE WHEN g % 10 = 0 THEN 'CANCELLED' ELSE 'FINISHED' END AS status) s
      RETURNING id, creator_id, entry_price_cents, status, created_at, finished_at
    )
    INSERT INTO transactions (user_id, type, amount_cents, balance_after_cents, counterparty, reference_type, reference_id, created_at)
    SELECT creator_id, 'BATTLE_ENTRY', -entry_price_cents, 0, 'HOUSE', 'BATTLE', id, created_at FROM made
    UNION ALL
    SELECT creator_id, 'BATTLE_ENTRY', -entry_price_cents, 0, 'HOUSE', 'BATTLE', id, created_at + interval '30 seconds'
    FROM made WHERE status = 'FINISHED'
    UNION ALL
    SELECT creator_id, 'BATTLE_REFUND', entry_price_cents, 0, 'HOUSE', 'BATTLE', id, finished_at FROM made WHERE status = 'CANCELLED'`)
  // Entries whose ids are taken from the sequence first, so that the rows pointing to them can be written too.
  await db.query(`CREATE TEMP TABLE seed_wins AS
    SELECT b.id AS battle_id, b.creator_id, b.finished_at, sp.item_id, sp.value_cents,
           nextval(pg_get_serial_sequence('inventory_items', 'id')) AS entry_id
    FROM battles b JOIN seed_pairs sp ON sp.n = 1 + (b.id * 31) % ${pairs} WHERE b.status = 'FINISHED'`)
  await step("battle settlements (an item to the winner of each finished battle)", `
    WITH entries AS (
      INSERT INTO inventory_items (id, user_id, item_id, status, source, acquired_at, updated_at) OVERRIDING SYSTEM VALUE
      SELECT entry_id, creator_id, item_id, 'AVAILABLE', 'BATTLE', finished_at, finished_at FROM seed_wins
    )
    INSERT INTO battle_settlements (battle_id, user_id, item_id, type, value_cents, round_number, inventory_item_id, created_at)
    SELECT battle_id, creator_id, item_id, 'DROPPED', value_cents, 1, entry_id, finished_at FROM seed_wins`)
  await db.query(`CREATE TEMP TABLE seed_raffles AS
    SELECT su.id AS winner_id, sp.item_id, sp.value_cents, x.t,
           nextval(pg_get_serial_sequence('inventory_items', 'id')) AS entry_id
    FROM generate_series(1, ${RAFFLES}) g
    JOIN seed_users su ON su.n = 1 + (g * 29) % ${USERS}
    JOIN seed_pairs sp ON sp.n = 1 + (g * 7) % ${pairs}
    CROSS JOIN LATERAL ${whenPerRow} x`)
  await step("raffles (10 tickets of 100 each, drawn an hour later) and their RAFFLE_TICKET rows", `
    WITH entries AS (
      INSERT INTO inventory_items (id, user_id, item_id, status, source, acquired_at, updated_at) OVERRIDING SYSTEM VALUE
      SELECT entry_id, winner_id, item_id, 'AVAILABLE', 'RAFFLE', t + interval '1 hour', t + interval '1 hour' FROM seed_raffles
    ),
    made AS (
      INSERT INTO raffles (item_id, ticket_price_cents, max_tickets, tickets_sold, ends_at, status, server_seed, server_seed_hash,
                           winning_ticket, winner_id, inventory_item_id, prize_value_cents, created_at, closed_at)
      SELECT item_id, 100, 10, 10, t + interval '1 hour', 'DRAWN', 'seed', 'seed', 1, winner_id, entry_id, value_cents,
             t, t + interval '1 hour'
      FROM seed_raffles
      RETURNING id, winner_id, created_at
    ),
    tickets AS (
      INSERT INTO raffle_tickets (raffle_id, first_ticket, last_ticket, user_id, client_seed, created_at)
      SELECT id, 1, 10, winner_id, 'seed', created_at FROM made
    )
    INSERT INTO transactions (user_id, type, amount_cents, balance_after_cents, counterparty, reference_type, reference_id, created_at)
    SELECT winner_id, 'RAFFLE_TICKET', -1000, 0, 'HOUSE', 'RAFFLE', id, created_at FROM made`)
  await step("active user-days", `
    INSERT INTO user_activity_days (day, user_id)
    SELECT DISTINCT (now() - (g % ${DAYS}) * interval '1 day')::date, su.id
    FROM generate_series(1, 200000) g JOIN seed_users su ON su.n = 1 + (g * 7) % ${USERS}
    ON CONFLICT DO NOTHING`)
  await db.query("COMMIT")
  // The service appends rows as things happen, so a day's rows lie together; seeded at random instants,
  // they would be scattered over the whole table. Lay the tables the dashboard reads out in time order.
  await step("time order: case_openings", "CLUSTER case_openings USING case_openings_created_idx")
  await db.query("CREATE INDEX seed_transactions_time_idx ON transactions (created_at)")
  await step("time order: transactions", "CLUSTER transactions USING seed_transactions_time_idx")
  await db.query("DROP INDEX seed_transactions_time_idx")
  await step("time order: upgrades", "CLUSTER upgrades USING upgrades_created_idx")
  await step("time order: deposits", "CLUSTER deposits USING deposits_created_idx")
  await step("time order: battle_settlements", "CLUSTER battle_settlements USING battle_settlements_created_idx")
  await step("analyze", "ANALYZE")
}
await step("empty the chart's cache of settled days", "DELETE FROM dashboard_days")
const size = (await db.query(`
  SELECT (SELECT count(*) FROM users) AS users, (SELECT count(*) FROM case_openings) AS openings,
         (SELECT count(*) FROM deposits) AS deposits, (SELECT count(*) FROM withdrawals) AS withdrawals,
         (SELECT count(*) FROM upgrades) AS upgrades, (SELECT count(*) FROM battles) AS battles,
         (SELECT count(*) FROM battle_settlements) AS settlements, (SELECT count(*) FROM raffles) AS raffles,
         (SELECT count(*) FROM transactions) AS transactions, (SELECT count(*) FROM user_activity_days) AS active_days`)).rows[0]
console.log(`History: ${Object.entries(size).map(([k, v]) => `${k} ${v}`).join(", ")}`)

const session = await devSessionAt(values.url, "bench-admin")
const endpoints = [
  "/api/admin/dashboard",
  "/api/admin/dashboard/revenue-chart?period=7d",
  "/api/admin/dashboard/revenue-chart?period=30d",
  "/api/admin/dashboard/revenue-chart?period=90d",
  "/api/admin/dashboard/recent-activity?limit=20",
  "/api/admin/dashboard/alerts"
]
const call = async (path: string) => {
  const start = performance.now()
  const response = await fetch(`${values.url}${path}`, { headers: { authorization: `Bearer ${session}` } })
  await response.arrayBuffer()
  if (response.status !== 200) throw new Error(`${path} answered ${response.status}`)
  return performance.now() - start
}

// What the 90-day chart must show, straight from the records (docs/rules.md#revenue-chart, #gross-gaming-revenue).
const expected = (await db.query(`
  WITH bounds AS (
    SELECT from_, from_ + interval '90 days' AS to_
    FROM (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '89 days' AS from_) b
  ),
  ledger AS (
    SELECT -sum(amount_cents) FILTER (WHERE type IN ('CASE_OPEN', 'BATTLE_ENTRY', 'BATTLE_REFUND')) AS revenue,
           -sum(amount_cents) FILTER (WHERE type IN ('BATTLE_ENTRY', 'BATTLE_REFUND', 'RAFFLE_TICKET')) AS stakes,
           sum(amount_cents) FILTER (WHERE type = 'ITEM_SELL') AS item_sales
    FROM transactions, bounds WHERE created_at >= from_ AND created_at < to_
  )
  SELECT (SELECT revenue FROM ledger)
           + (SELECT COALESCE(sum(from_value_cents), 0) FROM upgrades, bounds WHERE created_at >= from_ AND created_at < to_) AS revenue,
         (SELECT stakes FROM ledger)
           + (SELECT COALESCE(sum(price_paid_cents - item_value_cents), 0) FROM case_openings, bounds WHERE created_at >= from_ AND created_at < to_)
           + (SELECT COALESCE(sum(from_value_cents - CASE WHEN success THEN to_value_cents ELSE 0 END), 0)
              FROM upgrades, bounds WHERE created_at >= from_ AND created_at < to_)
           - (SELECT COALESCE(sum(value_cents), 0) FROM battle_settlements, bounds
              WHERE type <> 'REMOVED_TO_POOL' AND created_at >= from_ AND created_at < to_)
           - (SELECT COALESCE(sum(prize_value_cents), 0) FROM raffles, bounds WHERE status = 'DRAWN' AND closed_at >= from_ AND closed_at < to_) AS ggr,
         (SELECT item_sales FROM ledger) AS item_sales,
         (SELECT COALESCE(sum(fee_cents), 0) FROM deposits, bounds WHERE status = 'CONFIRMED' AND confirmed_at >= from_ AND confirmed_at < to_) AS fees`))
  .rows[0] as Record<"revenue" | "ggr" | "item_sales" | "fees", string>
await db.end()

const requests = Number(values.requests)
{
  // With the cache empty: the first request computes the 178 settled days of 90d and its preceding period.
  const start = performance.now()
  const response = await fetch(`${values.url}/api/admin/dashboard/revenue-chart?period=90d`, {
    headers: { authorization: `Bearer ${session}` }
  })
  const chart = (await response.json()) as {
    data: ReadonlyArray<{ ggr: number; itemSales: number; fees: number }>
    summary: { totalRevenue: number }
  }
  console.log(`\nFirst 90d chart with the cache of settled days empty: ${(performance.now() - start).toFixed(1)} ms`)
  const sum = (key: "ggr" | "itemSales" | "fees") => chart.data.reduce((total, day) => total + day[key], 0)
  const shown = { revenue: chart.summary.totalRevenue, ggr: sum("ggr"), item_sales: sum("itemSales"), fees: sum("fees") }
  for (const [key, value] of Object.entries(shown)) {
    const want = Number(expected[key as keyof typeof expected])
    if (value !== want) throw new Error(`90d ${key} ${value}, the records say ${want}`)
  }
  console.log(`90d revenue ${shown.revenue}, GGR ${shown.ggr}, item sales ${shown.item_sales}, fees ${shown.fees}: match the records`)
}
console.log(`\nDashboard endpoints, ${requests} sequential requests each (ms):`)
for (const path of endpoints) {
  const first = await call(path)
  const timings: Array<number> = []
  for (let i = 0; i < requests; i++) timings.push(await call(path))
  timings.sort((a, b) => a - b)
  const at = (q: number) => timings[Math.min(timings.length - 1, Math.floor(q * timings.length))]!.toFixed(1)
  console.log(`  ${path.padEnd(48)} first ${first.toFixed(1).padStart(7)}   p50 ${at(0.5).padStart(6)}   p99 ${at(0.99).padStart(6)}`)
}
