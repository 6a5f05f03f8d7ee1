/**
 * Configuration from the environment (docs/rules.md#configuration): production refuses missing or short
 * secrets, http URLs and the sandbox; development keeps its own secrets.
 */
import { NodeContext } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Option, Redacted } from "effect"
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { loadAppConfig, usesDevIdentityProvider, usesSandboxGateway } from "../../src/layers/AppConfig"

const load = (env: Record<string, string>) =>
  loadAppConfig.pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
    Effect.provide(NodeContext.layer),
    Effect.either
  )

const dataDirs = mkdtempSync(join(tmpdir(), "gp-config-"))
afterAll(() => rmSync(dataDirs, { recursive: true, force: true }))
const dataDir = () => mkdtempSync(join(dataDirs, "data-"))
const TWO_FACTOR_KEY = "ab".repeat(32)
const ADMIN_TOKEN = "an-admin-token-of-at-least-32-bytes"
const WEBHOOK_SECRET = "a-gateway-shared-secret-of-32-bytes"

/** Everything production needs. */
const productionEnv = (): Record<string, string> => ({
  NODE_ENV: "production",
  DATA_DIR: dataDir(),
  WEBHOOK_SECRET,
  ADMIN_TOKEN,
  TWO_FACTOR_KEY,
  OIDC_ISSUER: "https://id.example.com/",
  OIDC_CLIENT_SECRET: "issued-by-the-provider",
  PAYMENT_GATEWAY_URL: "https://gateway.example.com/v1/",
  PAYMENT_GATEWAY_KEY: "gateway-api-key"
})

