/**
 * Every error leaves in the body shape of DECISIONS D3. HttpApi answers some failures in its own
 * shapes; this API-level middleware rewrites them before they are encoded:
 * - request decoding failures -> 400 ValidationError naming each bad field,
 * - malformed JSON (a defect inside HttpApi) -> 400,
 * - unknown routes -> 404,
 * - a dependency that is unreachable (src/http/Outage.ts) -> 503 "Service unavailable", logged,
 * - any other defect -> 500 "Internal server error", its cause logged, never sent.
 */
import { HttpApiBuilder, HttpApiError, type HttpApp, HttpServerError } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { BadRequest, FieldError, InternalError, NotFound, ServiceUnavailable, ValidationError } from "../schema/Errors"
import { Api } from "./Api"
import { isOutage } from "./Outage"

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

const isMalformedBody = (defect: unknown) =>
  HttpServerError.isServerError(defect) && defect._tag === "RequestError" && defect.reason === "Decode"

type ApiError = typeof Api extends { readonly errorSchema: { readonly Type: infer E } } ? E : never

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
      return Effect.failCause(cause as Cause.Cause<ApiError>)
    }
    const defect = Cause.dieOption(cause)
    if (Option.isSome(defect)) {
      if (isMalformedBody(defect.value)) return Effect.fail(new BadRequest({ message: "Malformed JSON body" }))
      if (isOutage(defect.value)) {
        return Effect.logWarning("A dependency is unavailable", cause).pipe(Effect.zipRight(Effect.fail(new ServiceUnavailable())))
      }
      return Effect.logError("Unhandled defect", cause).pipe(Effect.zipRight(Effect.fail(new InternalError())))
    }
    return Effect.failCause(cause as Cause.Cause<ApiError>)
  })

export const ErrorEnvelopeLive = HttpApiBuilder.middleware(Api, rewriteError)
