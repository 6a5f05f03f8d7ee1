/** Configuration from the environment (D1): production refuses missing secrets, development keeps its own. */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Option, Redacted } from "effect"
import { mkdtempSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { loadAppConfig } from "../../src/layers/AppConfig"

const load = (env: Record<string, string>) =>
  loadAppConfig.pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
    Effect.provide(NodeContext.layer),
    Effect.either
  )

const dataDir = () => mkdtempSync(join(tmpdir(), "gp-config-"))
const TWO_FACTOR_KEY = "ab".repeat(32)

describe("configuration", () => {
  it.effect("production refuses to start with one message naming every missing secret", () =>
    Effect.gen(function*() {
      const result = yield* load({ NODE_ENV: "production", DATA_DIR: dataDir() })
      expect(Either.isLeft(result) && result.left.message).toBe(
        "NODE_ENV=production requires these variables, which are not set: WEBHOOK_SECRET, ADMIN_TOKEN, TWO_FACTOR_KEY, OIDC_ISSUER, " +
          "PAYMENT_GATEWAY_URL, PAYMENT_GATEWAY_KEY"
      )
      const partly = yield* load({ NODE_ENV: "production", DATA_DIR: dataDir(), ADMIN_TOKEN: "a-long-admin-token" })
      expect(Either.isLeft(partly) && partly.left.message).toMatch(/not set: WEBHOOK_SECRET, TWO_FACTOR_KEY, OIDC_ISSUER, PAYMENT_GATEWAY_URL, PAYMENT_GATEWAY_KEY$/)
    }))

  it.effect("production with every secret given starts and generates nothing", () =>
    Effect.gen(function*() {
      const dir = dataDir()
      const config = Either.getOrThrow(
        yield* load({
          NODE_ENV: "production",
          DATA_DIR: dir,
          WEBHOOK_SECRET: "gateway-shared-secret",
          ADMIN_TOKEN: "a-long-admin-token",
          TWO_FACTOR_KEY,
          OIDC_ISSUER: "https://id.example.com/",
          PAYMENT_GATEWAY_URL: "https://gateway.example.com/v1/",
          PAYMENT_GATEWAY_KEY: "gateway-api-key"
        })
      )
      expect(config.production).toBe(true)
      expect(config.secretsGenerated).toBe(false)
      expect(config.webhookBlockPrivateTargets).toBe(true)
      expect(Redacted.value(config.secrets.adminToken)).toBe("a-long-admin-token")
      expect(config.oidc.issuer).toEqual(Option.some("https://id.example.com"))
      expect(config.gateway.url).toEqual(Option.some("https://gateway.example.com/v1"))
      expect(() => statSync(join(dir, "dev-secrets.json"))).toThrow()
    }))

  it.effect("development generates missing secrets once and keeps them in DATA_DIR/dev-secrets.json", () =>
    Effect.gen(function*() {
      const dir = dataDir()
      const first = Either.getOrThrow(yield* load({ DATA_DIR: dir }))
      expect(first.secretsGenerated).toBe(true)
      const file = join(dir, "dev-secrets.json")
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(Object.keys(JSON.parse(readFileSync(file, "utf8"))).sort()).toEqual([
        "ADMIN_TOKEN",
        "TWO_FACTOR_KEY",
        "WEBHOOK_SECRET"
      ])
      const second = Either.getOrThrow(yield* load({ DATA_DIR: dir }))
      expect(Redacted.value(second.secrets.adminToken)).toBe(Redacted.value(first.secrets.adminToken))
      expect(Redacted.value(second.secrets.twoFactorKey)).toEqual(Redacted.value(first.secrets.twoFactorKey))
      // A variable wins over the kept value.
      const given = Either.getOrThrow(yield* load({ DATA_DIR: dir, ADMIN_TOKEN: "from-the-environment" }))
      expect(Redacted.value(given.secrets.adminToken)).toBe("from-the-environment")
    }))

  it.effect("defaults: port 3000, embedded database and in-memory stores", () =>
    Effect.gen(function*() {
      const config = Either.getOrThrow(yield* load({ DATA_DIR: dataDir() }))
      expect(config.port).toBe(3000)
      expect(config.publicUrl).toBe("http://localhost:3000")
      expect(config.databaseUrl).toEqual(Option.none())
      expect(config.redisUrl).toEqual(Option.none())
      expect(config.redisKeyPrefix).toBe("gp:")
      expect(config.trustProxy).toBe(false)
      expect(config.serviceName).toBe("GamePlatform")
      expect(config.webhookBlockPrivateTargets).toBe(false)
      expect(config.oidc).toMatchObject({ issuer: Option.none(), clientId: "game-platform", devIdpPort: 3001 })
      expect(config.rateLimits.global).toEqual({ count: 100, windowMs: 60_000 })
      expect(config.rateLimits.twoFactorVerify).toEqual({ count: 5, windowMs: 300_000 })
    }))

  it.effect("a bad value is refused with a message naming the variable", () =>
    Effect.gen(function*() {
      const port = yield* load({ DATA_DIR: dataDir(), PORT: "eighty" })
      expect(Either.isLeft(port) && port.left.message).toMatch(/PORT/)
      const limit = yield* load({ DATA_DIR: dataDir(), RATE_LIMIT_GLOBAL: "100 per minute" })
      expect(Either.isLeft(limit) && limit.left.message).toMatch(/RATE_LIMIT_GLOBAL/)
      const custom = Either.getOrThrow(yield* load({ DATA_DIR: dataDir(), RATE_LIMIT_CASE_OPEN: "50/1000" }))
      expect(custom.rateLimits.caseOpen).toEqual({ count: 50, windowMs: 1000 })
      const key = yield* load({ DATA_DIR: dataDir(), TWO_FACTOR_KEY: "short" })
      expect(Either.isLeft(key) && key.left.message).toBe("TWO_FACTOR_KEY must be 64 hexadecimal characters (32 bytes)")
    }))
})
