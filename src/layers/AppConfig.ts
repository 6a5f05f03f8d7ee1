/**
 * Configuration from environment variables (docs/rules.md#configuration). Every variable is listed in README.md.
 *
 * Secrets: in production every one must be set, at least 32 bytes long, and start-up fails with one
 * message naming every problem. Elsewhere a missing secret is generated once and kept in
 * DATA_DIR/dev-secrets.json, so restarts keep sessions' 2FA secrets decryptable and gateway
 * signatures stable.
 *
 * The embedded sandbox gateway and development identity provider run only with SANDBOX=true (the
 * default outside production), never in production, and only when no real one is configured.
 */
import { FileSystem, Path } from "@effect/platform"
import { Config, ConfigError, Context, Data, Effect, Either, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { BlockList, isIP } from "node:net"
import { canonicalTimeZone } from "../services/platform/ZonedCalendar"
import { type RedisTarget, redisTargetConfig } from "./stores/RedisTarget"

export class StartupError extends Data.TaggedError("StartupError")<{ readonly message: string }> {}

/**
 * A port the service could not listen on, as the one line a refusal to start is: the port, and the variable that
 * sets it (`PORT`, `DEV_IDP_PORT`), e.g. `port 3000 is already in use: set PORT to a free port`.
 */
export const cannotListen = (port: number, variable: string, cause: unknown, whose = ""): StartupError => {
  const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
  const subject = `port ${port}${whose === "" ? "" : ` (${whose})`}`
  return new StartupError({
    message: code === "EADDRINUSE"
      ? `${subject} is already in use: set ${variable} to a free port`
      : code === "EACCES"
      ? `${subject} needs privileges this process lacks: set ${variable} to a port above 1023`
      : `cannot listen on ${subject}: ${cause instanceof Error ? cause.message : String(cause)} (set ${variable} to another port)`
  })
}

const SECRET_NAMES = ["WEBHOOK_SECRET", "ADMIN_TOKEN", "TWO_FACTOR_KEY"] as const
/**
 * Secrets kept in development like the others but required in production only under some settings:
 * IDENTITY_KEY only with JURISDICTION=BR (docs/rules.md#identity-key).
 */
const CONDITIONAL_SECRET_NAMES = ["IDENTITY_KEY"] as const
const ALL_SECRET_NAMES = [...SECRET_NAMES, ...CONDITIONAL_SECRET_NAMES] as const
type SecretName = (typeof ALL_SECRET_NAMES)[number]

/** `JURISDICTION` (docs/rules.md#jurisdiction): NONE (the default) or BR (docs/rules.md#jurisdiction-br). */
export type Jurisdiction = "NONE" | "BR"

interface Secrets {
  /** Shared with the payment gateway: signs its callbacks (docs/rules.md#gateway-callback). */
  readonly webhookSecret: Redacted.Redacted
  /** Bearer credential for webhook registration (docs/rules.md#webhook-registration). */
  readonly adminToken: Redacted.Redacted
  /** 32-byte AES-256-GCM key for two-factor secrets, as 64 hex characters (docs/rules.md#two-factor-secret-storage). */
  readonly twoFactorKey: Redacted.Redacted<Buffer>
  /**
   * IDENTITY_KEY, 32 bytes as 64 hex characters: the master key of stored identities (the CPF's AES-256-GCM
   * key and its HMAC key are derived from it with HKDF, docs/rules.md#identity-key). None only in production
   * without JURISDICTION=BR, where no identity is taken.
   */
  readonly identityKey: Option.Option<Redacted.Redacted<Buffer>>
}

/** A fixed-window limit: `count` requests per `windowMs` (docs/rules.md#rate-limit-table). */
export interface RateLimit {
  readonly count: number
  readonly windowMs: number
}

export interface RateLimits {
  readonly global: RateLimit
  readonly auth: RateLimit
  readonly caseOpen: RateLimit
  readonly withdrawal: RateLimit
  readonly twoFactorVerify: RateLimit
  readonly twoFactorDisable: RateLimit
  /** Identity verification: each attempt costs a provider check and could probe the exclusion registry. */
  readonly identityVerify: RateLimit
}

/**
 * Sign-in (docs/rules.md#sign-in): an external OpenID provider, or the embedded development one when `issuer`
 * is absent.
 */
interface OidcConfig {
  readonly issuer: Option.Option<string>
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted
  /** Port of the embedded development provider (loopback only). */
  readonly devIdpPort: number
}

export interface AppConfigShape {
  readonly production: boolean
  /** `JURISDICTION`: the rules of which country apply beyond SPEC (docs/rules.md#jurisdiction). */
  readonly jurisdiction: Jurisdiction
  /**
   * `AUTO_PAYOUT_MAX_CENTS`: under JURISDICTION=BR a withdrawal of at most this many cents is paid out right after
   * its request, with no administrator (docs/rules.md#automatic-payout).
   */
  readonly autoPayoutMaxCents: number
  /**
   * `BUSINESS_TIMEZONE`: the IANA zone whose calendar days are the dashboard's days ("today", "yesterday", the
   * chart's days; docs/rules.md#business-timezone), as Intl spells it. Default `UTC`.
   */
  readonly businessTimeZone: string
  readonly port: number
  readonly publicUrl: string
  readonly dataDir: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  /**
   * `MIGRATE_ON_START` (default true): the start applies pending migrations; false, it refuses to start while any is
   * pending, leaving them to `npm run cli -- migrate` (docs/operations.md#upgrades).
   */
  readonly migrateOnStart: boolean
  /**
   * The Redis of the stores: `REDIS_URL`, `REDIS_SENTINELS` or `REDIS_CLUSTER_NODES` (one at most; src/layers/stores/RedisTarget.ts).
   * None: the in-memory stores.
   */
  readonly redis: Option.Option<RedisTarget>
  /** Prefix of every Redis key and channel, so several deployments (or test runs) can share one Redis. */
  readonly redisKeyPrefix: string
  /**
   * Proxies in front of the service (docs/rules.md#client-address): the client address is the X-Forwarded-For
   * entry this many places from the right; 0: the socket's address, X-Forwarded-For ignored.
   */
  readonly trustProxy: number
  /**
   * `TRUSTED_PROXIES`: CIDRs of the proxies whose connections may speak for a client in X-Forwarded-For
   * (docs/rules.md#client-address); from any other peer the header is ignored. Default: loopback only.
   */
  readonly trustedProxies: ReadonlyArray<string>
  /** The embedded sandbox gateway and development identity provider may run (never in production). */
  readonly sandbox: boolean
  readonly serviceName: string
  /**
   * Refuse outbound webhook targets on loopback or private addresses (against SSRF,
   * docs/rules.md#webhook-private-targets).
   */
  readonly webhookBlockPrivateTargets: boolean
  readonly oidc: OidcConfig
  /** Where a completed sign-in lands (docs/rules.md#sign-in). */
  readonly loginRedirectUrl: string
  /** idpIds promoted to ADMIN at sign-in (docs/rules.md#admin-roles). */
  readonly adminIdpIds: ReadonlyArray<string>
  readonly rateLimits: RateLimits
  /** The payment gateway (docs/rules.md#deposits): the embedded sandbox when `url` is absent. */
  readonly gateway: {
    readonly url: Option.Option<string>
    readonly key: Option.Option<Redacted.Redacted>
    /** Callbacks to /webhooks/payment only from these addresses; empty: any (docs/rules.md#gateway-callback). */
    readonly allowedIps: ReadonlyArray<string>
    /**
     * `WEBHOOK_REQUIRE_TIMESTAMP`: callbacks without `x-webhook-timestamp` are refused (default in production;
     * docs/rules.md#gateway-callback-timestamp).
     */
    readonly requireTimestamp: boolean
    readonly depositTtlMinutes: number
    /**
     * The sandbox confirms a CRYPTO charge this long after it is created (docs/rules.md#sandbox-gateway);
     * CREDIT_CARD at once.
     */
    readonly sandboxCryptoDelaySeconds: number
  }
  /**
   * The identity (KYC) provider (docs/rules.md#kyc-provider): the embedded sandbox when
   * `url` is absent and SANDBOX is on.
   */
  readonly kyc: {
    readonly url: Option.Option<string>
    readonly key: Option.Option<Redacted.Redacted>
  }
  /**
   * The centralized self-exclusion registry (docs/rules.md#exclusion-registry, D23): the embedded sandbox when `url`
   * is absent and SANDBOX is on.
   */
  readonly exclusionRegistry: {
    readonly url: Option.Option<string>
    readonly key: Option.Option<Redacted.Redacted>
  }
  /** True when the secrets were generated here rather than given (printed at start-up). */
  readonly secretsGenerated: boolean
  readonly secrets: Secrets
}

export class AppConfig extends Context.Tag("app/AppConfig")<AppConfig, AppConfigShape>() {}

/** The embedded sandbox gateway serves payments: SANDBOX on and no PAYMENT_GATEWAY_URL (docs/rules.md#sandbox-mode). */
export const usesSandboxGateway = (config: AppConfigShape): boolean => config.sandbox && Option.isNone(config.gateway.url)

/**
 * The embedded development identity provider serves sign-in: SANDBOX on and no OIDC_ISSUER
 * (docs/rules.md#sandbox-mode).
 */
/** The embedded sandbox KYC provider checks identities: SANDBOX on and no KYC_PROVIDER_URL (docs/rules.md#kyc-provider). */
export const usesSandboxKyc = (config: AppConfigShape): boolean => config.sandbox && Option.isNone(config.kyc.url)

/**
 * The embedded sandbox self-exclusion registry answers: SANDBOX on and no EXCLUSION_REGISTRY_URL
 * (docs/rules.md#exclusion-registry).
 */
export const usesSandboxExclusionRegistry = (config: AppConfigShape): boolean =>
  config.sandbox && Option.isNone(config.exclusionRegistry.url)

export const usesDevIdentityProvider = (config: AppConfigShape): boolean =>
  config.sandbox && Option.isNone(config.oidc.issuer)

const generators: Record<SecretName, () => string> = {
  WEBHOOK_SECRET: () => randomBytes(32).toString("hex"),
  ADMIN_TOKEN: () => randomBytes(24).toString("hex"),
  TWO_FACTOR_KEY: () => randomBytes(32).toString("hex"),
  IDENTITY_KEY: () => randomBytes(32).toString("hex")
}

const readGivenSecrets = Effect.gen(function*() {
  const given: Partial<Record<SecretName, string>> = {}
  for (const name of ALL_SECRET_NAMES) {
    const value = yield* Config.option(Config.nonEmptyString(name))
    if (Option.isSome(value)) given[name] = value.value
  }
  return given
})

/** Reads DATA_DIR/dev-secrets.json, adds what is missing and writes it back (development only). */
const developmentSecrets = Effect.fnUntraced(function*(dataDir: string, given: Partial<Record<SecretName, string>>, kept: ReadonlyArray<SecretName>) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const file = path.join(dataDir, "dev-secrets.json")
  const stored: Partial<Record<SecretName, string>> = (yield* fs.exists(file))
    ? JSON.parse(yield* fs.readFileString(file))
    : {}
  const missing = kept.filter((name) => given[name] === undefined && stored[name] === undefined)
  if (missing.length > 0) {
    for (const name of missing) stored[name] = generators[name]()
    yield* fs.makeDirectory(dataDir, { recursive: true })
    yield* fs.writeFileString(file, JSON.stringify(stored, null, 2) + "\n", { mode: 0o600 })
  }
  return { values: { ...stored, ...given } as Record<SecretName, string>, generated: SECRET_NAMES.some((n) => given[n] === undefined) }
}, (effect, dataDir) => effect.pipe(Effect.mapError((cause) => new StartupError({ message: `Cannot keep development secrets in ${dataDir}: ${cause}` }))))

