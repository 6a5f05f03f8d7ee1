/** The live-drop feed (D11): recent drops, a Server-Sent Events stream, and the admin emit. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { DropSource, LiveDrop } from "../schema/Game"
import { ItemId, UserId } from "../schema/Ids"
import { AdminAuthentication, Authentication } from "./Authentication"

export class LiveDropsApi extends HttpApiGroup.make("liveDrops")
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
  )
  .add(
    HttpApiEndpoint.get("stream", "/live-drops/stream")
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
  )
  .middleware(Authentication)
{}

export class LiveDropsAdminApi extends HttpApiGroup.make("liveDropsAdmin")
  .add(
    HttpApiEndpoint.post("emit", "/live-drops/emit")
      .setPayload(Schema.Struct({ userId: UserId, itemId: ItemId, source: DropSource }).annotations({
        parseOptions: { errors: "all" }
      }))
      .addSuccess(LiveDrop)
  )
  .middleware(AdminAuthentication)
{}
