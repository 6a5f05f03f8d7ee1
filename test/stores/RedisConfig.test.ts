/**
 * Where Redis is (src/layers/stores/RedisTarget.ts, docs/operations.md#redis-high-availability), read by the
 * service's configuration at start: one topology at most, every host:port checked, credentials where they
 * belong, and a refusal is the one-line StartupError the service prints before it exits.
 */
import { NodeContext } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Option, Redacted } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { loadAppConfig } from "../../src/layers/AppConfig"
import { describeTarget } from "../../src/layers/stores/RedisTarget"

/** One data directory for the file (development secrets are kept there). */
const dataDir = mkdtempSync(join(tmpdir(), "gp-redis-config-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const load = (env: Record<string, string>) =>
  loadAppConfig.pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ DATA_DIR: dataDir, ...env })))),
    Effect.provide(NodeContext.layer),
    Effect.either
  )

/** The refusal's message: one line. */
const refusal = (env: Record<string, string>) =>
  Effect.map(load(env), (result) => {
    const message = Either.isLeft(result) ? result.left.message : "started"
    expect(message).not.toContain("\n")
    return message
  })

describe("Redis configuration", () => {
  it.effect("REDIS_SENTINELS: the sentinels and the primary's name (mymaster unless REDIS_SENTINEL_NAME), credentials apart", () =>
    Effect.gen(function*() {
      const config = Either.getOrThrow(yield* load({
        REDIS_SENTINELS: "10.0.0.1:26379, sentinel-b.internal:26380,[::1]:26381",
        REDIS_USERNAME: "gp",
        REDIS_PASSWORD: "node-secret",
        REDIS_SENTINEL_PASSWORD: "sentinel-secret"
      }))
      const target = Option.getOrThrow(config.redis)
      expect(target).toMatchObject({
        _tag: "Sentinel",
        name: "mymaster",
        sentinels: [{ host: "10.0.0.1", port: 26379 }, { host: "sentinel-b.internal", port: 26380 }, { host: "::1", port: 26381 }]
      })
      if (target._tag !== "Sentinel") throw new Error("not Sentinel")
      expect(Option.map(target.auth.password, Redacted.value)).toEqual(Option.some("node-secret"))
      expect(Option.map(target.auth.sentinelPassword, Redacted.value)).toEqual(Option.some("sentinel-secret"))
      // What the logs name: no credential.
      expect(describeTarget(target)).toBe(`the primary "mymaster" of the sentinels 10.0.0.1:26379,sentinel-b.internal:26380,[::1]:26381`)
      expect(String(target.auth.password)).not.toContain("node-secret")

      const named = Either.getOrThrow(yield* load({ REDIS_SENTINELS: "127.0.0.1:26379", REDIS_SENTINEL_NAME: "gp-primary" }))
      expect(Option.getOrThrow(named.redis)).toMatchObject({ _tag: "Sentinel", name: "gp-primary" })
    }))

  it.effect("REDIS_CLUSTER_NODES: the seed nodes; REDIS_URL as before; none of them: the in-memory stores", () =>
    Effect.gen(function*() {
      const cluster = Either.getOrThrow(yield* load({ REDIS_CLUSTER_NODES: "10.0.0.1:7000,10.0.0.2:7001", REDIS_PASSWORD: "p" }))
      expect(Option.getOrThrow(cluster.redis)).toMatchObject({
        _tag: "Cluster",
        nodes: [{ host: "10.0.0.1", port: 7000 }, { host: "10.0.0.2", port: 7001 }]
      })
      const single = Either.getOrThrow(yield* load({ REDIS_URL: "redis://:secret@cache.internal:6380" }))
      const target = Option.getOrThrow(single.redis)
      expect(target._tag).toBe("Single")
      expect(describeTarget(target)).toBe("cache.internal:6380")
      expect(Either.getOrThrow(yield* load({})).redis).toEqual(Option.none())
    }))

  it.effect("two topologies at once, or credentials and names that apply to none, are refused in one line", () =>
    Effect.gen(function*() {
      expect(yield* refusal({ REDIS_URL: "redis://127.0.0.1:6379", REDIS_SENTINELS: "127.0.0.1:26379" })).toMatch(
        /^Invalid configuration: .*Set only one of REDIS_URL, REDIS_SENTINELS and REDIS_CLUSTER_NODES, not REDIS_URL and REDIS_SENTINELS/
      )
      expect(yield* refusal({ REDIS_SENTINELS: "127.0.0.1:26379", REDIS_CLUSTER_NODES: "127.0.0.1:7000" })).toMatch(
        /not REDIS_SENTINELS and REDIS_CLUSTER_NODES/
      )
      expect(yield* refusal({ REDIS_URL: "redis://127.0.0.1:6379", REDIS_PASSWORD: "secret" })).toMatch(
        /REDIS_PASSWORD.*With REDIS_URL the credentials are in the URL/
      )
      expect(yield* refusal({ REDIS_SENTINEL_NAME: "mymaster" })).toMatch(/REDIS_SENTINEL_NAME.*Applies only with REDIS_SENTINELS/)
      expect(yield* refusal({ REDIS_CLUSTER_NODES: "127.0.0.1:7000", REDIS_SENTINEL_PASSWORD: "x" })).toMatch(
        /REDIS_SENTINEL_PASSWORD.*Applies only with REDIS_SENTINELS/
      )
    }))

  it.effect("hostile host:port lists and names are refused, naming the entry; no secret in the message", () =>
    Effect.gen(function*() {
      for (
        const [value, entry] of [
          ["", ""],
          ["127.0.0.1:26379,", ""],
          ["127.0.0.1", "127.0.0.1"],
          ["127.0.0.1:0", "127.0.0.1:0"],
          ["127.0.0.1:65536", "127.0.0.1:65536"],
          ["127.0.0.1:port", "127.0.0.1:port"],
          ["host name:26379", "host name:26379"],
          ["::1:26379", "::1:26379"]
        ]
      ) {
        const message = yield* refusal({ REDIS_SENTINELS: value!, REDIS_PASSWORD: "never-shown" })
        expect(message).toContain(`REDIS_SENTINELS`)
        expect(message).toContain(`Expected a comma-separated list of host:port (port 1 to 65535), not "${entry}"`)
        expect(message).not.toContain("never-shown")
      }
      expect(yield* refusal({ REDIS_CLUSTER_NODES: "10.0.0.1:7000;10.0.0.2:7001" })).toMatch(/REDIS_CLUSTER_NODES.*not "10.0.0.1:7000;10.0.0.2:7001"/)
      expect(yield* refusal({ REDIS_SENTINELS: "127.0.0.1:26379", REDIS_SENTINEL_NAME: "my master" })).toMatch(
        /REDIS_SENTINEL_NAME.*Expected the primary's name/
      )
    }))

  it.effect("a node given as a URL with credentials is refused without echoing them; a newline stays escaped", () =>
    Effect.gen(function*() {
      for (const name of ["REDIS_CLUSTER_NODES", "REDIS_SENTINELS"]) {
        const message = yield* refusal({ [name]: "10.0.0.1:7000,redis://default:s3cr3t-pass@10.0.0.2:7001" })
        expect(message).toContain(name)
        expect(message).toContain("10.0.0.2:7001")
        expect(message).not.toContain("s3cr3t-pass")
        expect(message).not.toContain("default:")
        // A password that itself holds an @ is hidden whole.
        expect(yield* refusal({ [name]: "user:p@ss@word@10.0.0.2:7001" })).not.toMatch(/p@ss|word/)
      }
      // refusal() checks the message is one line
      expect(yield* refusal({ REDIS_SENTINELS: "10.0.0.1:26379\nsecond-line" })).toContain("REDIS_SENTINELS")
    }))
})
