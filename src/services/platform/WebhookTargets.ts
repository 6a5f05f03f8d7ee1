/**
 * Server-side request forgery guard for outbound webhook targets (docs/rules.md#webhook-private-targets): when
 * enabled, a target whose host is, or resolves to, a loopback, private, link-local or otherwise internal
 * address is refused at registration, and again at every delivery (the worker re-checks the URL and
 * its HTTP agent connects only to addresses `publicOnlyLookup` let through).
 */
import { Effect } from "effect"
import { lookup as dnsLookup } from "node:dns"
import { lookup } from "node:dns/promises"
import { BlockList, isIP, type LookupFunction } from "node:net"

/**
 * Everything that is not plainly a public unicast address (IANA special-purpose registries): this
 * network, private, shared (CGNAT), loopback, link-local, protocol assignments, documentation,
 * benchmarking, the 6to4 relay, multicast, reserved and broadcast; and in IPv6 the unspecified and
 * loopback addresses, IPv4-compatible, discard, protocol assignments (Teredo, ORCHID...),
 * documentation, SRv6, unique-local, link- and site-local, multicast, and the translation prefixes
 * that reach an IPv4 address of their own choosing: NAT64 (64:ff9b::/96, 64:ff9b:1::/48) and 6to4
 * (2002::/16). IPv4-mapped addresses (::ffff:10.0.0.1, ::ffff:a00:1) are checked as the IPv4 address
 * they carry (node's BlockList does so).
 */
const internal = new BlockList()
for (const [network, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16],
  ["172.16.0.0", 12], ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.88.99.0", 24], ["192.168.0.0", 16],
  ["198.18.0.0", 15], ["198.51.100.0", 24], ["203.0.113.0", 24], ["224.0.0.0", 3]
] as const) internal.addSubnet(network, prefix, "ipv4")
for (const [network, prefix] of [
  ["::", 96], ["64:ff9b::", 96], ["64:ff9b:1::", 48], ["100::", 64], ["2001::", 23], ["2001:db8::", 32],
  ["2002::", 16], ["3fff::", 20], ["5f00::", 16], ["fc00::", 7], ["fe80::", 10], ["fec0::", 10], ["ff00::", 8]
] as const) internal.addSubnet(network, prefix, "ipv6")

const isInternalAddress = (address: string): boolean => {
  const family = isIP(address)
  return family !== 0 && internal.check(address, family === 6 ? "ipv6" : "ipv4")
}

/** True when the URL's host is internal, or is a name that does not resolve or resolves to one. */
export const isInternalTarget = (url: string): Effect.Effect<boolean> =>
  Effect.promise(async () => {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "")
    if (isIP(host) !== 0) return isInternalAddress(host)
    if (host === "localhost" || host.endsWith(".localhost")) return true
    try {
      const addresses = await lookup(host, { all: true })
      return addresses.length === 0 || addresses.some((a) => isInternalAddress(a.address))
    } catch {
      return true
    }
  })

/**
 * A `lookup` for the delivery worker's HTTP agent when private targets are blocked: the address the
 * socket connects to is the one checked here, so a name that resolved to a public address at
 * registration and now resolves to an internal one (DNS rebinding) is refused at connection time.
 * (IP literals never go through `lookup`; the worker checks those with `isInternalTarget` first.)
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, options.all ? [] : "")
    const refused = addresses.length === 0 ? undefined : addresses.find((a) => isInternalAddress(a.address))
    if (addresses.length === 0 || refused !== undefined) {
      const problem: NodeJS.ErrnoException = new Error(
        refused === undefined
          ? `${hostname} does not resolve`
          : `${hostname} resolves to a loopback or private address (${refused.address})`
      )
      problem.code = "EPRIVATETARGET"
      return callback(problem, options.all ? [] : "")
    }
    if (options.all) return callback(null, addresses)
    const [first] = addresses
    return callback(null, first!.address, first!.family)
  })
}
