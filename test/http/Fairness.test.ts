/**
 * The fairness commitment through the public API (docs/fairness.md): every roll uses a server seed
 * whose hash was shown before it, with the client seed the user had then; refused operations consume
 * nothing; parallel rolls of one user each get their own commitment; no seed is ever used twice; the
 * comparisons that decide outcomes hold at their boundaries; and the shipped verifier (scripts/verify.mjs)
 * agrees with the service. Rolls are recomputed here with node:crypto, independently of the service.
 */
import { SqlClient } from "@effect/sql"
import { afterAll, expect, layer } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, TestClock } from "effect"
import fc from "fast-check"
import { execFile, spawnSync } from "node:child_process"
import { createHash, createHmac } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Randomness } from "../../src/layers/Randomness"
import { UserLock } from "../../src/layers/stores/UserLock"
import { Stores } from "../../src/layers/stores/Stores"
import { ProvablyFair } from "../../src/services/games/ProvablyFair"
import type { UserId } from "../../src/schema/platform/Ids"
import { Catalog } from "../../src/services/games/Catalog"
import { fundedPlayer, grantItems, makeCase } from "../support/GameFixtures"
import { makeTestClient, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const appOptions = {
  config: {
    adminIdpIds: ["root"],
    rateLimits: {
      ...testConfig.rateLimits,
      auth: { count: 100_000, windowMs: 60_000 },
      global: { count: 100_000, windowMs: 60_000 },
      caseOpen: { count: 100_000, windowMs: 60_000 }
    }
  }
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")
const hmac = (seed: string, message: string) => BigInt(`0x${createHmac("sha256", seed).update(message).digest("hex")}`)
const caseRoll = (seed: string, clientSeed: string, nonce: number) => Number(hmac(seed, `${clientSeed}:${nonce}`) % 10_000_000n) + 1
const upgradeRoll = (seed: string, clientSeed: string, nonce: number) => Number(hmac(seed, `${clientSeed}:${nonce}`) % 100_000n)
const flipUnits = (seed: string, clientSeed: string, nonce: number) => Number(hmac(seed, `${clientSeed}:${nonce}:flip`) % 10_000_000n)

interface FairnessState {
  readonly clientSeed: string
  readonly nonce: number
  readonly nextServerSeedHash: string
}

const stateOf = (client: TestClient, auth: Record<string, string>) =>
  Effect.map(client.get("/api/provably-fair/client-seed", auth), (r) => r.body as FairnessState)

const setClientSeed = (client: TestClient, auth: Record<string, string>, clientSeed: string) =>
  Effect.map(
    client.request("/api/provably-fair/client-seed", {
      method: "PUT",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ clientSeed })
    }),
    (r) => r.body as FairnessState
  )

/** The committed seed itself, read behind the API's back: only a test may know it before the roll. */
const peekCommitted = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ nextServerSeed: string; clientSeed: string; nonce: string }>`
        SELECT next_server_seed, client_seed, nonce FROM fairness_seeds WHERE user_id = ${userId}`,
      (rows) => ({ seed: rows[0]!.nextServerSeed, clientSeed: rows[0]!.clientSeed, nonce: Number(rows[0]!.nonce) })
    ))

let seq = 0
const upgradableItems = (values: ReadonlyArray<number>) =>
  Effect.forEach(values, (value) =>
    Effect.map(
      Effect.flatMap(Catalog, (catalog) =>
        catalog.createItem({ name: `Fair skin ${++seq}`, rarity: "RESTRICTED", valueCents: BigInt(value), imageUrl: "/f.png", isUpgradable: true })),
      (item) => String(item.id)
    )).pipe(Effect.provide(Catalog.Default))

/** The shipped verifier (scripts/verify.mjs, docs/fairness.md#a-verifier-you-can-run), run with plain node. */
const VERIFY_SCRIPT = fileURLToPath(new URL("../../scripts/verify.mjs", import.meta.url))
const answersDir = mkdtempSync(join(tmpdir(), "gp-verify-"))
afterAll(() => rmSync(answersDir, { recursive: true, force: true }))

/**
 * Runs the verifier on `answer` with the hash shown before (and the client seed and nonce the user
 * expects): the first word of its verdict (its last line), "valid" or "invalid", which its exit code
 * (0 or 1) must agree with.
 */
