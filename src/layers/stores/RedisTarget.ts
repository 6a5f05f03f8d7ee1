/**
 * Where the Redis of the stores is (docs/operations.md#redis-high-availability): one node (`REDIS_URL`), a
 * primary found through Sentinel (`REDIS_SENTINELS`, `REDIS_SENTINEL_NAME`) or a Redis Cluster
 * (`REDIS_CLUSTER_NODES`). At most one of the three may be set. For Sentinel and Cluster the credentials of the
 * Redis nodes are `REDIS_USERNAME` and `REDIS_PASSWORD` (and the sentinels' own `REDIS_SENTINEL_PASSWORD`);
 * with `REDIS_URL` they are in the URL, as before. No secret ever reaches a log line: `describeTarget` names
 * hosts and ports only.
 */
import { Config, ConfigError, Either, Option, Redacted } from "effect"

export interface RedisNode {
  readonly host: string
  readonly port: number
}

/** Credentials of the Redis nodes (Sentinel and Cluster); a sentinel's password is its own. */
export interface RedisAuth {
  readonly username: Option.Option<string>
  readonly password: Option.Option<Redacted.Redacted>
  readonly sentinelPassword: Option.Option<Redacted.Redacted>
}

export type RedisTarget =
  | { readonly _tag: "Single"; readonly url: Redacted.Redacted }
  | {
    readonly _tag: "Sentinel"
    readonly sentinels: ReadonlyArray<RedisNode>
    /** The primary's group name, as the sentinels monitor it. */
    readonly name: string
    readonly auth: RedisAuth
  }
  | { readonly _tag: "Cluster"; readonly nodes: ReadonlyArray<RedisNode>; readonly auth: RedisAuth }

/** `mymaster`, the name Redis's own sentinel.conf and documentation use. */
export const DEFAULT_SENTINEL_NAME = "mymaster"

const invalid = (name: string, message: string) => Either.left(ConfigError.InvalidData([name], message))

/**
 * An entry as a refusal quotes it: whatever comes before its last `@` (a URL's user and password) hidden, and quoted
 * as JSON, so the refusal stays one line.
 */
const quoted = (entry: string) =>
  JSON.stringify(entry.includes("@") ? `<credentials hidden>@${entry.slice(entry.lastIndexOf("@") + 1)}` : entry)

/** `host:port,host:port` (IPv6 as `[::1]:26379`); every entry checked, none empty. */
const nodeList = (name: string, text: string): Either.Either<ReadonlyArray<RedisNode>, ConfigError.ConfigError> => {
  const entries = text.split(",").map((entry) => entry.trim())
  const nodes: Array<RedisNode> = []
  for (const entry of entries) {
    const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/.exec(entry)
    const port = Number(match?.[2])
    if (match === null || port < 1 || port > 65535) {
      return invalid(name, `Expected a comma-separated list of host:port (port 1 to 65535), not ${quoted(entry)}`)
    }
    nodes.push({ host: match[1]!.replace(/^\[(.*)\]$/, "$1"), port })
  }
  return Either.right(nodes)
}

const optional = (name: string) => Config.option(Config.string(name))

/** The configured target; none when no Redis variable is set (the in-memory stores). */
export const redisTargetConfig: Config.Config<Option.Option<RedisTarget>> = Config.all({
  url: Config.option(Config.redacted("REDIS_URL")),
  sentinels: optional("REDIS_SENTINELS"),
  sentinelName: optional("REDIS_SENTINEL_NAME"),
  clusterNodes: optional("REDIS_CLUSTER_NODES"),
  username: optional("REDIS_USERNAME"),
  password: Config.option(Config.redacted("REDIS_PASSWORD")),
  sentinelPassword: Config.option(Config.redacted("REDIS_SENTINEL_PASSWORD"))
}).pipe(Config.mapOrFail((v): Either.Either<Option.Option<RedisTarget>, ConfigError.ConfigError> => {
  const topologies = [
    ...(Option.isSome(v.url) ? ["REDIS_URL"] : []),
    ...(Option.isSome(v.sentinels) ? ["REDIS_SENTINELS"] : []),
    ...(Option.isSome(v.clusterNodes) ? ["REDIS_CLUSTER_NODES"] : [])
  ]
  if (topologies.length > 1) {
    return invalid(topologies[0]!, `Set only one of REDIS_URL, REDIS_SENTINELS and REDIS_CLUSTER_NODES, not ${topologies.join(" and ")}`)
  }
  if (Option.isSome(v.sentinelName) && Option.isNone(v.sentinels)) {
    return invalid("REDIS_SENTINEL_NAME", "Applies only with REDIS_SENTINELS, which is not set")
  }
  if (Option.isSome(v.sentinelPassword) && Option.isNone(v.sentinels)) {
    return invalid("REDIS_SENTINEL_PASSWORD", "Applies only with REDIS_SENTINELS, which is not set")
  }
  const credentials = [
    ...(Option.isSome(v.username) ? ["REDIS_USERNAME"] : []),
    ...(Option.isSome(v.password) ? ["REDIS_PASSWORD"] : [])
  ]
  if (credentials.length > 0 && Option.isNone(v.sentinels) && Option.isNone(v.clusterNodes)) {
    return invalid(
      credentials[0]!,
      Option.isSome(v.url)
        ? "With REDIS_URL the credentials are in the URL (redis://user:password@host:port)"
        : "Applies only with REDIS_SENTINELS or REDIS_CLUSTER_NODES, neither of which is set"
    )
  }
  const auth: RedisAuth = { username: v.username, password: v.password, sentinelPassword: v.sentinelPassword }
  if (Option.isSome(v.url)) return Either.right(Option.some(singleNode(v.url.value)))
  if (Option.isSome(v.sentinels)) {
    const name = Option.getOrElse(v.sentinelName, () => DEFAULT_SENTINEL_NAME).trim()
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) {
      return invalid("REDIS_SENTINEL_NAME", "Expected the primary's name as the sentinels monitor it (letters, digits, . _ -)")
    }
    return Either.map(nodeList("REDIS_SENTINELS", v.sentinels.value), (sentinels) => Option.some({ _tag: "Sentinel", sentinels, name, auth }))
  }
  if (Option.isSome(v.clusterNodes)) {
    return Either.map(nodeList("REDIS_CLUSTER_NODES", v.clusterNodes.value), (nodes) => Option.some({ _tag: "Cluster", nodes, auth }))
  }
  return Either.right(Option.none())
}))

const hostPorts = (nodes: ReadonlyArray<RedisNode>) =>
  nodes.map(({ host, port }) => `${host.includes(":") ? `[${host}]` : host}:${port}`).join(",")

/** For log lines: the topology, hosts and ports, never a credential. */
export const describeTarget = (target: RedisTarget): string => {
  switch (target._tag) {
    case "Single":
      try {
        const parsed = new URL(Redacted.value(target.url))
        return `${parsed.hostname}:${parsed.port || "6379"}`
      } catch {
        return "the configured address"
      }
    case "Sentinel":
      return `the primary "${target.name}" of the sentinels ${hostPorts(target.sentinels)}`
    case "Cluster":
      return `the cluster of ${hostPorts(target.nodes)}`
  }
}

/** The variable that chose the target, for log lines. */
export const targetVariable = (target: RedisTarget): string =>
  target._tag === "Single" ? "REDIS_URL" : target._tag === "Sentinel" ? "REDIS_SENTINELS" : "REDIS_CLUSTER_NODES"

/** One node at `url` (REDIS_URL's target). */
export const singleNode = (url: Redacted.Redacted): RedisTarget => ({ _tag: "Single", url })
