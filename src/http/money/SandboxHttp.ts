/** Handlers of the sandbox gateway's controls (docs/rules.md#sandbox-gateway). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { AppConfig, usesSandboxGateway } from "../../layers/AppConfig"
import { SandboxCallback, type SandboxEvent } from "../../layers/gateway/SandboxCallback"
import { BadRequest, GatewayUnavailable, NotFound } from "../../schema/platform/Errors"
import { depositView, Deposits } from "../../services/money/Deposits"
import { Api } from "../Api"
import { CurrentUser } from "../identity/Authentication"

const eventOf = (action: "pay" | "fail" | "expire", externalId: string): SandboxEvent =>
  action === "pay"
    ? { event: "charge.paid", data: { id: externalId } }
    : action === "fail"
    ? { event: "charge.failed", data: { id: externalId, failReason: "Declined in the sandbox" } }
    : { event: "charge.expired", data: { id: externalId } }

export const SandboxLive = HttpApiBuilder.group(Api, "sandbox", (handlers) =>
  Effect.gen(function*() {
    const deposits = yield* Deposits
    const callback = yield* SandboxCallback
    const sandboxInUse = usesSandboxGateway(yield* AppConfig)

    return handlers.handle("charge", ({ path }) =>
      Effect.gen(function*() {
        if (!sandboxInUse) return yield* new NotFound({ message: "The sandbox gateway is not in use" })
        const { user } = yield* CurrentUser
        const deposit = yield* deposits.findByExternalId(path.externalId)
        if (deposit === undefined || (deposit.userId !== user.id && user.role !== "ADMIN")) {
          return yield* NotFound.of("Deposit")
        }
        if (path.action === "pay" && deposit.status === "CANCELLED") {
          return yield* new BadRequest({ message: "The charge was cancelled" })
        }
        const event = eventOf(path.action, path.externalId)
        const sent = yield* callback.send(event).pipe(
          Effect.tapError((error) => Effect.logWarning(error.message)),
          Effect.orElseFail(() => new GatewayUnavailable({ message: "The sandbox could not reach the callback" }))
        )
        const after = yield* deposits.findByExternalId(path.externalId)
        return { event: event.event, callbackStatus: sent.status, deposit: depositView(after!) }
      }))
  }))
