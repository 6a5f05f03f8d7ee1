/**
 * Every error leaves in the house body shape (docs/rules.md#error-body). HttpApi answers some failures in its own
 * shapes; this API-level middleware rewrites them before they are encoded:
 * - request decoding failures -> 400 ValidationError naming each bad field,
 * - a body that could not be read (a defect inside HttpApi): over its limit -> 413, not JSON -> 415,
 *   nested too deep or malformed -> 400 (src/http/platform/RequestBody.ts),
 * - 429 (a rate limit, a 2FA lock-out) -> with Retry-After; 413 -> with `Connection: close` (the rest
 *   of the body is not read); 503 (a dependency unavailable, docs/rules.md#dependency-outage, typed by
 *   src/layers/Failures.ts) -> with Retry-After; 409 Please retry (changed state, docs/rules.md#please-retry) -> with
 *   Retry-After,
 * - unknown routes -> 404,
 * - a defect that is still an outage (a path the policy does not cover yet) -> 503, logged,
 * - any other defect -> 500 "Internal server error", its cause logged, never sent.
 */
import { HttpApiBuilder, HttpApiError, HttpApp, HttpServerError, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import {
  FieldError,
  InternalError,
  NotFound,
  PayloadTooLarge,
  PleaseRetry,
  RateLimited,
  ServiceUnavailable,
  ValidationError
} from "../../schema/platform/Errors"
import { Api } from "../Api"
import { isUnavailable } from "../../layers/Failures"
import { bodyProblem } from "./RequestBody"

/** `["items", 2, "dropChance"]` -> `items[2].dropChance` */
export const fieldName = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (name, key) => typeof key === "number" ? `${name}[${key}]` : name === "" ? String(key) : `${name}.${String(key)}`,
    ""
  ) || "body"

/** One entry per field: the first issue reported for it. */
export const validationErrorOf = (
  issues: ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }>
): ValidationError => {
  const seen = new Map<string, FieldError>()
  for (const issue of issues) {
    const field = fieldName(issue.path)
    if (!seen.has(field)) seen.set(field, new FieldError({ field, message: issue.message }))
  }
  return new ValidationError({ errors: [...seen.values()] })
}

export const toValidationError = (error: HttpApiError.HttpApiDecodeError): ValidationError =>
  validationErrorOf(error.issues)

const isUnreadableBody = (defect: unknown): defect is HttpServerError.RequestError =>
  HttpServerError.isServerError(defect) && defect._tag === "RequestError" && defect.reason === "Decode"

type ApiError = typeof Api extends { readonly errorSchema: { readonly Type: infer E } } ? E : never

const withHeaders = (headers: Record<string, string>) =>
  HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers)))

/** When a client may try again after a dependency was unavailable (docs/rules.md#dependency-outage). */
const RETRY_AFTER_UNAVAILABLE_SECONDS = 2

/** When a client may send again an operation that kept meeting changed state (docs/rules.md#please-retry). */
const RETRY_AFTER_CONFLICT_SECONDS = 1

/**
 * Headers some errors need besides their body. A lone statement's serialization failure (no transaction to run
 * again) is answered as a transaction's that kept meeting them: 409 Please retry.
 */
const failWith = (error: ApiError): Effect.Effect<never, ApiError> =>
  error instanceof RateLimited
    ? Effect.zipRight(withHeaders({ "retry-after": String(Math.max(1, Math.ceil(error.retryAfterSeconds))) }), Effect.fail(error))
    : error instanceof PayloadTooLarge
    ? Effect.zipRight(withHeaders({ connection: "close" }), Effect.fail(error))
    : error instanceof ServiceUnavailable && error.conflict
    ? failWith(new PleaseRetry())
    : error instanceof ServiceUnavailable
    ? Effect.zipRight(withHeaders({ "retry-after": String(RETRY_AFTER_UNAVAILABLE_SECONDS) }), Effect.fail(error))
    : error instanceof PleaseRetry
    ? Effect.zipRight(withHeaders({ "retry-after": String(RETRY_AFTER_CONFLICT_SECONDS) }), Effect.fail(error))
    : Effect.fail(error)

const rewriteError = (app: HttpApp.Default): HttpApp.Default<ApiError> =>
  Effect.catchAllCause(app, (cause): Effect.Effect<never, ApiError> => {
    // Declared as never-failing, the router does fail with endpoint errors and HttpApi's own.
    const failure = Cause.failureOption(cause as Cause.Cause<unknown>)
    if (Option.isSome(failure)) {
      const error = failure.value
      if (error instanceof HttpApiError.HttpApiDecodeError) return Effect.fail(toValidationError(error))
      if (HttpServerError.isServerError(error) && error._tag === "RouteNotFound") {
        return Effect.fail(new NotFound({ message: "Route not found" }))
      }
      return failWith(error as ApiError)
    }
    const defect = Cause.dieOption(cause)
    if (Option.isSome(defect)) {
      if (isUnreadableBody(defect.value)) return failWith(bodyProblem(defect.value))
      if (isUnavailable(defect.value)) {
        return Effect.logWarning("A dependency is unavailable", cause).pipe(Effect.zipRight(failWith(new ServiceUnavailable())))
      }
      return Effect.logError("Unhandled defect", cause).pipe(Effect.zipRight(Effect.fail(new InternalError())))
    }
    return Effect.failCause(cause as Cause.Cause<ApiError>)
  })

export const ErrorEnvelopeLive = HttpApiBuilder.middleware(Api, rewriteError)