const HEX_KEY = /^[0-9a-fA-F]{64}$/

const toSecrets = (values: Record<SecretName, string | undefined>): Effect.Effect<Secrets, StartupError> => {
  const bad = (["TWO_FACTOR_KEY", "IDENTITY_KEY"] as const).filter((name) =>
    (name === "TWO_FACTOR_KEY" || values[name] !== undefined) && !HEX_KEY.test(values[name] ?? "")
  )
  return bad.length === 0
    ? Effect.succeed({
      webhookSecret: Redacted.make(values.WEBHOOK_SECRET!),
      adminToken: Redacted.make(values.ADMIN_TOKEN!),
      twoFactorKey: Redacted.make(Buffer.from(values.TWO_FACTOR_KEY!, "hex")),
      identityKey: Option.map(Option.fromNullable(values.IDENTITY_KEY), (hex) => Redacted.make(Buffer.from(hex, "hex")))
    })
    : Effect.fail(new StartupError({ message: `${bad.join(" and ")} must be 64 hexadecimal characters (32 bytes)` }))
}

/** `JURISDICTION`: NONE or BR in any letter case; anything else is refused, named. */
const jurisdictionConfig = Config.string("JURISDICTION").pipe(
  Config.mapOrFail((text) => {
    const value = text.trim().toUpperCase()
    return value === "NONE" || value === "BR"
      ? Either.right<Jurisdiction>(value)
      : Either.left(ConfigError.InvalidData(["JURISDICTION"], `Expected NONE or BR, not ${JSON.stringify(text)}`))
  }),
  Config.withDefault<Jurisdiction>("NONE")
)

