/** The player's identity and compliance status (docs/rules.md#jurisdiction-br, D22). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ComplianceStatus, IdentityRequest, VerifiedIdentity } from "../../schema/identity/Compliance"
import { ExclusionStatus, LimitsUpdate, LimitsView, SelfExclusionRequest } from "../../schema/identity/ResponsibleGaming"
import * as HttpError from "../platform/HttpErrors"
import { documented } from "../platform/OpenApiDocs"
import { Authentication } from "./Authentication"

export class ComplianceApi extends HttpApiGroup.make("compliance")
  .annotate(OpenApi.Description, "The player's identity (CPF) and compliance status; under JURISDICTION=BR games and money need a verified identity.")
  .add(
    HttpApiEndpoint.post("verifyIdentity", "/users/me/identity").setPayload(IdentityRequest)
      .addSuccess(VerifiedIdentity)
      .addError(Schema.Union(
        HttpError.Underage,
        HttpError.CpfAlreadyRegistered,
        HttpError.IdentityAlreadyVerified,
        HttpError.IdentityRefused,
        HttpError.SelfExcluded
      ))
      .pipe(documented(
        "Verify my identity (CPF, full name, birth date)",
        "Under JURISDICTION=BR: checks the CPF (with or without punctuation) and its holder with the identity " +
          "provider and records the identity, shown with the CPF masked. 400 for an invalid CPF or date, 403 " +
          "UNDERAGE under 18 (on today's date in America/Sao_Paulo), 409 when this account is already verified or " +
          "another holds the CPF, 403 SELF_EXCLUDED when the CPF is in the centralized self-exclusion registry " +
          "(nothing stored), 422 IDENTITY_REFUSED when the provider refuses, 503 when it or the registry is " +
          "unavailable. " +
          "Under NONE: 404."
      ))
  )
  .add(
    HttpApiEndpoint.get("compliance", "/users/me/compliance")
      .addSuccess(ComplianceStatus)
      .pipe(documented(
        "My compliance status",
        "The jurisdiction (JURISDICTION) and the identity: UNVERIFIED, or VERIFIED with the masked CPF, full name " +
          "and birth date; the self-exclusion in force and the limits (as GET /users/me/limits). In every jurisdiction."
      ))
  )
  .add(
    HttpApiEndpoint.get("limits", "/users/me/limits")
      .addSuccess(LimitsView)
      .pipe(documented(
        "My responsible-gaming limits",
        "The loss limits (day, ISO week, month in America/Sao_Paulo) and the daily play time limit in force (null: " +
          "none), what is used of each window (loss = game stakes less item sales and battle refunds, from the " +
          "ledger; play minutes = distinct minutes with a game action today), and raises or removals waiting their " +
          "24 hours."
      ))
  )
  .add(
    HttpApiEndpoint.put("setLimits", "/users/me/limits").setPayload(LimitsUpdate)
      .addSuccess(LimitsView)
      .pipe(documented(
        "Set my limits",
        "Any of dailyLossCents, weeklyLossCents, monthlyLossCents (0 to 1000000000, or null) and dailyPlayMinutes " +
          "(1 to 1440, or null). A lower or new limit applies at once; a higher one or null (removal) applies 24 " +
          "hours later and is listed in `pending` until then; sending the value in force or a lower one cancels a " +
          "pending change. Under JURISDICTION=BR a loss limit and a play limit are needed before the first game " +
          "action (403 LIMITS_REQUIRED)."
      ))
  )
  .add(
    HttpApiEndpoint.post("selfExclude", "/users/me/self-exclusion").setPayload(SelfExclusionRequest)
      .addSuccess(ExclusionStatus)
      .addError(HttpError.ExclusionCannotBeShortened)
      .pipe(documented(
        "Exclude myself",
        "{days} (1 to 3650) or {indefinite: true}: from now, game actions and deposits answer 403 SELF_EXCLUDED " +
          "(withdrawals and reads stay open). It cannot be shortened or lifted, by the player or an administrator: " +
          "an earlier end than the one in force is 409 `Self-exclusion cannot be shortened`; a later one extends it. " +
          "A fixed period ends by itself."
      ))
  )
  .middleware(Authentication)
{}
