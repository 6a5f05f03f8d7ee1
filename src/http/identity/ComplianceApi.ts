/** The player's identity and compliance status (docs/rules.md#jurisdiction-br, D22). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ComplianceStatus, IdentityRequest, VerifiedIdentity } from "../../schema/identity/Compliance"
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
        HttpError.IdentityRefused
      ))
      .pipe(documented(
        "Verify my identity (CPF, full name, birth date)",
        "Under JURISDICTION=BR: checks the CPF (with or without punctuation) and its holder with the identity " +
          "provider and records the identity, shown with the CPF masked. 400 for an invalid CPF or date, 403 " +
          "UNDERAGE under 18 (on today's date in America/Sao_Paulo), 409 when this account is already verified or " +
          "another holds the CPF, 422 IDENTITY_REFUSED when the provider refuses, 503 when it is unavailable. " +
          "Under NONE: 404."
      ))
  )
  .add(
    HttpApiEndpoint.get("compliance", "/users/me/compliance")
      .addSuccess(ComplianceStatus)
      .pipe(documented(
        "My compliance status",
        "The jurisdiction (JURISDICTION) and the identity: UNVERIFIED, or VERIFIED with the masked CPF, full name " +
          "and birth date. In every jurisdiction."
      ))
  )
  .middleware(Authentication)
{}