/** `BUSINESS_TIMEZONE`: an IANA zone name (`America/Sao_Paulo`), in its canonical spelling; anything else is refused, named. */
const businessTimeZoneConfig = Config.string("BUSINESS_TIMEZONE").pipe(
  Config.mapOrFail((text) => {
    const zone = canonicalTimeZone(text)
    return zone === undefined
      ? Either.left(ConfigError.InvalidData(
        ["BUSINESS_TIMEZONE"],
        `Expected an IANA time zone name such as UTC or America/Sao_Paulo, not ${JSON.stringify(text)}`
      ))
      : Either.right(zone)
  }),
  Config.withDefault("UTC")
)

/** `COUNT/WINDOW_MS`, e.g. `100/60000` (docs/rules.md#rate-limit-table). */
const rateLimit = (name: string, fallback: RateLimit) =>
  Config.string(name).pipe(
    Config.mapOrFail((text) => {
      const match = /^(\d+)\/(\d+)$/.exec(text.trim())
      const count = Number(match?.[1])
      const windowMs = Number(match?.[2])
      return match !== null && count > 0 && windowMs > 0
        ? Either.right({ count, windowMs })
        : Either.left(ConfigError.InvalidData([name], "Expected COUNT/WINDOW_MS, e.g. 100/60000"))
    }),
    Config.withDefault(fallback)
  )

