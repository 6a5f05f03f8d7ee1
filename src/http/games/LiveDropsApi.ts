/** The live-drop feed (docs/rules.md#live-drops): recent drops, a Server-Sent Events stream, and the admin emit. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DropSource, LiveDrop } from "../../schema/games/Game"
import { ItemId, UserId } from "../../schema/platform/Ids"
import { AdminAuthentication, Authentication } from "../identity/Authentication"
import { documented } from "../platform/OpenApiDocs"
import { STEP_UP, withStepUp } from "../admin/AdminStepUp"

export class LiveDropsApi extends HttpApiGroup.make("liveDrops")
  .annotate(OpenApi.Description, "The live feed of drops: recent drops and a Server-Sent Events stream.")
  .add(
    HttpApiEndpoint.get("recent", "/live-drops/recent")
      .setUrlParams(Schema.Struct({
        limit: Schema.optionalWith(
          Schema.NumberFromString.pipe(
            Schema.int({ message: () => "must be an integer" }),
            Schema.between(1, 50, { message: () => "must be between 1 and 50" })
          ),
          { default: () => 20 }
        )
      }))
      .addSuccess(Schema.Struct({ drops: Schema.Array(LiveDrop) }))
      .pipe(documented("Recent drops", "The latest drops across all users, newest first (`limit`, at most 50)."))
  )
  .add(
    HttpApiEndpoint.get("stream", "/live-drops/stream")
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .pipe(documented("Live drops stream", "Server-Sent Events: every drop as it happens, with a heartbeat for " +
        "proxies; the stream ends as the realtime stream does (`event: closed` at its limits)."))
  )
  .middleware(Authentication)
{}

export class LiveDropsAdminApi extends HttpApiGroup.make("liveDropsAdmin")
  .annotate(OpenApi.Description, "Publishing to the live-drop feed by hand. ADMIN sessions only.")
  .add(
    HttpApiEndpoint.post("emit", "/live-drops/emit")
      .setPayload(Schema.Struct({ userId: UserId, itemId: ItemId, source: DropSource }).annotations({
        parseOptions: { errors: "all" }
      }))
      .addSuccess(LiveDrop)
      .pipe(withStepUp)
      .pipe(documented("Emit a live drop (admin)", "Publishes a drop to the live feed by hand: what every player " +
        "sees as somebody's win, so a step-up action. " + STEP_UP))
  )
  .middleware(AdminAuthentication)
{}
