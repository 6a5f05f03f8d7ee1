/**
 * The sandbox's pay button (docs/rules.md#sandbox-gateway) exists only while the sandbox gateway serves
 * (docs/rules.md#sandbox-mode): never with SANDBOX off, which production always is, whatever else is configured.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { initiateDeposit } from "../support/PaymentFixtures"
import { signIn } from "../support/SignIn"
import { makeTestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

layer(TestDatabase)("sandbox switch", (it) => {
  it.scoped("with SANDBOX off and no PAYMENT_GATEWAY_URL, a user cannot pay their own deposit through /sandbox", () =>
    Effect.gen(function*() {
      for (const config of [{ sandbox: false }, { sandbox: false, production: true }]) {
        const client = yield* makeTestClient({ config })
        const player = yield* signIn(client, `self-payer-${config.production === true ? "prod" : "off"}`)
        const deposit = yield* initiateDeposit(client, player.auth, 5_000)
        const paid = yield* client.post(`/api/sandbox/charges/${deposit.externalId}/pay`, undefined, player.auth)
        expect(paid).toMatchObject({ status: 404, body: { statusCode: 404, message: "The sandbox gateway is not in use" } })
        expect((yield* client.get("/api/auth/me", player.auth)).body.balanceCents).toBe(0)
      }
    }))
})
