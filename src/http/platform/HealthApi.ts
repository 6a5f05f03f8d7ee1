/** Liveness and readiness probes; public (docs/rules.md#readiness). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import * as HttpError from "./HttpErrors"
import { documented } from "./OpenApiDocs"

/**
 * The jurisdiction whose rules apply (docs/rules.md#jurisdiction): shown only when one is set (BR), so that
 * under NONE both probes answer exactly as before.
 */
const jurisdiction = {
  jurisdiction: Schema.optional(Schema.Literal("BR")).annotations({
    description: "The jurisdiction whose rules apply (JURISDICTION); absent under NONE"
  })
}

const Readiness = Schema.Struct({
  status: Schema.Literal("ready"),
  checks: Schema.Struct({
    database: Schema.Literal("up"),
    redis: Schema.Literal("up", "in-memory")
  }),
  ...jurisdiction
})

export class HealthApi extends HttpApiGroup.make("health")
  .annotate(OpenApi.Description, "Liveness and readiness probes for load balancers and orchestrators; public.")
  .add(
    HttpApiEndpoint.get("health", "/health").addSuccess(Schema.Struct({ status: Schema.Literal("ok"), ...jurisdiction }))
      .pipe(documented("Liveness: the process is serving requests", "Answers 200 while the process serves requests; " +
        "checks no dependency. For a load balancer's liveness probe."))
  )
  .add(
    HttpApiEndpoint.get("ready", "/ready").addSuccess(Readiness)
      .addError(HttpError.ServiceUnavailable)
      .pipe(documented("Readiness: the database and Redis are reachable", "200 when PostgreSQL and Redis (or the " +
        "in-memory stores) answer; 503 when one does not, and from the moment shutdown begins, so a load balancer " +
        "stops sending traffic."))
  )
{}