describe("configuration", () => {
  it.effect("production refuses to start with one message naming every missing secret", () =>
    Effect.gen(function*() {
      const result = yield* load({ NODE_ENV: "production", DATA_DIR: dataDir() })
      expect(Either.isLeft(result) && result.left.message).toBe(
        "NODE_ENV=production requires these variables, which are not set: WEBHOOK_SECRET, ADMIN_TOKEN, TWO_FACTOR_KEY, OIDC_ISSUER, " +
          "OIDC_CLIENT_SECRET, PAYMENT_GATEWAY_URL, PAYMENT_GATEWAY_KEY"
      )
      const partly = yield* load({ NODE_ENV: "production", DATA_DIR: dataDir(), ADMIN_TOKEN: ADMIN_TOKEN })
      expect(Either.isLeft(partly) && partly.left.message).toMatch(
        /not set: WEBHOOK_SECRET, TWO_FACTOR_KEY, OIDC_ISSUER, OIDC_CLIENT_SECRET, PAYMENT_GATEWAY_URL, PAYMENT_GATEWAY_KEY$/
      )
    }))

  it.effect("production with every secret given starts and generates nothing", () =>
    Effect.gen(function*() {
      const env = productionEnv()
      const dir = env.DATA_DIR!
      const config = Either.getOrThrow(yield* load(env))
      expect(config.production).toBe(true)
      expect(config.sandbox).toBe(false)
      expect(config.secretsGenerated).toBe(false)
      expect(config.webhookBlockPrivateTargets).toBe(true)
      expect(config.gateway.requireTimestamp).toBe(true)
      expect(Redacted.value(config.secrets.adminToken)).toBe(ADMIN_TOKEN)
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
      expect(config.redis).toEqual(Option.none())
      expect(config.redisKeyPrefix).toBe("gp:")
      expect(config.trustProxy).toBe(0)
      expect(config.sandbox).toBe(true)
      expect(config.serviceName).toBe("GamePlatform")
      expect(config.webhookBlockPrivateTargets).toBe(false)
      expect(config.gateway.requireTimestamp).toBe(false)
      expect(config.oidc).toMatchObject({ issuer: Option.none(), clientId: "game-platform", devIdpPort: 3001 })
      expect(config.rateLimits.global).toEqual({ count: 100, windowMs: 60_000 })
      expect(config.rateLimits.twoFactorVerify).toEqual({ count: 5, windowMs: 300_000 })
      expect(config.rateLimits.twoFactorDisable).toEqual({ count: 5, windowMs: 300_000 })
    }))

  it.effect("WEBHOOK_REQUIRE_TIMESTAMP: on by default in production, off elsewhere; either can be set", () =>
    Effect.gen(function*() {
      expect(Either.getOrThrow(yield* load(productionEnv())).gateway.requireTimestamp).toBe(true)
      const relaxed = Either.getOrThrow(yield* load({ ...productionEnv(), WEBHOOK_REQUIRE_TIMESTAMP: "false" }))
      expect(relaxed.gateway.requireTimestamp).toBe(false)
      expect(Either.getOrThrow(yield* load({ DATA_DIR: dataDir() })).gateway.requireTimestamp).toBe(false)
      const strict = Either.getOrThrow(yield* load({ DATA_DIR: dataDir(), WEBHOOK_REQUIRE_TIMESTAMP: "true" }))
      expect(strict.gateway.requireTimestamp).toBe(true)
      const bad = yield* load({ DATA_DIR: dataDir(), WEBHOOK_REQUIRE_TIMESTAMP: "sometimes" })
      expect(Either.isLeft(bad) && bad.left.message).toMatch(/WEBHOOK_REQUIRE_TIMESTAMP/)
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

  it.effect("NODE_ENV is production in any letter case: the sandbox does not start and secrets are required", () =>
    Effect.gen(function*() {
      for (const spelling of ["Production", "PRODUCTION", " production "]) {
        const result = yield* load({ NODE_ENV: spelling, DATA_DIR: dataDir() })
        expect(Either.isLeft(result) && result.left.message, spelling).toMatch(/^NODE_ENV=production requires these variables/)
        const config = Either.getOrThrow(yield* load({ ...productionEnv(), NODE_ENV: spelling }))
        expect(config.production).toBe(true)
        expect(config.sandbox).toBe(false)
      }
      // Anything else is not production.
      expect(Either.getOrThrow(yield* load({ NODE_ENV: "staging", DATA_DIR: dataDir() })).production).toBe(false)
    }))

  it.effect("production refuses the sandbox, secrets shorter than 32 bytes and http:// URLs, naming each", () =>
    Effect.gen(function*() {
      const sandbox = yield* load({ ...productionEnv(), SANDBOX: "true" })
      expect(Either.isLeft(sandbox) && sandbox.left.message).toBe(
        "NODE_ENV=production never runs the sandbox: unset SANDBOX or set it to false"
      )
      const weak = yield* load({ ...productionEnv(), WEBHOOK_SECRET: "a", ADMIN_TOKEN: "x".repeat(31) })
      expect(Either.isLeft(weak) && weak.left.message).toBe(
        "NODE_ENV=production requires secrets of at least 32 bytes: WEBHOOK_SECRET, ADMIN_TOKEN"
      )
      // 32 bytes: 16 two-byte characters are enough, 31 ASCII ones are not.
      expect(Either.isRight(yield* load({ ...productionEnv(), ADMIN_TOKEN: "é".repeat(16) }))).toBe(true)
      const plain = yield* load({
        ...productionEnv(),
        OIDC_ISSUER: "http://id.example.com",
        PAYMENT_GATEWAY_URL: "http://gateway.example.com"
      })
      expect(Either.isLeft(plain) && plain.left.message).toBe(
        "NODE_ENV=production requires https:// URLs: OIDC_ISSUER, PAYMENT_GATEWAY_URL"
      )
      const everything = yield* load({ ...productionEnv(), SANDBOX: "true", WEBHOOK_SECRET: "a", PAYMENT_GATEWAY_URL: "http://gw" })
      expect(Either.isLeft(everything) && everything.left.message).toBe(
        "NODE_ENV=production never runs the sandbox: unset SANDBOX or set it to false; " +
          "requires secrets of at least 32 bytes: WEBHOOK_SECRET; requires https:// URLs: PAYMENT_GATEWAY_URL"
      )
    }))

  it.effect("SANDBOX=false outside production: the real gateway and identity provider must be configured", () =>
    Effect.gen(function*() {
      const off = yield* load({ DATA_DIR: dataDir(), SANDBOX: "false" })
      expect(Either.isLeft(off) && off.left.message).toBe(
        "SANDBOX=false requires these variables, which are not set: OIDC_ISSUER, PAYMENT_GATEWAY_URL"
      )
      const configured = Either.getOrThrow(yield* load({
        DATA_DIR: dataDir(),
        SANDBOX: "false",
        OIDC_ISSUER: "http://localhost:8080/realms/dev",
        PAYMENT_GATEWAY_URL: "http://localhost:9000"
      }))
      expect(configured.sandbox).toBe(false)
      expect(usesSandboxGateway(configured)).toBe(false)
      expect(usesDevIdentityProvider(configured)).toBe(false)
      // The default: sandbox on, used for whichever of the two is not configured.
      const mixed = Either.getOrThrow(yield* load({ DATA_DIR: dataDir(), OIDC_ISSUER: "http://localhost:8080/realms/dev" }))
      expect(usesSandboxGateway(mixed)).toBe(true)
      expect(usesDevIdentityProvider(mixed)).toBe(false)
    }))

  it.effect("TRUST_PROXY is a number of proxies; true is one, false is none", () =>
    Effect.gen(function*() {
      const hops = (value: string) => Effect.map(load({ DATA_DIR: dataDir(), TRUST_PROXY: value }), Either.map((c) => c.trustProxy))
      expect(yield* hops("true")).toEqual(Either.right(1))
      expect(yield* hops("TRUE")).toEqual(Either.right(1))
      expect(yield* hops("false")).toEqual(Either.right(0))
      expect(yield* hops("0")).toEqual(Either.right(0))
      expect(yield* hops("2")).toEqual(Either.right(2))
      const bad = yield* load({ DATA_DIR: dataDir(), TRUST_PROXY: "yes please" })
      expect(Either.isLeft(bad) && bad.left.message).toMatch(/TRUST_PROXY/)
    }))

  it.effect("TRUSTED_PROXIES (loopback by default) and GATEWAY_ALLOWED_IPS: CIDRs and lone addresses; anything else refused, named", () =>
    Effect.gen(function*() {
      const trusted = (env: Record<string, string>) =>
        Effect.map(load({ DATA_DIR: dataDir(), ...env }), Either.map((c) => c.trustedProxies))
      expect(yield* trusted({})).toEqual(Either.right(["127.0.0.0/8", "::1/128"]))
      expect(yield* trusted({ TRUSTED_PROXIES: " 10.0.0.0/8, 192.168.1.7 ,fd00::/8" }))
        .toEqual(Either.right(["10.0.0.0/8", "192.168.1.7", "fd00::/8"]))
      const allowed = yield* Effect.map(load({ DATA_DIR: dataDir(), GATEWAY_ALLOWED_IPS: "203.0.113.0/24, 2001:db8::5" }), Either.map((c) => c.gateway.allowedIps))
      expect(allowed).toEqual(Either.right(["203.0.113.0/24", "2001:db8::5"]))
      const badAllowed = yield* load({ DATA_DIR: dataDir(), GATEWAY_ALLOWED_IPS: "gateway.example.com" })
      expect(Either.isLeft(badAllowed) && badAllowed.left.message).toMatch(/GATEWAY_ALLOWED_IPS.*gateway\.example\.com/)
      for (const wrong of ["10.0.0.0/33", "proxy.internal", "10.0.0.0/8x", "::1/129"]) {
        const bad = yield* load({ DATA_DIR: dataDir(), TRUSTED_PROXIES: `127.0.0.1, ${wrong}` })
        expect(Either.isLeft(bad) && bad.left.message, wrong).toMatch(new RegExp(`TRUSTED_PROXIES.*${wrong.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}`))
      }
    }))
  it.effect("JURISDICTION: NONE by default, BR in any letter case; anything else refused, named", () =>
    Effect.gen(function*() {
      const jurisdiction = (value?: string) =>
        Effect.map(
          load({ DATA_DIR: dataDir(), ...(value === undefined ? {} : { JURISDICTION: value }) }),
          Either.map((c) => c.jurisdiction)
        )
      expect(yield* jurisdiction()).toEqual(Either.right("NONE"))
      expect(yield* jurisdiction("NONE")).toEqual(Either.right("NONE"))
      expect(yield* jurisdiction(" br ")).toEqual(Either.right("BR"))
      for (const wrong of ["PT", "brazil", ""]) {
        const bad = yield* jurisdiction(wrong)
        expect(Either.isLeft(bad) && bad.left.message, wrong).toMatch(/JURISDICTION.*Expected NONE or BR/)
      }
    }))

  it.effect("AUTO_PAYOUT_MAX_CENTS: 100000 by default, a positive integer; anything else refused, named", () =>
    Effect.gen(function*() {
      const maximum = (value?: string) =>
        Effect.map(
          load({ DATA_DIR: dataDir(), ...(value === undefined ? {} : { AUTO_PAYOUT_MAX_CENTS: value }) }),
          Either.map((c) => c.autoPayoutMaxCents)
        )
      expect(yield* maximum()).toEqual(Either.right(100_000))
      expect(yield* maximum("5000")).toEqual(Either.right(5_000))
      for (const wrong of ["0", "-1", "12.5", "lots"]) {
        const bad = yield* maximum(wrong)
        expect(Either.isLeft(bad) && bad.left.message, wrong).toMatch(/AUTO_PAYOUT_MAX_CENTS/)
      }
    }))

  it.effect("IDENTITY_KEY: generated and kept outside production only under BR; 64 hex characters when given", () =>
    Effect.gen(function*() {
      const none = Either.getOrThrow(yield* load({ DATA_DIR: dataDir() }))
      expect(none.secrets.identityKey).toEqual(Option.none())
      const dir = dataDir()
      const first = Either.getOrThrow(yield* load({ DATA_DIR: dir, JURISDICTION: "BR" }))
      expect(Option.isSome(first.secrets.identityKey)).toBe(true)
      expect(Object.keys(JSON.parse(readFileSync(join(dir, "dev-secrets.json"), "utf8")))).toContain("IDENTITY_KEY")
      const second = Either.getOrThrow(yield* load({ DATA_DIR: dir, JURISDICTION: "BR" }))
      expect(Option.map(second.secrets.identityKey, Redacted.value)).toEqual(Option.map(first.secrets.identityKey, Redacted.value))
      const bad = yield* load({ DATA_DIR: dataDir(), JURISDICTION: "BR", IDENTITY_KEY: "not-hex" })
      expect(Either.isLeft(bad) && bad.left.message).toBe("IDENTITY_KEY must be 64 hexadecimal characters (32 bytes)")
    }))

  it.effect("production under BR also requires IDENTITY_KEY, KYC_PROVIDER_URL (https), KYC_PROVIDER_KEY, EXCLUSION_REGISTRY_URL (https) and EXCLUSION_REGISTRY_KEY; under NONE none of them", () =>
    Effect.gen(function*() {
      expect(Either.isRight(yield* load(productionEnv()))).toBe(true)
      const missing = yield* load({ ...productionEnv(), JURISDICTION: "BR" })
      expect(Either.isLeft(missing) && missing.left.message).toBe(
        "NODE_ENV=production requires these variables, which are not set: IDENTITY_KEY, KYC_PROVIDER_URL, KYC_PROVIDER_KEY, " +
          "EXCLUSION_REGISTRY_URL, EXCLUSION_REGISTRY_KEY"
      )
      const insecure = yield* load({
        ...productionEnv(),
        JURISDICTION: "BR",
        IDENTITY_KEY: "cd".repeat(32),
        KYC_PROVIDER_URL: "http://kyc.example.com",
        KYC_PROVIDER_KEY: "kyc-api-key",
        EXCLUSION_REGISTRY_URL: "http://registry.example.com",
        EXCLUSION_REGISTRY_KEY: "registry-api-key"
      })
      expect(Either.isLeft(insecure) && insecure.left.message).toBe(
        "NODE_ENV=production requires https:// URLs: KYC_PROVIDER_URL, EXCLUSION_REGISTRY_URL"
      )
      const config = Either.getOrThrow(yield* load({
        ...productionEnv(),
        JURISDICTION: "BR",
        IDENTITY_KEY: "cd".repeat(32),
        KYC_PROVIDER_URL: "https://kyc.example.com/v1/",
        KYC_PROVIDER_KEY: "kyc-api-key",
        EXCLUSION_REGISTRY_URL: "https://registry.example.com/v2/",
        EXCLUSION_REGISTRY_KEY: "registry-api-key"
      }))
      expect(config.jurisdiction).toBe("BR")
      expect(config.kyc.url).toEqual(Option.some("https://kyc.example.com/v1"))
      expect(config.exclusionRegistry.url).toEqual(Option.some("https://registry.example.com/v2"))
      expect(Option.map(config.exclusionRegistry.key, Redacted.value)).toEqual(Option.some("registry-api-key"))
      expect(Option.map(config.secrets.identityKey, Redacted.value)).toEqual(Option.some(Buffer.from("cd".repeat(32), "hex")))
    }))

  it.effect("SANDBOX=false under BR also requires KYC_PROVIDER_URL and EXCLUSION_REGISTRY_URL", () =>
    Effect.gen(function*() {
      const real = { DATA_DIR: dataDir(), SANDBOX: "false", OIDC_ISSUER: "https://id.example.com", PAYMENT_GATEWAY_URL: "https://gw.example.com" }
      expect(Either.isRight(yield* load(real))).toBe(true)
      const br = yield* load({ ...real, JURISDICTION: "BR" })
      expect(Either.isLeft(br) && br.left.message).toBe(
        "SANDBOX=false requires these variables, which are not set: KYC_PROVIDER_URL, EXCLUSION_REGISTRY_URL"
      )
      expect(Either.isRight(
        yield* load({
          ...real,
          JURISDICTION: "BR",
          KYC_PROVIDER_URL: "https://kyc.example.com",
          EXCLUSION_REGISTRY_URL: "https://registry.example.com"
        })
      )).toBe(true)
    }))
})