const runVerifier = (answer: unknown, shownHash: string, ...expected: ReadonlyArray<string | number>) => {
  const input = join(answersDir, `answer-${++seq}.json`)
  writeFileSync(input, JSON.stringify(answer))
  const [clientSeed, nonce] = expected
  const args = [VERIFY_SCRIPT, input, "--hash", shownHash]
  if (clientSeed !== undefined) args.push("--client-seed", String(clientSeed), "--nonce", String(nonce))
  const run = spawnSync(process.execPath, args, { encoding: "utf8" })
  const verdict = run.stdout.trim().split("\n").at(-1)?.split(":")[0]
  if (run.status !== (verdict === "valid" ? 0 : verdict === "invalid" ? 1 : -1)) {
    throw new Error(`verify exited ${run.status} with ${run.stdout} ${run.stderr}`)
  }
  return verdict
}

layer(TestDatabase)("committed seeds", (it) => {
  it.scoped("an opening uses the seed committed before it, with the client seed set after seeing its hash", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 100n })
      const player = yield* fundedPlayer(client, "committed-opener", 1_000)

      const shown = yield* stateOf(client, player.auth)
      expect(shown).toEqual({ clientSeed: expect.stringMatching(/^[0-9a-f]{32}$/), nonce: 0, nextServerSeedHash: expect.stringMatching(/^[0-9a-f]{64}$/) })
      // Changing the client seed after seeing the hash keeps the commitment.
      expect(yield* setClientSeed(client, player.auth, "chosen-after-the-hash")).toEqual({
        clientSeed: "chosen-after-the-hash",
        nonce: 0,
        nextServerSeedHash: shown.nextServerSeedHash
      })

      const opened = (yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).body
      expect(opened.serverSeedHash).toBe(shown.nextServerSeedHash)
      const verified = (yield* client.get(`/api/cases/openings/${opened.openingId}/verify`, player.auth)).body
      expect(sha256(verified.serverSeed)).toBe(shown.nextServerSeedHash)
      expect(verified).toMatchObject({ clientSeed: "chosen-after-the-hash", nonce: 1, roll: opened.roll, isValid: true })
      expect(caseRoll(verified.serverSeed, "chosen-after-the-hash", 1)).toBe(opened.roll)

      expect(opened.nextServerSeedHash).not.toBe(shown.nextServerSeedHash)
      expect(yield* stateOf(client, player.auth)).toEqual({
        clientSeed: "chosen-after-the-hash",
        nonce: 1,
        nextServerSeedHash: opened.nextServerSeedHash
      })
      // The verifier agrees, and refuses any other hash, inputs or a missing field.
      expect(runVerifier(verified, shown.nextServerSeedHash, "chosen-after-the-hash", 1)).toBe("valid")
      expect(runVerifier(verified, opened.nextServerSeedHash)).toBe("invalid")
      expect(runVerifier({ ...verified, roll: verified.roll % 10_000_000 + 1 }, shown.nextServerSeedHash)).toBe("invalid")
      expect(runVerifier(verified, shown.nextServerSeedHash, "someone-else", 1)).toBe("invalid")
      expect(runVerifier(verified, shown.nextServerSeedHash, "chosen-after-the-hash", 7)).toBe("invalid")
      const { flipChance: _, ...withoutFlipChance } = verified
      expect(runVerifier(withoutFlipChance, shown.nextServerSeedHash)).toBe("invalid")
      expect(runVerifier({ ...verified, rangeStart: verified.roll + 1 }, shown.nextServerSeedHash)).toBe("invalid")
    }))

  it.scoped("npm run verify: an opening by id from a listening service, as JSON, on stdin; tampered is exit 1", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 100n })
      const player = yield* fundedPlayer(client, "script-verifier", 1_000)
      const shown = yield* stateOf(client, player.auth)
      const opened = (yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).body
      const verified = (yield* client.get(`/api/cases/openings/${opened.openingId}/verify`, player.auth)).body
      const base = yield* client.listen()
      // Asynchronously: the service answering the script runs in this process.
      const verify = (args: ReadonlyArray<string>, stdin?: string) =>
        Effect.promise(() =>
          new Promise<{ code: number | null; out: string }>((resolve) => {
            const env = { ...process.env, SESSION: undefined, PUBLIC_URL: undefined }
            const child = execFile(process.execPath, [VERIFY_SCRIPT, ...args], { env }, (error, stdout, stderr) =>
              resolve({ code: error === null ? 0 : (error.code as number), out: `${stdout}${stderr}` }))
            child.stdin!.end(stdin ?? "")
          })
        )

      const byId = yield* verify([opened.openingId, "--url", base, "--session", player.sessionId, "--hash", shown.nextServerSeedHash])
      expect(byId.code, byId.out).toBe(0)
      expect(byId.out).toContain("ok   sha256(serverSeed) = the hash shown before the roll (--hash)")
      expect(byId.out.trim().split("\n").at(-1)).toBe(`valid: opening ${opened.openingId}, roll ${opened.roll} follows from the revealed server seed`)
      const asJson = yield* verify([JSON.stringify(verified)])
      expect(asJson.code, asJson.out).toBe(0)
      expect(asJson.out).toContain("note: without --hash")
      const onStdin = yield* verify(["-", "--client-seed", shown.clientSeed, "--nonce", "1"], JSON.stringify(verified))
      expect(onStdin.code, onStdin.out).toBe(0)

      const tampered = yield* verify([JSON.stringify({ ...verified, roll: verified.roll % 10_000_000 + 1 })])
      expect(tampered.code).toBe(1)
      expect(tampered.out).toMatch(/^FAIL the roll: /m)
      expect(tampered.out.trim().split("\n").at(-1)).toMatch(/^invalid: 1 of \d+ checks failed for opening /)
      const otherSeed = yield* verify([JSON.stringify({ ...verified, serverSeed: "0".repeat(64) })])
      expect(otherSeed.code).toBe(1)
      expect(otherSeed.out).toMatch(/^FAIL sha256\(serverSeed\) = the answer's serverSeedHash$/m)

      // Someone else's opening is 404 to them; no session is 401; neither is a verdict: exit 2.
      const stranger = yield* fundedPlayer(client, "script-stranger", 0)
      const notYours = yield* verify([opened.openingId, "--url", base, "--session", stranger.sessionId])
      expect(notYours.code).toBe(2)
      expect(notYours.out).toContain(`${base}/api/cases/openings/${opened.openingId}/verify answered 404`)
      expect((yield* verify([opened.openingId, "--url", base])).code).toBe(2)
      expect((yield* verify(["no-such-file.json"])).code).toBe(2)
    }))

  it.scoped("an upgrade uses the seed committed before it and commits the next", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const [from, to] = yield* upgradableItems([1_000, 2_000])
      const player = yield* fundedPlayer(client, "committed-upgrader", 0)
      yield* grantItems(player.id, [from!])
      const shown = yield* stateOf(client, player.auth)
      yield* setClientSeed(client, player.auth, "upgrade-seed")

      const upgraded = (yield* client.post("/api/upgrades", { fromItemId: from, toItemId: to }, player.auth)).body
      expect(upgraded.serverSeedHash).toBe(shown.nextServerSeedHash)
      const verified = (yield* client.get(`/api/upgrades/${upgraded.upgradeId}/verify`, player.auth)).body
      expect(sha256(verified.serverSeed)).toBe(shown.nextServerSeedHash)
      expect(verified).toMatchObject({ clientSeed: "upgrade-seed", nonce: shown.nonce + 1, roll: upgraded.roll, isValid: true })
      expect(upgradeRoll(verified.serverSeed, "upgrade-seed", shown.nonce + 1)).toBe(upgraded.roll)
      expect(upgraded.success).toBe(upgraded.roll < 45_000)
      expect(upgraded.nextServerSeedHash).not.toBe(shown.nextServerSeedHash)
      expect((yield* stateOf(client, player.auth)).nextServerSeedHash).toBe(upgraded.nextServerSeedHash)
      expect(runVerifier(verified, shown.nextServerSeedHash, "upgrade-seed", shown.nonce + 1)).toBe("valid")
      expect(runVerifier({ ...verified, success: !verified.success }, shown.nextServerSeedHash)).toBe("invalid")
      expect(runVerifier({ ...verified, threshold: verified.threshold - 1 }, shown.nextServerSeedHash)).toBe("invalid")
    }))

  it.scoped("a FLIP rolls the opening's committed seed again with the following nonce", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 100n, flipChance: 0.5 })
      const player = yield* fundedPlayer(client, "committed-flipper", 5_000)
      let flip: { opened: any; shown: FairnessState } | undefined
      for (let i = 0; i < 30 && flip === undefined; i++) {
        const shown = yield* stateOf(client, player.auth)
        const opened = (yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).body
        expect(opened.serverSeedHash).toBe(shown.nextServerSeedHash)
        if (opened.isFlip) flip = { opened, shown }
      }
      expect(flip).toBeDefined()
      const { opened, shown } = flip!
      const verified = (yield* client.get(`/api/cases/openings/${opened.openingId}/verify`, player.auth)).body
      expect(verified).toMatchObject({
        nonce: shown.nonce + 1,
        flipChance: 0.5,
        isFlip: true,
        flipServerSeed: verified.serverSeed,
        flipServerSeedHash: shown.nextServerSeedHash,
        flipClientSeed: shown.clientSeed,
        flipNonce: shown.nonce + 2,
        flipRoll: opened.flipRoll,
        isValid: true
      })
      expect(flipUnits(verified.serverSeed, shown.clientSeed, shown.nonce + 1)).toBeLessThan(5_000_000)
      expect(caseRoll(verified.serverSeed, shown.clientSeed, shown.nonce + 2)).toBe(opened.flipRoll)
      // The counter moved twice; one new commitment.
      expect(yield* stateOf(client, player.auth)).toEqual({
        clientSeed: shown.clientSeed,
        nonce: shown.nonce + 2,
        nextServerSeedHash: opened.nextServerSeedHash
      })
      expect(runVerifier(verified, shown.nextServerSeedHash, shown.clientSeed, shown.nonce + 1)).toBe("valid")
      expect(runVerifier({ ...verified, flipServerSeed: "0".repeat(64) }, shown.nextServerSeedHash)).toBe("invalid")
      expect(runVerifier({ ...verified, flipNonce: verified.flipNonce + 1 }, shown.nextServerSeedHash)).toBe("invalid")
    }))

  it.scoped("a battle shows its seed's hash before anyone joins; rounds roll it with each player's seed and nonces", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 100n })
      const [creator, joiner] = [yield* fundedPlayer(client, "battle-a", 1_000), yield* fundedPlayer(client, "battle-b", 1_000)]
      const created = (yield* client.post("/api/battles", { caseIds: [String(kase.id), String(kase.id), String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, creator.auth)).body
      expect(created).toMatchObject({ status: "WAITING", serverSeedHash: expect.stringMatching(/^[0-9a-f]{64}$/), serverSeed: null })
      const seen = (yield* client.get(`/api/battles/${created.id}`, joiner.auth)).body
      expect(seen).toMatchObject({ serverSeedHash: created.serverSeedHash, serverSeed: null })

      // The joiner fixes a client seed knowing the battle's hash.
      yield* setClientSeed(client, joiner.auth, "joiner-fixed-this")
      const before = { [creator.id]: yield* stateOf(client, creator.auth), [joiner.id]: yield* stateOf(client, joiner.auth) }
      const finished = (yield* client.post(`/api/battles/${created.id}/join`, undefined, joiner.auth)).body
      expect(finished.status).toBe("FINISHED")
      expect(sha256(finished.serverSeed)).toBe(created.serverSeedHash)
      expect(finished.rounds).toHaveLength(6)
      for (const round of finished.rounds) {
        const player = before[round.userId]!
        expect(round).toMatchObject({
          serverSeedHash: created.serverSeedHash,
          serverSeed: finished.serverSeed,
          clientSeed: player.clientSeed,
          nonce: player.nonce + round.roundNumber
        })
        expect(caseRoll(finished.serverSeed, player.clientSeed, round.nonce)).toBe(round.roll)
        const verified = (yield* client.get(`/api/provably-fair/verify/${round.id}?type=battle-roll`, joiner.auth)).body
        expect(verified.isValid).toBe(true)
        expect(runVerifier(verified, created.serverSeedHash, player.clientSeed, round.nonce)).toBe("valid")
      }
      expect(finished.rounds.find((r: { userId: string }) => r.userId === joiner.id).clientSeed).toBe("joiner-fixed-this")
      // Battles use the players' nonces, not their own committed seeds.
      for (const [id, auth] of [[creator.id, creator.auth], [joiner.id, joiner.auth]] as const) {
        expect(yield* stateOf(client, auth)).toEqual({ ...before[id]!, nonce: before[id]!.nonce + 3 })
      }
    }))

  it.scoped("a battle rolls its cases as they were at creation; a case's flip chance is public and exact", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase, items } = yield* makeCase({ priceCents: 100n, flipChance: 0.1 })
      const [creator, joiner] = [yield* fundedPlayer(client, "snapshot-a", 1_000), yield* fundedPlayer(client, "snapshot-b", 1_000)]
      const admin = yield* fundedPlayer(client, "root", 0)
      const created = (yield* client.post("/api/battles", { caseIds: Array(5).fill(String(kase.id)), mode: "NORMAL", maxPlayers: 2 }, creator.auth)).body
      // The administrator makes the case all Jackpot after the battle was paid for.
      const edited = yield* client.request(`/api/admin/cases/${kase.id}`, {
        method: "PUT",
        headers: { ...admin.auth, "content-type": "application/json" },
        body: JSON.stringify({ items: [{ itemId: String(items.jackpot!.id), dropChance: 1 }] })
      })
      expect(edited.status).toBe(200)
      const finished = (yield* client.post(`/api/battles/${created.id}/join`, undefined, joiner.auth)).body
      expect(finished.status).toBe("FINISHED")
      // 10 rolls of the original ranges (90% Common, 9% Rare, 1% Jackpot): never all Jackpot, and each
      // item is the one its roll selects there.
      const original = [[1, 100_000, items.jackpot!.id], [100_001, 1_000_000, items.rare!.id], [1_000_001, 10_000_000, items.common!.id]] as const
      for (const round of finished.rounds) {
        const [, , expected] = original.find(([start, end]) => start <= round.roll && round.roll <= end)!
        expect(round.item.id).toBe(String(expected))
      }
      expect(finished.rounds.some((r: { item: { id: string } }) => r.item.id !== String(items.jackpot!.id))).toBe(true)

      expect((yield* client.get(`/api/cases/${kase.id}`, creator.auth)).body.flipChance).toBe(0.1)
      const tooPrecise = yield* client.request(`/api/admin/cases/${kase.id}`, {
        method: "PUT",
        headers: { ...admin.auth, "content-type": "application/json" },
        body: JSON.stringify({ flipChance: 0.12345678 })
      })
      expect(tooPrecise.status).toBe(400)
      expect(tooPrecise.body.errors).toEqual([{ field: "flipChance", message: "must have at most 7 decimal places" }])
    }))

  it.scoped("a raffle's draw is recomputed by the verifier from what GET /raffles/:id shows", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { items } = yield* makeCase()
      const admin = yield* fundedPlayer(client, "root", 0)
      const buyers = [yield* fundedPlayer(client, "raffle-a", 500), yield* fundedPlayer(client, "raffle-b", 500)]
      const endsAt = new Date(Date.UTC(2100, 0)).toISOString()
      const raffle = (yield* client.post("/api/admin/raffles", { itemId: String(items.jackpot!.id), ticketPriceCents: 10, maxTickets: 5, endsAt }, admin.auth)).body
      yield* setClientSeed(client, buyers[1]!.auth, "second-buyer")
      yield* client.post(`/api/raffles/${raffle.id}/tickets`, { count: 2 }, buyers[0]!.auth)
      yield* client.post(`/api/raffles/${raffle.id}/tickets`, { count: 3 }, buyers[1]!.auth)
      const drawn = (yield* client.get(`/api/raffles/${raffle.id}`, buyers[0]!.auth)).body
      expect(drawn.status).toBe("DRAWN")
      expect(runVerifier(drawn, raffle.serverSeedHash)).toBe("valid")
      expect(runVerifier({ ...drawn, winningTicket: drawn.winningTicket % 5 + 1 }, raffle.serverSeedHash)).toBe("invalid")
      expect(runVerifier({ ...drawn, ticketSeeds: [...drawn.ticketSeeds].reverse() }, raffle.serverSeedHash)).toBe("invalid")
      expect(runVerifier({ ...drawn, ticketSeeds: null }, raffle.serverSeedHash)).toBe("invalid")
      expect(runVerifier({ ...drawn, ticketsSold: 0 }, raffle.serverSeedHash)).toBe("invalid")
    }))

  it.scoped("a refused opening or upgrade consumes neither the committed seed nor a nonce", () =>
    Effect.gen(function*() {
      // The app's stores are shared with the test, so the test can hold the user's lock.
      const stores = yield* Layer.build(Stores.memory)
      const client = yield* makeTestClient({ ...appOptions, stores: Layer.succeedContext(stores) })
      const { kase } = yield* makeCase({ priceCents: 800n })
      const inactive = yield* makeCase({ isActive: false })
      const [from, to] = yield* upgradableItems([1_000, 2_000])
      const player = yield* fundedPlayer(client, "refused", 700)
      const shown = yield* stateOf(client, player.auth)
      const unchanged = () => Effect.map(stateOf(client, player.auth), (state) => expect(state).toEqual(shown))

      expect((yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).body.message).toBe("Insufficient balance")
      yield* unchanged()
      for (const id of ["999999", String(inactive.kase.id)]) {
        expect((yield* client.post(`/api/cases/${id}/open`, undefined, player.auth)).status).toBe(404)
      }
      yield* unchanged()
      expect((yield* client.post("/api/cases/abc/open", undefined, player.auth)).status).toBe(400)
      expect((yield* client.post("/api/upgrades", { fromItemId: from, toItemId: to }, player.auth)).body.message)
        .toBe("Item not available for upgrade")
      expect((yield* client.post("/api/upgrades", { fromItemId: from }, player.auth)).status).toBe(400)
      yield* unchanged()

      // Another operation of the user holds the lock for longer than a request waits: 409, nothing used.
      yield* grantItems(player.id, [from!])
      const lock = Context.get(stores, UserLock)
      yield* lock.withLock(
        `user:${player.id}`,
        Effect.gen(function*() {
          const waiting = yield* Effect.fork(client.post("/api/upgrades", { fromItemId: from, toItemId: to }, player.auth))
          yield* TestClock.adjust("6 seconds")
          const refused = yield* Fiber.join(waiting)
          expect(refused.body).toEqual({ statusCode: 409, message: "Another operation is in progress" })
        })
      )
      yield* unchanged()
    }))

  it.scoped("boundaries: an upgrade roll equal to its threshold fails and one below succeeds; FLIP at exactly its units does not", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const player = yield* fundedPlayer(client, "boundaries", 10_000)

      /** The next roll's committed inputs, after changing the client seed until `fits` holds. */
      const nextInputs = (roll: (seed: string, clientSeed: string, nonce: number) => number, fits: (value: number) => boolean) =>
        Effect.gen(function*() {
          for (let attempt = 0; attempt < 200; attempt++) {
            const next = yield* peekCommitted(player.id)
            const value = roll(next.seed, next.clientSeed, next.nonce + 1)
            if (fits(value)) return value
            yield* setClientSeed(client, player.auth, `boundary-${attempt}`)
          }
          throw new Error("no client seed gave a usable roll")
        })

      // Upgrade: from = 10r and to = 900000 give probability 0.9 x 10r / 900000 = r / 100000, threshold r.
      const upgradeAt = (threshold: (roll: number) => number) =>
        Effect.gen(function*() {
          const roll = yield* nextInputs(upgradeRoll, (r) => r >= 9_000 && r < 89_000)
          const [from, to] = yield* upgradableItems([10 * threshold(roll), 900_000])
          yield* grantItems(player.id, [from!])
          const answer = (yield* client.post("/api/upgrades", { fromItemId: from, toItemId: to }, player.auth)).body
          const verified = (yield* client.get(`/api/upgrades/${answer.upgradeId}/verify`, player.auth)).body
          expect({ roll: answer.roll, threshold: verified.threshold }).toEqual({ roll, threshold: threshold(roll) })
          return answer.success as boolean
        })
      expect(yield* upgradeAt((roll) => roll)).toBe(false)
      expect(yield* upgradeAt((roll) => roll + 1)).toBe(true)

      // FLIP: a flip chance of exactly t / 10000000 is no FLIP; (t + 1) / 10000000 is.
      const openWithFlipAt = (units: (t: number) => number) =>
        Effect.gen(function*() {
          const t = yield* nextInputs(flipUnits, (value) => value > 0 && value < 4_000_000)
          const { kase } = yield* makeCase({ priceCents: 100n, flipChance: units(t) / 10_000_000 })
          const opened = (yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).body
          expect((yield* client.get(`/api/cases/openings/${opened.openingId}/verify`, player.auth)).body.isValid).toBe(true)
          return opened.isFlip as boolean
        })
      expect(yield* openWithFlipAt((t) => t)).toBe(false)
      expect(yield* openWithFlipAt((t) => t + 1)).toBe(true)
    }))
})

