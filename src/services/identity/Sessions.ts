/**
 * Sessions (docs/rules.md#sessions): JSON under `session:<id>` in the key-value
 * store with a time to live of 7 days, and the user's index `user-sessions:<userId>`.
 *
 * Validation slides the session: lastActivity moves to now, expiresAt and the stored time to live to now + 7
 * days, in the same store command as the read (KeyValue.slide), unless the session has expired or the request
 * comes from another device than the one the session is bound to. At most 5 sessions per user: creating a 6th
 * deletes the one idle the longest. Creation holds the user's lock so that parallel sign-ins cannot exceed the limit.
 *
 * Device binding (docs/rules.md#device-binding): a session is bound to the first `X-Device-Id` it sees
 * (at sign-in, or on its first request that sends one; of two racing requests one wins, by a
 * set-if-absent). After that a request with another device id, or with none, is a mismatch, except
 * on event streams (browsers' EventSource cannot send the header). A removed session is announced on
 * `session-ended:<id>` (across instances), so streams opened with it close.
 *
 * A session carries what requests need of its user (SessionAccount: username and role), so validation
 * reads no database row; it reads the user again when that copy is ACCOUNT_RECHECK_MS old. A ban deletes
 * the user's sessions, so it takes effect at once; a ban written to the database by other means (or
 * whose session deletion failed) is seen by the next re-read.
 */
import { Clock, Effect, Option, Schema, type Scope } from "effect"
import { randomBytes } from "node:crypto"
import { Broadcast } from "../../layers/stores/Broadcast"
import { KeyValue, type Slid } from "../../layers/stores/KeyValue"
import { UserLock } from "../../layers/stores/UserLock"
import { NotFound, type ServiceUnavailable, Unauthenticated } from "../../schema/platform/Errors"
import type { UserId } from "../../schema/platform/Ids"
import {
  type ClientInfo,
  DeviceMismatch,
  NotYourSession,
  Session,
  type SessionAccount,
  SessionId
} from "../../schema/identity/Session"
import { AccountBanned, type User } from "../../schema/identity/User"
import { sessionReference } from "../../schema/admin/AdminPlayer"
import { Audit } from "../admin/Audit"
import { regionOf } from "./GeoRegion"
import { Notifications } from "../platform/Notifications"
import { Users } from "./Users"

/** A session as the store's read and slide (`Sessions.slide`) found it, at `now`. */
export interface SessionRead {
  readonly now: number
  readonly stored: Option.Option<Slid>
}

export const SESSION_TTL_SECONDS = 604_800
const MAX_SESSIONS_PER_USER = 5
const SESSION_TTL_MS = SESSION_TTL_SECONDS * 1000
/** How old a session's copy of its user (SessionAccount) may be before a request reads the user again. */
export const ACCOUNT_RECHECK_MS = 30_000

const sessionKey = (id: string) => `session:${id}`
const indexKey = (userId: bigint) => `user-sessions:${userId}`
/** The device a session bound itself to after its creation. */
const deviceKey = (id: string) => `session-device:${id}`
const endedChannel = (id: string) => `session-ended:${id}`
const decode = Schema.decodeUnknownOption(Schema.parseJson(Session))
const encode = (session: Session) => JSON.stringify(Schema.encodeSync(Session)(session))

