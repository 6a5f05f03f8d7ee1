/**
 * The hot paths besides the opening, each as a closed loop of `--users` users for `--seconds`, on a
 * fresh database with the service started as `npm start` runs it (real PostgreSQL and Redis):
 *   - `GET /api/auth/me`;
 *   - `POST /api/cases/1/open` (which also fills the inventories the next two use);
 *   - `POST /api/upgrades`: each user stakes the items it holds for an item of 2 to 10 times the value;
 *   - `POST /api/inventory/:id/sell`: each user sells what it still holds;
 *   - battle join: users in pairs, one creates a 2-player battle of one case, the other joins it
 *     (the join fills the battle: it rolls both players' cases and settles); a step is both requests;
 *   - 4-player battle: users in fours, one creates a 4-player battle of one case, the other three join it in
 *     turn (two joins that leave it waiting, then the one that fills it); a step is the four requests.
 * It prints each path's throughput, latencies and the CPU time per step of the service, and of PostgreSQL, Redis and
 * this process (the load generator) when they run on this machine, and the shares of time the service's main
 * thread ran on a CPU and waited for one; at the end, each path's service CPU as a multiple of `GET /api/auth/me`'s
 * in the same run, a figure that the host's speed moves less.
 *
 * `--warm-up S` (default 60) runs the openings' loop for S seconds before anything is measured, as bench:vs-pgbench
 * does: with 3 s the first paths measured the service while V8 was still optimizing it (docs/decisions.md "Warm-up").
 * Before each path the database is vacuumed and analyzed, as autovacuum would have done by then (it is off on the
 * machines these benches run on; docs/decisions.md "Statistics").
 *
 *   npm run bench:hot-paths -- [--users 64] [--seconds 10] [--warm-up 60] [--postgres ...] [--redis ...] [--profile <dir>]
 */
import { parseArgs } from "node:util"
import { show, startBench } from "./BenchService"

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "64" },
    seconds: { type: "string", default: "10" },
    "warm-up": { type: "string", default: "60" },
    postgres: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" },
    redis: { type: "string", default: "redis://127.0.0.1:6379" },
    profile: { type: "string" }
  }
})
const USERS = Number(values.users) - (Number(values.users) % 2)
const SECONDS = Number(values.seconds)
const WARM_UP = Number(values["warm-up"])

const bench = await startBench({ postgres: values.postgres, redis: values.redis, instances: 1, profile: values.profile })
const { sessions } = await bench.signIn(USERS)
const session = (user: number) => sessions[user]!

interface CatalogItem {
  readonly id: string
  readonly valueCents: number
}
const starter = (await bench.send("GET", "/api/cases/1", session(0))).body
const catalog: ReadonlyArray<CatalogItem> = starter.items.map((item: CatalogItem) => ({ id: item.id, valueCents: Number(item.valueCents) }))
/** An item worth 2 to 10 times `valueCents` (the upgrade's limits), the cheapest such. */
const targetFor = (valueCents: number) =>
  catalog.filter((item) => item.valueCents >= 2 * valueCents && item.valueCents <= 10 * valueCents)
    .sort((a, b) => a.valueCents - b.valueCents)[0]

/** What each user holds, read before a phase that uses it up. */
const holdings = async () =>
  Promise.all(sessions.map(async (s) => {
    const items: Array<{ id: string; itemId: string; valueCents: number }> = []
    for (let page = 1; ; page++) {
      const list: ReadonlyArray<{ id: string; item: CatalogItem }> =
        (await bench.send("GET", `/api/inventory?status=AVAILABLE&page=${page}&limit=100`, s)).body.items
      for (const { id, item } of list) items.push({ id, itemId: item.id, valueCents: Number(item.valueCents) })
      if (list.length < 100) return items
    }
  }))

const phases: Array<[string, Parameters<typeof bench.closedLoop>[2], string?]> = [
  ["GET /api/auth/me", (user) => bench.send("GET", "/api/auth/me", session(user)).then((a) => a.status)],
  ["POST /api/cases/1/open", (user) => bench.send("POST", "/api/cases/1/open", session(user)).then((a) => a.status)]
]

/** Each path's service CPU per step, in the order measured. */
const serviceCpu: Array<[string, number | undefined]> = []

/** A path's closed loop of `users` users, on a database just vacuumed and analyzed, printed. */
const measure = async (name: string, users: number, step: Parameters<typeof bench.closedLoop>[2], unit?: string) => {
  await bench.vacuum()
  const loop = await bench.closedLoop(users, SECONDS, step)
  serviceCpu.push([name, loop.cpuMs])
  console.log(show(name, loop, unit))
}

// Warm-up, then the two loops that need no preparation.
console.log(`warm-up: ${WARM_UP} s of the openings' closed loop, not measured`)
await bench.closedLoop(USERS, WARM_UP, phases[1]![1])
for (const [name, step] of phases) await measure(name, USERS, step)

const toUpgrade = await holdings()
await measure("POST /api/upgrades", USERS, async (user) => {
  for (let item = toUpgrade[user]!.pop(); item !== undefined; item = toUpgrade[user]!.pop()) {
    const target = targetFor(item.valueCents)
    if (target === undefined) continue
    const answer = await bench.send("POST", "/api/upgrades", session(user), {
      fromItemId: item.itemId,
      toItemId: target.id,
      inventoryItemId: item.id
    })
    return answer.status
  }
  return undefined
})

const toSell = await holdings()
await measure("POST /api/inventory/:id/sell", USERS, async (user) => {
  const item = toSell[user]!.pop()
  return item === undefined ? undefined : (await bench.send("POST", `/api/inventory/${item.id}/sell`, session(user))).status
})

await measure("battle create + join (2 players)", USERS / 2, async (pair) => {
  const created = await bench.send("POST", "/api/battles", session(2 * pair), { caseIds: ["1"], mode: "NORMAL", maxPlayers: 2 })
  if (created.status !== 201 && created.status !== 200) return created.status
  return (await bench.send("POST", `/api/battles/${created.body.id}/join`, session(2 * pair + 1))).status
}, "step")

await measure("battle create + 3 joins (4 players)", Math.floor(USERS / 4), async (group) => {
  const created = await bench.send("POST", "/api/battles", session(4 * group), { caseIds: ["1"], mode: "NORMAL", maxPlayers: 4 })
  if (created.status !== 201 && created.status !== 200) return created.status
  for (const joiner of [1, 2, 3]) {
    const joined = await bench.send("POST", `/api/battles/${created.body.id}/join`, session(4 * group + joiner))
    if (joined.status !== 200) return joined.status
  }
  return 200
}, "step")

// The host's speed moves by half within minutes on shared machines; the first path, which no change to a game
// touches, is a yardstick of this run's speed (docs/decisions.md "Battles kept for their joins").
const [yardstick, yardstickCpu] = serviceCpu[0]!
if (yardstickCpu !== undefined) {
  console.log(`service CPU per step against ${yardstick} in this run: ${
    serviceCpu.slice(1).map(([name, cpu]) => `${name} ${cpu === undefined ? "?" : (cpu / yardstickCpu).toFixed(2)}`).join(", ")}`)
}

await bench.stop()
