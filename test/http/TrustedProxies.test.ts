/**
 * Who the client is (docs/rules.md#client-address): X-Forwarded-For speaks for a client only when the connection
 * comes from TRUSTED_PROXIES (loopback by default), and the walk from the right stops at the first entry
 * that is not a trusted proxy. In-process requests come from 127.0.0.1, as a local client's would.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { gatewayCall, initiateDeposit, paidEvent } from "../support/PaymentFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient, type TestClient, testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

/** The load balancer lives in 10.0.0.0/8; the service's port is also reachable directly (from 127.0.0.1 here). */
const behindBalancer = { trustProxy: 1, trustedProxies: ["10.0.0.0/8"], adminIdpIds: ["root"] }

const sessionIp = (client: TestClient, auth: Record<string, string>) =>
  Effect.map(client.get("/api/auth/sessions", auth), (r) => r.body.sessions[0].ip as string)

layer(TestDatabase)("trusted proxies", (it) => {
  it.scoped("the report's callback: a direct connection claiming the allowed gateway address in X-Forwarded-For is refused", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({
        config: { ...behindBalancer, gateway: { ...testConfig.gateway, allowedIps: ["10.9.9.9"] } }
      })
      const player = yield* signIn(client, "payer")
      const deposit = yield* initiateDeposit(client, player.auth, 1_000)
      const body = JSON.stringify(paidEvent(deposit.externalId))
      const spoofed = yield* gatewayCall(client, body, { headers: { "x-forwarded-for": "10.9.9.9" } })
      expect(spoofed).toMatchObject({ status: 403, body: { statusCode: 403, message: "Address not allowed" } })
      expect((yield* client.get("/api/auth/me", player.auth)).body.balanceCents).toBe(0)

      // Through the balancer (a trusted peer), the same header names the gateway.
      const trusted = yield* makeTestClient({
        config: { ...behindBalancer, trustedProxies: ["127.0.0.0/8"], gateway: { ...testConfig.gateway, allowedIps: ["10.9.9.9"] } }
      })
      const payer = yield* signIn(trusted, "payer-2")
      const paid = yield* initiateDeposit(trusted, payer.auth, 1_000)
      const forwarded = yield* gatewayCall(trusted, JSON.stringify(paidEvent(paid.externalId)), { headers: { "x-forwarded-for": "10.9.9.9" } })
      expect(forwarded.status).toBe(200)
      expect((yield* trusted.get("/api/auth/me", payer.auth)).body.balanceCents).toBe(1_000)
    }))

  it.scoped("GATEWAY_ALLOWED_IPS holds addresses and CIDRs, compared as addresses, not as text", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({
        config: { trustProxy: 1, gateway: { ...testConfig.gateway, allowedIps: ["2001:DB8::5", "203.0.113.0/24"] } }
      })
      const player = yield* signIn(client, "allowed")
      const call = (from: string) =>
        Effect.flatMap(initiateDeposit(client, player.auth, 1_000), (deposit) =>
          gatewayCall(client, JSON.stringify(paidEvent(deposit.externalId)), { headers: { "x-forwarded-for": from } }))
      expect((yield* call("2001:db8:0::5")).status).toBe(200)
      expect((yield* call("203.0.113.77")).status).toBe(200)
      expect((yield* call("::ffff:203.0.113.78")).status).toBe(200)
      expect((yield* call("203.0.114.1")).body).toEqual({ statusCode: 403, message: "Address not allowed" })
      expect((yield* call("2001:db8::6")).status).toBe(403)
    }))

  it.scoped("a direct connection cannot escape the sign-in limit by naming another address each time", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: behindBalancer })
      const answers = yield* Effect.forEach(
        Array.from({ length: 11 }, (_, i) => i),
        (i) => client.get("/api/auth/idp/login", { "x-forwarded-for": `198.51.100.${i}` })
      )
      expect(answers.slice(0, 10).every((r) => r.status === 302)).toBe(true)
      expect(answers[10]!.status).toBe(429)
    }))

  it.scoped("the walk from the right takes an entry only from a trusted proxy: an untrusted hop is the client", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { trustProxy: 2, trustedProxies: ["127.0.0.1/32", "10.0.0.0/8"] } })
      // Through two trusted proxies: the second entry from the right.
      const twice = yield* signIn(client, "two-hops", { "x-forwarded-for": "6.6.6.6, 203.0.113.41, 10.0.0.2" })
      expect(yield* sessionIp(client, twice.auth)).toBe("203.0.113.41")
      // The right-most entry is not a trusted proxy: whoever wrote what is left of it is not believed.
      const once = yield* signIn(client, "one-hop", { "x-forwarded-for": "6.6.6.6, 203.0.113.41, 198.51.100.2" })
      expect(yield* sessionIp(client, once.auth)).toBe("198.51.100.2")
      // From an untrusted peer, the header is not read at all.
      const direct = yield* makeTestClient({ config: { trustProxy: 2, trustedProxies: ["10.0.0.0/8"] } })
      const own = yield* signIn(direct, "direct", { "x-forwarded-for": "6.6.6.6, 10.0.0.2" })
      expect(yield* sessionIp(direct, own.auth)).toBe("127.0.0.1")
    }))
})
