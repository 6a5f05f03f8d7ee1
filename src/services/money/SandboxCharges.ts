/**
 * The embedded sandbox gateway's controls (docs/rules.md#sandbox-gateway): while the sandbox is the gateway, a
 * deposit's owner (or an administrator) makes it send the charge's event to our own callback, the path a
 * real gateway's event takes. A payment names its payer (`data.payerDocument`, docs/rules.md#deposit-third-party):
 * the CPF given, else under BR the deposit owner's verified CPF (none when they have none).
 */
import { Effect } from "effect"
import { AppConfig, usesSandboxGateway } from "../../layers/AppConfig"
import { SandboxCallback, type SandboxEvent } from "../../layers/gateway/SandboxCallback"
import type { SignedInUser } from "../../schema/identity/User"
import { ChargeCancelled, SandboxAction, SandboxNotInUse } from "../../schema/money/Deposit"
import { cpfDigits } from "../../schema/identity/Compliance"
import type { UserId } from "../../schema/platform/Ids"
import { Identities } from "../identity/Identities"
import { NotFound } from "../../schema/platform/Errors"
import { GatewayUnavailable } from "../../schema/money/Money"
import { depositView, Deposits } from "./Deposits"

const eventOf = (action: SandboxAction, externalId: string, payerDocument: string | undefined): SandboxEvent =>
  action === "pay"
    ? { event: "charge.paid", data: payerDocument === undefined ? { id: externalId } : { id: externalId, payerDocument } }
    : action === "fail"
    ? { event: "charge.failed", data: { id: externalId, failReason: "Declined in the sandbox" } }
    : { event: "charge.expired", data: { id: externalId } }

export class SandboxCharges extends Effect.Service<SandboxCharges>()("app/SandboxCharges", {
  effect: Effect.gen(function*() {
    const deposits = yield* Deposits
    const callback = yield* SandboxCallback
    const config = yield* AppConfig
    const identities = yield* Identities
    const sandboxInUse = usesSandboxGateway(config)

    /** Who pays: the CPF given, else under BR the owner's (docs/rules.md#sandbox-gateway). */
    const payerOf = (owner: UserId, payerCpf: string | undefined) =>
      payerCpf !== undefined
        ? Effect.succeed(cpfDigits(payerCpf))
        : config.jurisdiction === "BR"
        ? Effect.map(identities.holderCpf(owner), (holder) => holder?.digits)
        : Effect.succeed(undefined)

    /**
     * The event sent, the status our callback answered and the deposit after it. `stepUp` runs before an
     * administrator settles someone else's charge (docs/rules.md#admin-step-up).
     */
    const settle = Effect.fn("SandboxCharges.settle")(function*<E, R>(
      user: SignedInUser,
      externalId: string,
      action: SandboxAction,
      stepUp: Effect.Effect<void, E, R>,
      payerCpf?: string
    ) {
      if (!sandboxInUse) return yield* new SandboxNotInUse()
      const deposit = yield* deposits.findByExternalId(externalId)
      if (deposit === undefined || (deposit.userId !== user.id && user.role !== "ADMIN")) {
        return yield* NotFound.of("Deposit")
      }
      if (deposit.userId !== user.id) yield* stepUp
      if (action === "pay" && deposit.status === "CANCELLED") return yield* new ChargeCancelled()
      const event = eventOf(action, externalId, action === "pay" ? yield* payerOf(deposit.userId, payerCpf) : undefined)
      const sent = yield* callback.send(event).pipe(
        Effect.tapError((error) => Effect.logWarning(error.message)),
        Effect.orElseFail(() => new GatewayUnavailable({ message: "The sandbox could not reach the callback" }))
      )
      // Deposits are never deleted: the one found above is still there.
      const after = yield* deposits.findByExternalId(externalId)
      if (after === undefined) return yield* Effect.dieMessage(`Sandbox: deposit ${externalId} vanished`)
      return { event: event.event, callbackStatus: sent.status, deposit: depositView(after) }
    })

    return { settle } as const
  }),
  dependencies: [Deposits.Default, Identities.Default]
}) {}
