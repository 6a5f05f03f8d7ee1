/** Sessions (docs/rules.md#sessions): kept in the key-value store, never in the database. */
import { Schema } from "effect"
import { message } from "../platform/Errors"
import { UserId } from "../platform/Ids"
import { Role } from "./User"

/**
 * What requests need to know of a session's user, kept in the session so that a request does not read
 * the user from the database: as read when `checkedAt`, and read again when that is 30 s old.
 */
export const SessionAccount = Schema.Struct({
  username: Schema.String,
  role: Role,
  checkedAt: Schema.Date
})
export type SessionAccount = typeof SessionAccount.Type

/** 32 lowercase hexadecimal characters (16 random bytes). */
export const SessionId = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{32}$/, { message: () => "must be a session id" }),
  Schema.brand("SessionId")
)
export type SessionId = typeof SessionId.Type

/** Plain structs, not classes: a class's constructor validates, and a session is made on every request. */
export const Session = Schema.Struct({
  id: SessionId,
  userId: UserId,
  idpId: Schema.String,
  ip: Schema.String,
  userAgent: Schema.String,
  deviceId: Schema.optional(Schema.String),
  createdAt: Schema.Date,
  lastActivity: Schema.Date,
  expiresAt: Schema.Date,
  /** Absent in sessions stored before it was kept, and then read at their next request. */
  account: Schema.optional(SessionAccount)
})
export type Session = typeof Session.Type

/** What a request says about its client (docs/rules.md#suspicious-ip-change, docs/rules.md#device-binding). */
export interface ClientInfo {
  readonly ip: string
  readonly userAgent: string
  /** The `X-Device-Id` header (docs/rules.md#device-binding). */
  readonly deviceId: string | undefined
}

/** Revoking another user's session (docs/rules.md#session-management) (403). */
export class NotYourSession extends Schema.TaggedError<NotYourSession>()("NotYourSession", message("Not your session")) {}

/**
 * A request from another device than its session is bound to, or without one once it is bound
 * (docs/rules.md#device-binding) (401).
 */
export class DeviceMismatch extends Schema.TaggedError<DeviceMismatch>()("DeviceMismatch", message("Device mismatch")) {}

/**
 * A cookie-authenticated request with an unsafe method that did not come from our own pages
 * (docs/rules.md#cross-site-requests): 403.
 */
export class CrossSiteRequest extends Schema.TaggedError<CrossSiteRequest>()(
  "CrossSiteRequest",
  message("Cross-site request refused")
) {}
