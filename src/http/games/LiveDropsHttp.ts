/** Handlers of the live-drop feed; the stream is Server-Sent Events. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { LiveDrops } from "../../services/games/LiveDrops"
import { Sessions } from "../../services/identity/Sessions"
import { Api } from "../Api"
import { makeAdminStepUp } from "../admin/AdminStepUp"
import { AdminAuthentication, Authentication, CurrentUser } from "../identity/Authentication"
import { eventStream } from "../platform/EventStream"
import { AppConfig } from "../../layers/AppConfig"
import { Lifecycle } from "../../layers/Lifecycle"
import { Realtime } from "../../services/platform/Realtime"
import { TwoFactor } from "../../services/identity/TwoFactor"
import { buildOnly } from "../platform/RequestContext"

/** A drop as its event (one function for every stream: eventStream shares each drop's bytes between them). */
const dropEvent = (json: string) => `event: drop\ndata: ${json}\n\n`

export const LiveDropsLive = HttpApiBuilder.group(Api, "liveDrops", Effect.fnUntraced(function*(handlers) {
  const drops = yield* LiveDrops
  const sessions = yield* Sessions
  return handlers
    .handle("recent", ({ urlParams }) => Effect.map(drops.recent(urlParams.limit), (list) => ({ drops: list })))
    .handle("stream", () =>
      Effect.flatMap(CurrentUser, ({ session, user }) =>
        eventStream(user.id, drops.subscribe, dropEvent, sessions.whenEnded(session.id))))
})).pipe(buildOnly([Authentication, Realtime, LiveDrops, Sessions, Lifecycle]))

export const LiveDropsAdminLive = HttpApiBuilder.group(Api, "liveDropsAdmin", Effect.fnUntraced(function*(handlers) {
  const drops = yield* LiveDrops
  const stepUp = yield* makeAdminStepUp
  return handlers.handle("emit", ({ headers, payload }) => Effect.zipRight(stepUp(headers), drops.emit(payload)))
})).pipe(buildOnly([AppConfig, AdminAuthentication, TwoFactor, LiveDrops]))