export class Sessions extends Effect.Service<Sessions>()("app/Sessions", {
  effect: Effect.gen(function*() {
    const kv = yield* KeyValue
    const broadcast = yield* Broadcast
    const lock = yield* UserLock
    const audit = yield* Audit
    const notifications = yield* Notifications
    const users = yield* Users

    const read = (id: string) => Effect.map(kv.get(sessionKey(id)), Option.flatMap(decode))
    const write = (session: Session) => kv.set(sessionKey(session.id), encode(session), SESSION_TTL_MS)
    // The rate limiter asks for a session's owner on every request, before authentication reads the
    // session itself. The owner never changes, so each instance remembers it for a minute: not longer,
    // so that a session revoked through another instance stops counting against its user soon.
    const owners = new Map<string, { readonly userId: UserId; readonly until: number }>()
    const OWNER_KEPT_MS = 60_000
    const OWNERS_KEPT = 10_000

    const remove = (session: { readonly id: string; readonly userId: bigint }) =>
      Effect.all([
        Effect.sync(() => owners.delete(session.id)),
        kv.delete(sessionKey(session.id)),
        kv.delete(deviceKey(session.id)),
        kv.setRemove(indexKey(session.userId), session.id),
        // Confirmed: the session's open streams close on it, so a revocation that could not tell them fails (503).
        broadcast.publishConfirmed({ channel: endedChannel(session.id), message: "ended" })
      ], { discard: true })

    /**
     * The store's part of a validation: the session read and slid in one command (KeyValue.slide) unless it has
     * expired or `deviceId` is not the one it is bound to. Sent when the outer effect runs, answered by the inner
     * one: the rate limiter sends it ahead of `validate`, so that it shares its round trip to the store
     * (src/http/identity/SessionReadAhead.ts).
     */
    const slide = (id: string, deviceId: string | undefined): Effect.Effect<Effect.Effect<SessionRead, ServiceUnavailable>> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.map(
          kv.slide(sessionKey(id), SESSION_TTL_MS, {
            now: new Date(now).toISOString(),
            expiresAt: new Date(now + SESSION_TTL_MS).toISOString(),
            deviceId
          }),
          Effect.map((stored) => ({ now, stored }))
        ))

    /** The owner of a session as this instance remembers it, without a read. */
    const rememberedOwner = (id: string) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const known = owners.get(id)
        return known !== undefined && known.until > now ? Option.some(known.userId) : Option.none()
      })

    /**
     * The owner of a session not remembered (`rememberedOwner`; rate limits count per user): from `slid` (the
     * request's own read, `slide`) when given, else read without refreshing the session; remembered from then on.
     */
    const readOwner = Effect.fnUntraced(function*(id: string, slid?: Effect.Effect<SessionRead, ServiceUnavailable>) {
      const now = yield* Clock.currentTimeMillis
      const session = slid === undefined
        ? yield* read(id)
        : Option.flatMap((yield* slid).stored, ({ value }) => decode(value))
      const owner = Option.map(session, (session) => session.userId)
      if (Option.isSome(owner)) {
        if (owners.size >= OWNERS_KEPT) owners.clear()
        owners.set(id, { userId: owner.value, until: now + OWNER_KEPT_MS })
      } else {
        owners.delete(id)
      }
      return owner
    })

    /** The user's live sessions, newest activity first; ids of sessions that expired leave the index. */
    const ofUser = Effect.fnUntraced(function*(userId: bigint) {
      const now = yield* Clock.currentTimeMillis
      const ids = yield* kv.setMembers(indexKey(userId))
      const sessions: Array<Session> = []
      for (const id of ids) {
        const session = yield* read(id)
        if (Option.isSome(session) && session.value.expiresAt.getTime() > now) sessions.push(session.value)
        else yield* remove({ id, userId })
      }
      return sessions.sort((a, b) => b.lastActivity.getTime() - a.lastActivity.getTime())
    })

    const accountOf = (user: User, now: number): SessionAccount =>
      ({ username: user.username, role: user.role, checkedAt: new Date(now) })

    const banned = () => new AccountBanned()

    /** A new session of the user; a banned user gets none (403 `Account banned`). */
    const create = Effect.fn("Sessions.create")(function*(user: User, client: ClientInfo) {
      if (user.bannedAt !== null) return yield* banned()
      return yield* lock.withLock(
        `sessions:${user.id}`,
        createLocked(user, client)
      )
    })

    /** What `create` runs holding the user's sessions lock: room made, then the new session written. */
    const createLocked = Effect.fnUntraced(function*(user: User, client: ClientInfo) {
      const existing = yield* ofUser(user.id)
      // Oldest lastActivity first out, until there is room for the new one.
      for (const old of existing.slice(MAX_SESSIONS_PER_USER - 1)) yield* remove(old)
      const now = yield* Clock.currentTimeMillis
      const session: Session = {
        id: SessionId.make(randomBytes(16).toString("hex")),
        userId: user.id,
        idpId: user.idpId,
        ip: client.ip,
        userAgent: client.userAgent,
        deviceId: client.deviceId,
        createdAt: new Date(now),
        lastActivity: new Date(now),
        expiresAt: new Date(now + SESSION_TTL_MS),
        account: accountOf(user, now)
      }
      yield* write(session)
      yield* kv.setAdd(indexKey(user.id), session.id)
      return session
    })

    /**
     * docs/rules.md#suspicious-ip-change: a request from another region is audited and the user alerted once
     * per address.
     */
    const checkRegion = Effect.fnUntraced(function*(session: Session, ip: string) {
      if (ip === session.ip) return
      const from = regionOf(session.ip)
      const to = regionOf(ip)
      if (from === undefined || to === undefined || from === to) return
      if (!(yield* kv.setIfAbsent(`ip-alert:${session.id}:${ip}`, "1", SESSION_TTL_MS))) return
      yield* audit.record({
        userId: session.userId,
        action: "SUSPICIOUS_IP_CHANGE",
        entityType: "Session",
        entityId: sessionReference(session.id),
        metadata: { sessionId: sessionReference(session.id), originalIp: session.ip, newIp: ip }
      })
      yield* notifications.notify(session.userId, {
        type: "SECURITY_ALERT",
        title: "New sign-in location",
        message: `Your session was used from ${to} (${ip}); it was created in ${from}. ` +
          "If this was not you, sign out of all sessions."
      })
    })

    /** The session bound to the request's device when it is not bound yet; of racing requests, the first wins. */
    const bindDevice = Effect.fnUntraced(function*(session: Session, deviceId: string) {
      const won = yield* kv.setIfAbsent(deviceKey(session.id), deviceId, SESSION_TTL_MS)
      const bound = won ? deviceId : Option.getOrElse(yield* kv.get(deviceKey(session.id)), () => deviceId)
      return { ...session, deviceId: bound }
    })

    /** The signed-in user's row as it is now: 401 when it is gone, 403 when the user is banned. */
    const currentUser = (userId: UserId) =>
      users.findById(userId).pipe(
        Effect.catchTag("NotFound", () => new Unauthenticated()),
        Effect.filterOrFail((user) => user.bannedAt === null, banned)
      )

    /** The session's copy of its user, read again when ACCOUNT_RECHECK_MS old; 403 when the user is banned. */
    const accountFor = (session: Session, now: number) =>
      session.account !== undefined && now - session.account.checkedAt.getTime() < ACCOUNT_RECHECK_MS
        ? Effect.succeed(session.account)
        : Effect.map(currentUser(session.userId), (user) => accountOf(user, now))

    /**
     * The session of `id`, refreshed, with its copy of its user; or Unauthenticated. A request from another device than the
     * session's, or without one once the session is bound (`stream` requests excepted), is audited
     * and refused (docs/rules.md#device-binding); the session itself is kept. A banned user's session is
     * refused with 403 `Account banned` (see ACCOUNT_RECHECK_MS for when that is known).
     */
    // Untraced: it runs on every request, and the request's own span covers it.
    const validate = Effect.fnUntraced(function*(
      id: string,
      client: ClientInfo,
      options: {
        readonly stream: boolean
        /** This request's `slide` of the session, when started ahead. */
        readonly slid?: Effect.Effect<SessionRead, ServiceUnavailable> | undefined
      } = { stream: false }
    ) {
      const { now, stored } = yield* (options.slid ?? Effect.flatten(slide(id, client.deviceId)))
      const lastActivity = new Date(now)
      const expiresAt = new Date(now + SESSION_TTL_MS)
      const found = Option.flatMap(stored, ({ value }) => decode(value))
      if (Option.isNone(found)) {
        owners.delete(id)
        return yield* new Unauthenticated()
      }
      if (found.value.expiresAt.getTime() <= now) {
        yield* remove(found.value)
        return yield* new Unauthenticated()
      }
      const session = found.value.deviceId === undefined && client.deviceId !== undefined
        ? yield* bindDevice(found.value, client.deviceId)
        : found.value
      const mismatch = session.deviceId !== undefined &&
        (client.deviceId === undefined ? !options.stream : client.deviceId !== session.deviceId)
      if (mismatch) {
        // Not remembered from a request of another device, so that it takes no lock of the user's ahead (RateLimit.ts).
        owners.delete(id)
        yield* audit.record({
          userId: session.userId,
          action: "DEVICE_MISMATCH",
          entityType: "Session",
          entityId: sessionReference(session.id),
          metadata: { expectedDevice: session.deviceId, receivedDevice: client.deviceId ?? null }
        })
        return yield* new DeviceMismatch()
      }
      const account = yield* accountFor(session, now)
      yield* checkRegion(session, client.ip)
      const refreshed: Session = { ...session, lastActivity, expiresAt, account }
      // Written again when the store did not slide it (a stream without the device header) or when more than the
      // times changed (a re-read account, a device bound now); only over the stored session, so that a revocation
      // that raced this request is not undone.
      const slidAsIs = Option.exists(stored, ({ slid }) => slid) && account === found.value.account && session === found.value
      if (!slidAsIs && !(yield* kv.setIfPresent(sessionKey(id), encode(refreshed), SESSION_TTL_MS))) {
        return yield* new Unauthenticated()
      }
      return { session: refreshed, account }
    })

    /**
     * For the scope: calls `onEnded` (synchronous, maybe more than once) when the session is removed (revoked, signed
     * out, its user banned) on any instance, or at once when it is gone already.
     */
    const whenEnded = (id: string) => (onEnded: () => void): Effect.Effect<void, ServiceUnavailable, Scope.Scope> =>
      subscribeEnded(id, onEnded)

    /** `whenEnded` of one session's `onEnded`. */
    const subscribeEnded = Effect.fnUntraced(function*(id: string, onEnded: () => void) {
      yield* broadcast.subscribe(endedChannel(id), onEnded)
      // Subscribed first: a removal from now on is heard, one before is seen here.
      if (Option.isNone(yield* read(id))) onEnded()
    })

    const list = Effect.fn("Sessions.list")(function*(userId: UserId) {
      return yield* ofUser(userId)
    })

    const revoke = Effect.fn("Sessions.revoke")(function*(userId: UserId, id: string) {
      const found = yield* read(id)
      if (Option.isNone(found)) return yield* NotFound.of("Session")
      if (found.value.userId !== userId) return yield* new NotYourSession()
      yield* remove(found.value)
    })

    /** Deletes every session of the user; the number deleted. */
    const revokeAll = Effect.fn("Sessions.revokeAll")(function*(userId: UserId) {
      const sessions = yield* ofUser(userId)
      for (const session of sessions) yield* remove(session)
      return sessions.length
    })

    return { create, slide, validate, rememberedOwner, readOwner, currentUser, list, revoke, revokeAll, whenEnded } as const
  }),
  dependencies: [Audit.Default, Notifications.Default, Users.Default]
}) {}