layer(TestDatabase)("committed seeds across instances", (it) => {
  it.scoped("two instances rolling for one user alternately each use the seed committed last, wherever it was made", () =>
    Effect.gen(function*() {
      // Two applications over one database, as two instances behind a load balancer (each remembers
      // states and cases of its own); their seed streams differ, as separate processes' would.
      const a = yield* makeTestClient({ ...appOptions, randomness: Randomness.seeded("instance-a") })
      const b = yield* makeTestClient({ ...appOptions, randomness: Randomness.seeded("instance-b") })
      const { kase } = yield* makeCase({ priceCents: 10n })
      const player = yield* fundedPlayer(a, "two-instances", 1_000)
      const onB = yield* fundedPlayer(b, "two-instances", 0)
      let expected = (yield* stateOf(a, player.auth)).nextServerSeedHash
      for (const [client, auth] of [[a, player.auth], [b, onB.auth], [a, player.auth], [a, player.auth], [b, onB.auth]] as const) {
        const opened = (yield* client.post(`/api/cases/${kase.id}/open`, undefined, auth)).body
        expect(opened.serverSeedHash).toBe(expected)
        expected = opened.nextServerSeedHash
      }
      // A client seed set through one instance is used by the other's next roll.
      yield* setClientSeed(b, onB.auth, "set-on-b")
      const opened = (yield* a.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).body
      expect(opened.serverSeedHash).toBe(expected)
      expect((yield* a.get(`/api/cases/openings/${opened.openingId}/verify`, player.auth)).body).toMatchObject({ clientSeed: "set-on-b", isValid: true })
      expect((yield* stateOf(b, onB.auth)).nonce).toBe(6)
    }))

  it.scoped("a case edited after an instance read it is opened as edited (price, items), through the API or not", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { items, kase } = yield* makeCase({ priceCents: 100n })
      const admin = yield* fundedPlayer(client, "root", 0)
      const player = yield* fundedPlayer(client, "edited-case", 10_000)
      const balance = Effect.map(client.get("/api/auth/me", player.auth), (r) => r.body.balanceCents as number)
      expect((yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).status).toBe(200)
      expect(yield* balance).toBe(9_900)
      // Through the API: a new price and a single item.
      const edited = yield* client.request(`/api/admin/cases/${kase.id}`, {
        method: "PUT",
        headers: { ...admin.auth, "content-type": "application/json" },
        body: JSON.stringify({ priceCents: 300, promotional: true, items: [{ itemId: String(items.rare!.id), dropChance: 1 }] })
      })
      expect(edited.status).toBe(200)
      const afterApi = (yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).body
      expect(afterApi.item.id).toBe(String(items.rare!.id))
      expect(yield* balance).toBe(9_600)
      // Behind the service's back (another instance, an operator with psql): still never a stale price.
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE cases SET price_cents = 700 WHERE id = ${kase.id}`
      expect((yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).status).toBe(200)
      expect(yield* balance).toBe(8_900)
      yield* sql`UPDATE cases SET is_active = false WHERE id = ${kase.id}`
      expect((yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)).body).toEqual({ statusCode: 404, message: "Case not found" })
      expect(yield* balance).toBe(8_900)
    }))
})

// Real clock: the parallel requests wait for the user's lock in real time.
layer(TestDatabase, { excludeTestServices: true })("committed seeds under concurrency", (it) => {
  it.scoped("parallel openings by one user: each uses its own commitment, shown once before it, nonces contiguous", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const { kase } = yield* makeCase({ priceCents: 10n })
      const player = yield* fundedPlayer(client, "parallel-committed", 1_000)
      const shown = yield* stateOf(client, player.auth)
      const answers = yield* Effect.all(
        Array.from({ length: 12 }, () => client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)),
        { concurrency: "unbounded" }
      )
      expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200))
      const verified = yield* Effect.forEach(answers, (a) =>
        Effect.map(client.get(`/api/cases/openings/${a.body.openingId}/verify`, player.auth), (v) => ({ answer: a.body, verified: v.body })))
      const inOrder = [...verified].sort((a, b) => a.verified.nonce - b.verified.nonce)
      expect(inOrder.map((o) => o.verified.nonce)).toEqual(Array.from({ length: 12 }, (_, i) => shown.nonce + i + 1))
      // A chain: each opening used the hash shown before it (the previous answer's next hash).
      let expected = shown.nextServerSeedHash
      for (const { answer, verified: v } of inOrder) {
        expect(answer.serverSeedHash).toBe(expected)
        expect(sha256(v.serverSeed)).toBe(expected)
        expect(v.isValid).toBe(true)
        expected = answer.nextServerSeedHash
      }
      expect((yield* stateOf(client, player.auth)).nextServerSeedHash).toBe(expected)
      expect(new Set(inOrder.map((o) => o.verified.serverSeed)).size).toBe(12)
    }))

  it.scoped("parallel transactions taking rolls of one user (no lock) queue on the database and never share a seed", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient(appOptions)
      const player = yield* fundedPlayer(client, "parallel-rolls", 0)
      const userId = BigInt(player.id) as UserId
      const sql = yield* SqlClient.SqlClient
      const fairness = yield* Effect.provide(ProvablyFair, ProvablyFair.Default.pipe(Layer.provide(Randomness.seeded("parallel-rolls"))))
      const shown = yield* stateOf(client, player.auth)
      const rolls = yield* Effect.all(
        Array.from({ length: 16 }, () => sql.withTransaction(fairness.takeCommittedRoll(userId))),
        { concurrency: "unbounded" }
      )
      const inOrder = [...rolls].sort((a, b) => a.nonce - b.nonce)
      expect(inOrder.map((r) => r.nonce)).toEqual(Array.from({ length: 16 }, (_, i) => shown.nonce + i + 1))
      let expected = shown.nextServerSeedHash
      for (const roll of inOrder) {
        expect(roll.serverSeedHash).toBe(expected)
        expect(sha256(roll.serverSeed)).toBe(expected)
        expected = roll.nextServerSeedHash
      }
      expect((yield* stateOf(client, player.auth)).nextServerSeedHash).toBe(expected)
    }))
})

// Its own database: the property reads every seed there is.
layer(TestDatabase)("committed seeds, property", (it) => {
  it.scoped("no server seed is ever used twice, across users and games, and every used hash was shown first", () =>
    Effect.gen(function*() {
      const { kase } = yield* makeCase({ priceCents: 10n, flipChance: 0.3 })
      const [from, to] = yield* upgradableItems([1_000, 2_000])
      const command = fc.oneof(
        fc.record({ kind: fc.constant("open" as const), user: fc.nat(2) }),
        fc.record({ kind: fc.constant("upgrade" as const), user: fc.nat(2) }),
        fc.record({ kind: fc.constant("seed" as const), user: fc.nat(2), seed: fc.stringMatching(/^[A-Za-z0-9_-]{1,16}$/) }),
        fc.record({ kind: fc.constant("battle" as const), user: fc.nat(2), other: fc.nat(2) }),
        fc.record({ kind: fc.constant("raffle" as const), user: fc.nat(2) })
      )
      const runs = fc.sample(fc.array(command, { minLength: 5, maxLength: 14 }), { numRuns: 8, seed: 17 })
      const shownHashes = new Set<string>()
      const usedHashes: Array<string> = []

      for (const [run, commands] of runs.entries()) {
        // A seed stream per run, as separate processes would have.
        const client = yield* makeTestClient({ ...appOptions, randomness: Randomness.seeded(`property-${run}`) })
        const admin = yield* fundedPlayer(client, "root", 0)
        const users = yield* Effect.forEach([0, 1, 2], (i) => fundedPlayer(client, `prop-${run}-${i}`, 10_000))
        const show = (auth: Record<string, string>) => Effect.map(stateOf(client, auth), (s) => shownHashes.add(s.nextServerSeedHash))
        for (const user of users) yield* show(user.auth)
        for (const c of commands) {
          const user = users[c.user]!
          if (c.kind === "open") {
            const body = (yield* client.post(`/api/cases/${kase.id}/open`, undefined, user.auth)).body
            usedHashes.push(body.serverSeedHash)
            shownHashes.add(body.nextServerSeedHash)
          } else if (c.kind === "upgrade") {
            yield* grantItems(user.id, [from!])
            const body = (yield* client.post("/api/upgrades", { fromItemId: from, toItemId: to }, user.auth)).body
            usedHashes.push(body.serverSeedHash)
            shownHashes.add(body.nextServerSeedHash)
          } else if (c.kind === "seed") {
            yield* setClientSeed(client, user.auth, c.seed)
          } else if (c.kind === "battle" && c.other !== c.user) {
            const battle = (yield* client.post("/api/battles", { caseIds: [String(kase.id)], mode: "NORMAL", maxPlayers: 2 }, user.auth)).body
            yield* client.post(`/api/battles/${battle.id}/join`, undefined, users[c.other]!.auth)
          } else if (c.kind === "raffle") {
            const endsAt = new Date(Date.UTC(2100, 0)).toISOString()
            const raffle = (yield* client.post("/api/admin/raffles", { itemId: from, ticketPriceCents: 10, maxTickets: 2, endsAt }, admin.auth)).body
            yield* client.post(`/api/raffles/${raffle.id}/tickets`, { count: 2 }, user.auth)
          }
        }
      }

      // Every opening and upgrade used a hash that had been shown, and no shown hash was used twice.
      expect(usedHashes.every((hash) => shownHashes.has(hash))).toBe(true)
      expect(new Set(usedHashes).size).toBe(usedHashes.length)
      // Every seed in the database, used or committed, is distinct; a FLIP reuses its own opening's seed
      // and every round of a battle the battle's seed.
      const sql = yield* SqlClient.SqlClient
      const seeds = yield* sql<{ seed: string; source: string }>`
        SELECT server_seed AS seed, 'opening' AS source FROM case_openings
        UNION ALL SELECT server_seed, 'upgrade' FROM upgrades
        UNION ALL SELECT server_seed, 'battle' FROM battles
        UNION ALL SELECT server_seed, 'raffle' FROM raffles
        UNION ALL SELECT next_server_seed, 'committed' FROM fairness_seeds`
      expect(seeds.length).toBeGreaterThan(50)
      const counts = new Map<string, number>()
      for (const { seed } of seeds) counts.set(seed, (counts.get(seed) ?? 0) + 1)
      expect([...counts.entries()].filter(([, n]) => n > 1)).toEqual([])
      const strays = yield* sql`
        SELECT o.id FROM case_openings o WHERE o.is_flip AND o.flip_server_seed <> o.server_seed
        UNION ALL SELECT r.id FROM battle_rolls r JOIN battles b ON b.id = r.battle_id WHERE r.server_seed <> b.server_seed`
      expect(strays).toEqual([])
    }))
})
