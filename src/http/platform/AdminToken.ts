/**
 * `Authorization: Bearer <ADMIN_TOKEN>` for the webhook registration endpoints
 * (docs/rules.md#webhook-registration), compared in constant time.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Effect, Layer, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { AppConfig } from "../../layers/AppConfig"
import { Unauthenticated } from "../../schema/platform/Errors"
import * as HttpError from "./HttpErrors"

export class AdminToken extends HttpApiMiddleware.Tag<AdminToken>()("app/AdminToken", {
  failure: HttpError.Unauthenticated,
  security: { adminToken: HttpApiSecurity.bearer }
}) {}

/** Equal-length digests, so the comparison time says nothing about the token. */
const sameSecret = (given: string, expected: string) =>
  timingSafeEqual(createHash("sha256").update(given).digest(), createHash("sha256").update(expected).digest())

export const AdminTokenLive = Layer.effect(
  AdminToken,
  Effect.map(AppConfig, (config) =>
    AdminToken.of({
      adminToken: (token) =>
        sameSecret(Redacted.value(token), Redacted.value(config.secrets.adminToken)) && Redacted.value(token) !== ""
          ? Effect.void
          : Effect.fail(new Unauthenticated())
    }))
)
