/** Sessions (SPEC Session): kept in the key-value store, never in the database. */
import { Schema } from "effect"
import { UserId } from "./Ids"

/** 32 lowercase hexadecimal characters (16 random bytes). */
export const SessionId = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{32}$/, { message: () => "must be a session id" }),
  Schema.brand("SessionId")
)
export type SessionId = typeof SessionId.Type

export class Session extends Schema.Class<Session>("Session")({
  id: SessionId,
  userId: UserId,
  idpId: Schema.String,
  ip: Schema.String,
  userAgent: Schema.String,
  deviceId: Schema.optional(Schema.String),
  createdAt: Schema.Date,
  lastActivity: Schema.Date,
  expiresAt: Schema.Date
}) {}

/** What a request says about its client (SPEC session rules). */
export interface ClientInfo {
  readonly ip: string
  readonly userAgent: string
  /** The `X-Device-Id` header (D2). */
  readonly deviceId: string | undefined
}