/** `NODE_ENV` says production, in any letter case (`Production` is production, docs/rules.md#production-settings). */
export const isProduction: Config.Config<boolean> = Config.string("NODE_ENV").pipe(
  Config.withDefault(""),
  Config.map((value) => value.trim().toLowerCase() === "production")
)

/** `TRUST_PROXY`: a number of proxies, or `true` (one) / `false` (none). */
const proxyHops = Config.string("TRUST_PROXY").pipe(
  Config.mapOrFail((text) => {
    const value = text.trim().toLowerCase()
    if (value === "true") return Either.right(1)
    if (value === "false" || value === "") return Either.right(0)
    return /^\d{1,2}$/.test(value)
      ? Either.right(Number(value))
      : Either.left(ConfigError.InvalidData(["TRUST_PROXY"], "Expected a number of proxies (0 to 99), true or false"))
  }),
  Config.withDefault(0)
)

/** Adds "10.0.0.0/8", "::1/128" or a lone address to `list`; false (nothing added) when it is not one. */
export const addCidr = (list: BlockList, cidr: string): boolean => {
  const [address = "", prefix] = cidr.trim().split("/")
  const family = isIP(address)
  if (family === 0) return false
  const bits = prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix)
  if (!/^\d{1,3}$/.test(prefix ?? "0") || bits > (family === 4 ? 32 : 128)) return false
  list.addSubnet(address, bits, family === 4 ? "ipv4" : "ipv6")
  return true
}

