/** The realtime stream: each `{event, data}` message of the user's channel as one Server-Sent Event. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Realtime } from "../../services/platform/Realtime"
import { Sessions } from "../../services/identity/Sessions"
import { Api } from "../Api"
import { Authentication, CurrentUser } from "../identity/Authentication"
import { eventStream } from "./EventStream"
import { Lifecycle } from "../../layers/Lifecycle"
import { buildOnly } from "./RequestContext"

const toEvent = (message: string) => {
  const { data, event } = JSON.parse(message) as { event: string; data: unknown }
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}

export const RealtimeLive = HttpApiBuilder.group(Api, "realtime", Effect.fnUntraced(function*(handlers) {
  const realtime = yield* Realtime
  const sessions = yield* Sessions
  return handlers.handle("stream", () =>
    Effect.flatMap(CurrentUser, ({ session, user }) =>
      eventStream(user.id, realtime.subscribe(user.id), toEvent, sessions.whenEnded(session.id))))
})).pipe(buildOnly([Authentication, Realtime, Sessions, Lifecycle]))
