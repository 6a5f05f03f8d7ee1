/** Users (SPEC User, DECISIONS D2). */
import { Schema } from "effect"
import { UserId } from "./Ids"

export const Role = Schema.Literal("USER", "ADMIN")
export type Role = typeof Role.Type

export class User extends Schema.Class<User>("User")({
  id: UserId,
  idpId: Schema.String,
  username: Schema.String,
  role: Role,
  balanceCents: Schema.BigInt,
  twoFactorEnabled: Schema.Boolean,
  bannedAt: Schema.NullOr(Schema.DateFromSelf),
  banReason: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf
}) {}