/** Comma-separated CIDRs (or lone addresses), each checked: `TRUSTED_PROXIES`, `GATEWAY_ALLOWED_IPS`. */
const cidrList = (name: string, fallback: ReadonlyArray<string>) =>
  Config.string(name).pipe(
    Config.mapOrFail((text) => {
      const cidrs = text.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")
      const bad = cidrs.filter((cidr) => !addCidr(new BlockList(), cidr))
      return bad.length === 0
        ? Either.right<ReadonlyArray<string>>(cidrs)
        : Either.left(ConfigError.InvalidData([name], `Expected addresses or CIDRs such as 10.0.0.0/8, not ${bad.join(", ")}`))
    }),
    Config.withDefault(fallback)
  )

/** `TRUSTED_PROXIES`: loopback by default. */
const trustedProxyList = cidrList("TRUSTED_PROXIES", ["127.0.0.0/8", "::1/128"])

/** Shortest secret production accepts (docs/rules.md#production-settings): 32 bytes, as UTF-8. */
const MIN_SECRET_BYTES = 32

/** Everything production refuses, one phrase each; empty when it may start. */
const productionProblems = (input: {
  readonly given: Partial<Record<SecretName, string>>
  readonly oidc: OidcConfig
  readonly gateway: AppConfigShape["gateway"]
  readonly kyc: AppConfigShape["kyc"]
  readonly exclusionRegistry: AppConfigShape["exclusionRegistry"]
  readonly sandbox: boolean
  readonly oidcSecretGiven: boolean
  readonly jurisdiction: Jurisdiction
}): Array<string> => {
  const { gateway, given, oidc } = input
  const required = input.jurisdiction === "BR" ? ALL_SECRET_NAMES : SECRET_NAMES
  const missing = [
    ...required.filter((name) => given[name] === undefined),
    ...(Option.isNone(oidc.issuer) ? ["OIDC_ISSUER"] : []),
    ...(input.oidcSecretGiven ? [] : ["OIDC_CLIENT_SECRET"]),
    ...(Option.isNone(gateway.url) ? ["PAYMENT_GATEWAY_URL"] : []),
    ...(Option.isNone(gateway.key) ? ["PAYMENT_GATEWAY_KEY"] : []),
    ...(input.jurisdiction === "BR" && Option.isNone(input.kyc.url) ? ["KYC_PROVIDER_URL"] : []),
    ...(input.jurisdiction === "BR" && Option.isNone(input.kyc.key) ? ["KYC_PROVIDER_KEY"] : []),
    ...(input.jurisdiction === "BR" && Option.isNone(input.exclusionRegistry.url) ? ["EXCLUSION_REGISTRY_URL"] : []),
    ...(input.jurisdiction === "BR" && Option.isNone(input.exclusionRegistry.key) ? ["EXCLUSION_REGISTRY_KEY"] : [])
  ]
  const short = ALL_SECRET_NAMES.filter((name) =>
    given[name] !== undefined && Buffer.byteLength(given[name]!, "utf8") < MIN_SECRET_BYTES
  )
  const insecure = [
    ...(Option.exists(oidc.issuer, (url) => !url.startsWith("https://")) ? ["OIDC_ISSUER"] : []),
    ...(Option.exists(gateway.url, (url) => !url.startsWith("https://")) ? ["PAYMENT_GATEWAY_URL"] : []),
    ...(Option.exists(input.kyc.url, (url) => !url.startsWith("https://")) ? ["KYC_PROVIDER_URL"] : []),
    ...(Option.exists(input.exclusionRegistry.url, (url) => !url.startsWith("https://")) ? ["EXCLUSION_REGISTRY_URL"] : [])
  ]
  return [
    ...(input.sandbox ? ["never runs the sandbox: unset SANDBOX or set it to false"] : []),
    ...(missing.length > 0 ? [`requires these variables, which are not set: ${missing.join(", ")}`] : []),
    ...(short.length > 0 ? [`requires secrets of at least ${MIN_SECRET_BYTES} bytes: ${short.join(", ")}`] : []),
    ...(insecure.length > 0 ? [`requires https:// URLs: ${insecure.join(", ")}`] : [])
  ]
}

