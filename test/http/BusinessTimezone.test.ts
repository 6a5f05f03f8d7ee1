/**
 * BUSINESS_TIMEZONE (docs/rules.md#business-timezone): the dashboard's days are calendar days of that zone (UTC
 * by default). Three deposits are confirmed around midnight, read by two apps over the same database, one
 * under the default and one under America/Sao_Paulo (UTC-3): each counts them in its own days, in the figures
 * of today and in the chart, names its zone, and caches settled days under it, so neither reads the other's.
 * A zone that does not exist refuses to start.
 */
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Either, TestClock } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { loadAppConfig } from "../../src/layers/AppConfig"
import { fundedPlayer } from "../support/GameFixtures"
import { confirmedDeposit } from "../support/PaymentFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
/** 2025-03-10, 00:00 UTC: 2025-03-09, 21:00 in São Paulo. */
const D = Date.UTC(2025, 2, 10)

const dataDirs = mkdtempSync(join(tmpdir(), "gp-tz-"))
afterAll(() => rmSync(dataDirs, { recursive: true, force: true }))

const load = (env: Record<string, string>) =>
  loadAppConfig.pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ DATA_DIR: mkdtempSync(join(dataDirs, "data-")), ...env })))),
    Effect.provide(NodeContext.layer),
    Effect.either
  )

describe("BUSINESS_TIMEZONE at start-up", () => {
  it.effect("UTC by default; an IANA name in any letter case is taken in its canonical spelling; anything else refuses to start, named", () =>
    Effect.gen(function*() {
      expect(Either.getOrThrow(yield* load({})).businessTimeZone).toBe("UTC")
      expect(Either.getOrThrow(yield* load({ BUSINESS_TIMEZONE: "America/Sao_Paulo" })).businessTimeZone).toBe("America/Sao_Paulo")
      expect(Either.getOrThrow(yield* load({ BUSINESS_TIMEZONE: "america/sao_paulo" })).businessTimeZone).toBe("America/Sao_Paulo")
      for (const wrong of ["Mars/Olympus_Mons", "Brasilia", "-03:00", "+03:00", "", "UTC; DROP TABLE users"]) {
        const refused = yield* load({ BUSINESS_TIMEZONE: wrong })
        expect(Either.isLeft(refused), wrong).toBe(true)
        expect(Either.isLeft(refused) && refused.left.message, wrong).toMatch(
          /^Invalid configuration: .*BUSINESS_TIMEZONE.*Expected an IANA time zone name such as UTC or America\/Sao_Paulo/
        )
      }
    }))
})

layer(TestDatabase)("dashboard days in BUSINESS_TIMEZONE", (it) => {
  it.scoped("deposits around midnight count in each zone's own days: today's figures, the chart, and the cache of settled days", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(D - HOUR)
      const config = { adminIdpIds: ["root"] }
      const utc = yield* makeTestClient({ config })
      const saoPaulo = yield* makeTestClient({ config: { ...config, businessTimeZone: "America/Sao_Paulo" } })
      const payer = yield* fundedPlayer(utc, "payer", 0)
      const admins = new Map<TestClient, Record<string, string>>([
        [utc, (yield* signIn(utc, "root")).auth],
        [saoPaulo, (yield* signIn(saoPaulo, "root")).auth]
      ])
      const stats = (client: TestClient) =>
        Effect.map(client.get("/api/admin/dashboard", admins.get(client)!), (r) => {
          expect(r.status, JSON.stringify(r.body)).toBe(200)
          return r.body
        })
      const chart = (client: TestClient) =>
        Effect.map(client.get("/api/admin/dashboard/revenue-chart?period=7d", admins.get(client)!), (r) => {
          expect(r.status, JSON.stringify(r.body)).toBe(200)
          return r.body
        })
      /** The chart's deposits of its last two days (yesterday, today). */
      const lastTwo = (body: { data: ReadonlyArray<{ date: string; deposits: number }> }) =>
        body.data.slice(-2).map(({ date, deposits }) => ({ date, deposits }))
      const depositAt = (at: number, amountCents: number) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(at)
          yield* confirmedDeposit(utc, payer.auth, amountCents)
        })

      // 23:30 UTC on 03-09 (20:30 in São Paulo), 02:30 UTC on 03-10 (23:30 on 03-09 in São Paulo).
      yield* depositAt(D - 30 * MINUTE, 4_000)
      yield* depositAt(D + 2 * HOUR + 30 * MINUTE, 1_000)

      // 02:45 UTC: the 02:30 deposit is UTC's today, and São Paulo's 03-09, still its today.
      yield* TestClock.setTime(D + 2 * HOUR + 45 * MINUTE)
      expect((yield* stats(utc)).financial.depositsToday).toBe(1_000)
      expect((yield* stats(saoPaulo)).financial.depositsToday).toBe(4_000 + 1_000)

      // 03:30 UTC, 00:30 on 03-10 in São Paulo: a deposit of the new day in both zones.
      yield* depositAt(D + 3 * HOUR + 30 * MINUTE, 2_000)
      yield* TestClock.setTime(D + 4 * HOUR)
      const utcStats = yield* stats(utc)
      expect(utcStats.timezone).toBe("UTC")
      expect(utcStats.financial.depositsToday).toBe(1_000 + 2_000)
      const spStats = yield* stats(saoPaulo)
      expect(spStats.timezone).toBe("America/Sao_Paulo")
      // The 02:30 deposit is São Paulo's yesterday: today holds only the 03:30 one.
      expect(spStats.financial.depositsToday).toBe(2_000)

      const utcChart = yield* chart(utc)
      expect(utcChart.timezone).toBe("UTC")
      expect(lastTwo(utcChart)).toEqual([{ date: "2025-03-09", deposits: 4_000 }, { date: "2025-03-10", deposits: 3_000 }])
      const spChart = yield* chart(saoPaulo)
      expect(spChart.timezone).toBe("America/Sao_Paulo")
      expect(lastTwo(spChart)).toEqual([{ date: "2025-03-09", deposits: 5_000 }, { date: "2025-03-10", deposits: 2_000 }])

      // 05:00 UTC the next day (02:00 in São Paulo): 03-10 ended over an hour ago in both zones and is cached,
      // once per zone; each reads its own, whichever was cached first.
      yield* TestClock.setTime(D + DAY + 5 * HOUR)
      const cachedFirst = lastTwo(yield* chart(utc))
      expect(cachedFirst).toEqual([{ date: "2025-03-10", deposits: 3_000 }, { date: "2025-03-11", deposits: 0 }])
      expect(lastTwo(yield* chart(saoPaulo))).toEqual([{ date: "2025-03-10", deposits: 2_000 }, { date: "2025-03-11", deposits: 0 }])
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT time_zone, to_char(day, 'YYYY-MM-DD') AS day, deposits_cents::int AS deposits
                        FROM dashboard_days WHERE day >= '2025-03-09' ORDER BY time_zone, day`).toEqual([
        { timeZone: "America/Sao_Paulo", day: "2025-03-09", deposits: 5_000 },
        { timeZone: "America/Sao_Paulo", day: "2025-03-10", deposits: 2_000 },
        { timeZone: "UTC", day: "2025-03-09", deposits: 4_000 },
        { timeZone: "UTC", day: "2025-03-10", deposits: 3_000 }
      ])
      // Read again, from the cache: the same answers.
      expect(lastTwo(yield* chart(utc))).toEqual(cachedFirst)
      expect(lastTwo(yield* chart(saoPaulo))).toEqual([{ date: "2025-03-10", deposits: 2_000 }, { date: "2025-03-11", deposits: 0 }])
    }))
})
