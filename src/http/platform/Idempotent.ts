/**
 * `Idempotency-Key` on the money-moving POSTs (docs/rules.md#idempotency-keys; src/services/platform/Idempotency.ts):
 * what each such endpoint declares (`.pipe(moneyMoving)`: the header, validated and in the OpenAPI document, and the
 * two refusals it brings), and the handler wrapper that runs the operation once per key and marks a replayed answer
 * with `Idempotent-Replayed: true`.
 *
 * These are exactly the game and money actions, so both also carry the identity gate of JURISDICTION=BR
 * (docs/rules.md#identity-required): `moneyMoving` declares its 403 IDENTITY_REQUIRED, and `idempotent` checks it
 * before anything else (no database round trip once the user is known verified; none at all under NONE).
 */
import { HttpApiEndpoint, HttpApp, type HttpMethod, HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import type { UserId } from "../../schema/platform/Ids"
import { Identities } from "../../services/identity/Identities"
import { Idempotency } from "../../services/platform/Idempotency"
import * as HttpError from "./HttpErrors"

const IdempotencyKeyHeader = Schema.Struct({
  "idempotency-key": Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/^[\x21-\x7e]{1,64}$/, { message: () => "must be 1 to 64 visible ASCII characters" })
    ).annotations({
      description: "Makes the request safe to repeat: the same key within 24 hours answers the first " +
        "response again (header `Idempotent-Replayed: true`) and moves no money; the same key with a different " +
        "request is 422."
    })
  )
})

/**
 * A money-moving endpoint: the optional `Idempotency-Key` header; 422 when a key comes back with another request,
 * 409 when the user's operation before it still holds their lock after the wait (docs/rules.md#user-lock); under
 * JURISDICTION=BR, 403 IDENTITY_REQUIRED until the user's identity is verified (docs/rules.md#identity-required).
 */
export const moneyMoving = <
  Name extends string,
  Method extends HttpMethod.HttpMethod,
  Path,
  UrlParams,
  Payload,
  Success,
  Error,
  R,
  RE
>(endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, never, Success, Error, R, RE>) =>
  endpoint.setHeaders(IdempotencyKeyHeader)
    .addError(HttpError.IdempotencyKeyReused)
    .addError(HttpError.OperationInProgress)
    .addError(HttpError.IdentityRequired)

/**
 * A game action (an opening, an upgrade, a battle's creation or joining, raffle tickets): a money-moving endpoint
 * that responsible gaming may refuse (docs/responsible-gaming.md#refusals), each 403 with a code.
 */
export const gameAction = <
  Name extends string,
  Method extends HttpMethod.HttpMethod,
  Path,
  UrlParams,
  Payload,
  Success,
  Error,
  R,
  RE
>(endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, never, Success, Error, R, RE>) =>
  moneyMoving(endpoint)
    .addError(HttpError.LossLimitReached)
    .addError(HttpError.PlayTimeLimitReached)
    .addError(HttpError.SelfExcluded)
    .addError(HttpError.LimitsRequired)

export const idempotent = Effect.fnUntraced(function*<A, I, E, R>(request: {
    readonly userId: UserId
    readonly headers: { readonly "idempotency-key"?: string | undefined }
    readonly operation: string
    readonly input: unknown
    readonly response: Schema.Schema<A, I>
  }, operation: Effect.Effect<A, E, R>) {
  // Under BR, the identity gate first: an unverified user's action moves nothing and stores no key.
  yield* (yield* Identities).requireVerified(request.userId)
  const idempotency = yield* Idempotency
  const outcome = yield* idempotency.once({ ...request, key: request.headers["idempotency-key"] }, operation)
  if (outcome.replayed) {
    yield* HttpApp.appendPreResponseHandler((_, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "idempotent-replayed", "true"))
    )
  }
  return outcome.value
})