export const loadAppConfig: Effect.Effect<
  AppConfigShape,
  StartupError,
  FileSystem.FileSystem | Path.Path
> = Effect.gen(function*() {
  const production = yield* isProduction
  const jurisdiction = yield* jurisdictionConfig
  const autoPayoutMaxCents = yield* Config.integer("AUTO_PAYOUT_MAX_CENTS").pipe(
    Config.validate({ message: "Expected a positive number of cents", validation: (n) => n > 0 }),
    Config.withDefault(100_000)
  )
  const businessTimeZone = yield* businessTimeZoneConfig
  const port = yield* Config.port("PORT").pipe(Config.withDefault(3000))
  const publicUrl = yield* Config.string("PUBLIC_URL").pipe(Config.withDefault(`http://localhost:${port}`))
  const dataDir = yield* Config.string("DATA_DIR").pipe(Config.withDefault("./.data"))
  const databaseUrl = yield* Config.option(Config.redacted("DATABASE_URL"))
  const migrateOnStart = yield* Config.boolean("MIGRATE_ON_START").pipe(Config.withDefault(true))
  const redis = yield* redisTargetConfig
  const redisKeyPrefix = yield* Config.string("REDIS_KEY_PREFIX").pipe(Config.withDefault("gp:"))
  const trustProxy = yield* proxyHops
  const trustedProxies = yield* trustedProxyList
  const sandbox = yield* Config.boolean("SANDBOX").pipe(Config.withDefault(!production))
  const serviceName = yield* Config.string("SERVICE_NAME").pipe(Config.withDefault("GamePlatform"))
  const webhookBlockPrivateTargets = yield* Config.boolean("WEBHOOK_BLOCK_PRIVATE_TARGETS").pipe(
    Config.withDefault(production)
  )

  const oidcIssuer = yield* Config.option(Config.url("OIDC_ISSUER"))
  const oidcSecret = yield* Config.option(Config.redacted("OIDC_CLIENT_SECRET"))
  const oidc: OidcConfig = {
    issuer: Option.map(oidcIssuer, (url) => url.href.replace(/\/+$/, "")),
    clientId: yield* Config.string("OIDC_CLIENT_ID").pipe(Config.withDefault("game-platform")),
    clientSecret: Option.getOrElse(oidcSecret, () => Redacted.make("game-platform-development-secret")),
    devIdpPort: yield* Config.port("DEV_IDP_PORT").pipe(Config.withDefault(port + 1))
  }
  const loginRedirectUrl = yield* Config.string("LOGIN_REDIRECT_URL").pipe(Config.withDefault("/"))
  const adminIdpIds = (yield* Config.string("ADMIN_IDP_IDS").pipe(Config.withDefault("")))
    .split(",").map((id) => id.trim()).filter((id) => id.length > 0)
  const rateLimits: RateLimits = {
    global: yield* rateLimit("RATE_LIMIT_GLOBAL", { count: 100, windowMs: 60_000 }),
    auth: yield* rateLimit("RATE_LIMIT_AUTH", { count: 10, windowMs: 60_000 }),
    caseOpen: yield* rateLimit("RATE_LIMIT_CASE_OPEN", { count: 5, windowMs: 60_000 }),
    withdrawal: yield* rateLimit("RATE_LIMIT_WITHDRAWAL", { count: 3, windowMs: 60_000 }),
    twoFactorVerify: yield* rateLimit("RATE_LIMIT_2FA_VERIFY", { count: 5, windowMs: 300_000 }),
    twoFactorDisable: yield* rateLimit("RATE_LIMIT_2FA_DISABLE", { count: 5, windowMs: 300_000 }),
    identityVerify: yield* rateLimit("RATE_LIMIT_IDENTITY", { count: 5, windowMs: 3_600_000 })
  }

  const gateway = {
    url: Option.map(yield* Config.option(Config.url("PAYMENT_GATEWAY_URL")), (url) => url.href.replace(/\/+$/, "")),
    key: yield* Config.option(Config.redacted("PAYMENT_GATEWAY_KEY")),
    allowedIps: yield* cidrList("GATEWAY_ALLOWED_IPS", []),
    requireTimestamp: yield* Config.boolean("WEBHOOK_REQUIRE_TIMESTAMP").pipe(Config.withDefault(production)),
    depositTtlMinutes: yield* Config.integer("DEPOSIT_TTL_MINUTES").pipe(
      Config.validate({ message: "Expected a positive number of minutes", validation: (n) => n > 0 }),
      Config.withDefault(30)
    ),
    sandboxCryptoDelaySeconds: yield* Config.integer("SANDBOX_CRYPTO_DELAY_SECONDS").pipe(
      Config.validate({ message: "Expected a number of seconds, 0 or more", validation: (n) => n >= 0 }),
      Config.withDefault(600)
    )
  }

  const kyc = {
    url: Option.map(yield* Config.option(Config.url("KYC_PROVIDER_URL")), (url) => url.href.replace(/\/+$/, "")),
    key: yield* Config.option(Config.redacted("KYC_PROVIDER_KEY"))
  }

  const exclusionRegistry = {
    url: Option.map(yield* Config.option(Config.url("EXCLUSION_REGISTRY_URL")), (url) => url.href.replace(/\/+$/, "")),
    key: yield* Config.option(Config.redacted("EXCLUSION_REGISTRY_KEY"))
  }

  const given = yield* readGivenSecrets
  const { generated, values } = production
    ? yield* Effect.gen(function*() {
      const problems = productionProblems({
        given,
        oidc,
        gateway,
        kyc,
        exclusionRegistry,
        sandbox,
        oidcSecretGiven: Option.isSome(oidcSecret),
        jurisdiction
      })
      if (problems.length > 0) {
        return yield* new StartupError({ message: `NODE_ENV=production ${problems.join("; ")}` })
      }
      return { generated: false, values: given as Record<SecretName, string> }
    })
    // IDENTITY_KEY is generated (and kept) only where identities are taken: under JURISDICTION=BR.
    : yield* developmentSecrets(dataDir, given, jurisdiction === "BR" ? ALL_SECRET_NAMES : SECRET_NAMES)
  if (!sandbox) {
    // Without the embedded ones, the real gateway and provider must be configured.
    const missing = [
      ...(Option.isNone(oidc.issuer) ? ["OIDC_ISSUER"] : []),
      ...(Option.isNone(gateway.url) ? ["PAYMENT_GATEWAY_URL"] : []),
      ...(jurisdiction === "BR" && Option.isNone(kyc.url) ? ["KYC_PROVIDER_URL"] : []),
      ...(jurisdiction === "BR" && Option.isNone(exclusionRegistry.url) ? ["EXCLUSION_REGISTRY_URL"] : [])
    ]
    if (missing.length > 0) {
      return yield* new StartupError({ message: `SANDBOX=false requires these variables, which are not set: ${missing.join(", ")}` })
    }
  }

  return {
    production,
    jurisdiction,
    autoPayoutMaxCents,
    businessTimeZone,
    port,
    publicUrl: publicUrl.replace(/\/+$/, ""),
    dataDir,
    databaseUrl,
    migrateOnStart,
    redis,
    redisKeyPrefix,
    trustProxy,
    trustedProxies,
    sandbox,
    serviceName,
    webhookBlockPrivateTargets,
    oidc,
    loginRedirectUrl,
    adminIdpIds,
    rateLimits,
    gateway,
    kyc,
    exclusionRegistry,
    secretsGenerated: generated,
    secrets: yield* toSecrets(values)
  }
}).pipe(
  Effect.catchTag("ConfigError", (error) => new StartupError({ message: `Invalid configuration: ${error}` }))
)

export const AppConfigLive: Layer.Layer<AppConfig, StartupError, FileSystem.FileSystem | Path.Path> = Layer.effect(
  AppConfig,
  loadAppConfig
)
