/**
 * Configuration from environment variables (DECISIONS D1). Every variable is listed in README.md.
 *
 * Secrets: in production every one must be set, and start-up fails with one message naming all that
 * are missing. Elsewhere a missing secret is generated once and kept in DATA_DIR/dev-secrets.json, so
 * restarts keep sessions' 2FA secrets decryptable and gateway signatures stable.
 */
import { FileSystem, Path } from "@effect/platform"
import { Config, Context, Data, Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"

export class StartupError extends Data.TaggedError("StartupError")<{ readonly message: string }> {}

const SECRET_NAMES = ["WEBHOOK_SECRET", "ADMIN_TOKEN", "TWO_FACTOR_KEY"] as const
type SecretName = (typeof SECRET_NAMES)[number]

export interface Secrets {
  /** Shared with the payment gateway: signs its callbacks (SPEC deposit rule 3). */
  readonly webhookSecret: Redacted.Redacted
  /** Bearer credential for webhook registration (SPEC Authentication 3). */
  readonly adminToken: Redacted.Redacted
  /** 32-byte AES-256-GCM key for two-factor secrets, as 64 hex characters (D10). */
  readonly twoFactorKey: Redacted.Redacted<Buffer>
}

export interface AppConfigShape {
  readonly production: boolean
  readonly port: number
  readonly publicUrl: string
  readonly dataDir: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly redisUrl: Option.Option<Redacted.Redacted>
  /** Prefix of every Redis key and channel, so several deployments (or test runs) can share one Redis. */
  readonly redisKeyPrefix: string
  readonly trustProxy: boolean
  readonly serviceName: string
  /** True when the secrets were generated here rather than given (printed at start-up). */
  readonly secretsGenerated: boolean
  readonly secrets: Secrets
}

export class AppConfig extends Context.Tag("app/AppConfig")<AppConfig, AppConfigShape>() {}

const generators: Record<SecretName, () => string> = {
  WEBHOOK_SECRET: () => randomBytes(32).toString("hex"),
  ADMIN_TOKEN: () => randomBytes(24).toString("hex"),
  TWO_FACTOR_KEY: () => randomBytes(32).toString("hex")
}

const readGivenSecrets = Effect.gen(function*() {
  const given: Partial<Record<SecretName, string>> = {}
  for (const name of SECRET_NAMES) {
    const value = yield* Config.option(Config.nonEmptyString(name))
    if (Option.isSome(value)) given[name] = value.value
  }
  return given
})

/** Reads DATA_DIR/dev-secrets.json, adds what is missing and writes it back (development only). */
const developmentSecrets = (dataDir: string, given: Partial<Record<SecretName, string>>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = path.join(dataDir, "dev-secrets.json")
    const stored: Partial<Record<SecretName, string>> = (yield* fs.exists(file))
      ? JSON.parse(yield* fs.readFileString(file))
      : {}
    const missing = SECRET_NAMES.filter((name) => given[name] === undefined && stored[name] === undefined)
    if (missing.length > 0) {
      for (const name of missing) stored[name] = generators[name]()
      yield* fs.makeDirectory(dataDir, { recursive: true })
      yield* fs.writeFileString(file, JSON.stringify(stored, null, 2) + "\n", { mode: 0o600 })
    }
    return { values: { ...stored, ...given } as Record<SecretName, string>, generated: SECRET_NAMES.some((n) => given[n] === undefined) }
  }).pipe(
    Effect.mapError((cause) => new StartupError({ message: `Cannot keep development secrets in ${dataDir}: ${cause}` }))
  )

const toSecrets = (values: Record<SecretName, string>): Effect.Effect<Secrets, StartupError> =>
  /^[0-9a-fA-F]{64}$/.test(values.TWO_FACTOR_KEY)
    ? Effect.succeed({
      webhookSecret: Redacted.make(values.WEBHOOK_SECRET),
      adminToken: Redacted.make(values.ADMIN_TOKEN),
      twoFactorKey: Redacted.make(Buffer.from(values.TWO_FACTOR_KEY, "hex"))
    })
    : Effect.fail(new StartupError({ message: "TWO_FACTOR_KEY must be 64 hexadecimal characters (32 bytes)" }))

export const loadAppConfig: Effect.Effect<
  AppConfigShape,
  StartupError,
  FileSystem.FileSystem | Path.Path
> = Effect.gen(function*() {
  const production = (yield* Config.string("NODE_ENV").pipe(Config.withDefault("development"))) === "production"
  const port = yield* Config.port("PORT").pipe(Config.withDefault(3000))
  const publicUrl = yield* Config.string("PUBLIC_URL").pipe(Config.withDefault(`http://localhost:${port}`))
  const dataDir = yield* Config.string("DATA_DIR").pipe(Config.withDefault("./.data"))
  const databaseUrl = yield* Config.option(Config.redacted("DATABASE_URL"))
  const redisUrl = yield* Config.option(Config.redacted("REDIS_URL"))
  const redisKeyPrefix = yield* Config.string("REDIS_KEY_PREFIX").pipe(Config.withDefault("gp:"))
  const trustProxy = yield* Config.boolean("TRUST_PROXY").pipe(Config.withDefault(false))
  const serviceName = yield* Config.string("SERVICE_NAME").pipe(Config.withDefault("GamePlatform"))

  const given = yield* readGivenSecrets
  const { generated, values } = production
    ? yield* Effect.gen(function*() {
      const missing = SECRET_NAMES.filter((name) => given[name] === undefined)
      if (missing.length > 0) {
        return yield* new StartupError({
          message: `NODE_ENV=production requires these secrets, which are not set: ${missing.join(", ")}`
        })
      }
      return { generated: false, values: given as Record<SecretName, string> }
    })
    : yield* developmentSecrets(dataDir, given)

  return {
    production,
    port,
    publicUrl: publicUrl.replace(/\/+$/, ""),
    dataDir,
    databaseUrl,
    redisUrl,
    redisKeyPrefix,
    trustProxy,
    serviceName,
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
