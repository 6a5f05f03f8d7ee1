/**
 * The signed-in user's realtime stream (docs/rules.md#realtime): Server-Sent Events `balance.updated` and
 * `notification`.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Authentication } from "../identity/Authentication"
import { documented } from "./OpenApiDocs"

export class RealtimeApi extends HttpApiGroup.make("realtime")
  .annotate(
    OpenApi.Description,
    "The signed-in user's events (balance, notifications, battles) over Server-Sent Events."
  )
  .add(
    HttpApiEndpoint.get("stream", "/realtime").addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .pipe(documented("My realtime events", "Server-Sent Events for the signed-in user (such as balance.updated) as " +
        "they happen, with a heartbeat for proxies; the stream ends when the service shuts down, when its session " +
        "ends, and at its limits (`event: closed`: 5 streams per user, 24 h, 1000 events behind)."))
  )
  .middleware(Authentication)
{}
