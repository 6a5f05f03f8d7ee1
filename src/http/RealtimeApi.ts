/** The signed-in user's realtime stream (D11): Server-Sent Events `balance.updated` and `notification`. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Authentication } from "./Authentication"

export class RealtimeApi extends HttpApiGroup.make("realtime")
  .add(HttpApiEndpoint.get("stream", "/realtime").addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" })))
  .middleware(Authentication)
{}
