/** Liveness and readiness probes; public (DECISIONS D11). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import * as HttpError from "./HttpErrors"

export const Readiness = Schema.Struct({
  status: Schema.Literal("ready"),
  checks: Schema.Struct({
    database: Schema.Literal("up"),
    redis: Schema.Literal("up", "in-memory")
  })
})

export class HealthApi extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ok") }))
      .annotate(OpenApi.Summary, "Liveness: the process is serving requests")
  )
  .add(
    HttpApiEndpoint.get("ready", "/ready")
      .addSuccess(Readiness)
      .addError(HttpError.ServiceUnavailable)
      .annotate(OpenApi.Summary, "Readiness: the database and Redis are reachable")
  )
{}
