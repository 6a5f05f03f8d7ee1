/** Notifications and audit actions (docs/rules.md#notifications). */
import { Schema } from "effect"
import { idFromString } from "./Ids"

export const NotificationId = idFromString("NotificationId")
export type NotificationId = typeof NotificationId.Type

export const NotificationType = Schema.Literal(
  "DEPOSIT_CONFIRMED",
  "DEPOSIT_EXPIRED",
  "SECURITY_ALERT",
  "RAFFLE_WON",
  "WITHDRAWAL_REQUESTED",
  "WITHDRAWAL_COMPLETED",
  "WITHDRAWAL_REJECTED",
  "WITHDRAWAL_FAILED",
  "DEPOSIT_REFUNDED",
  "RESPONSIBLE_GAMING"
)
export type NotificationType = typeof NotificationType.Type

export class Notification extends Schema.Class<Notification>("Notification")({
  id: NotificationId,
  type: NotificationType,
  title: Schema.String,
  message: Schema.String,
  read: Schema.Boolean,
  createdAt: Schema.Date
}) {}

/** `GET /notifications`: a page of them, newest first, with how many are unread. */
export const NotificationPage = Schema.Struct({
  notifications: Schema.Array(Notification),
  unreadCount: Schema.Int,
  total: Schema.Int,
  page: Schema.Int
})
export type NotificationPage = typeof NotificationPage.Type

/** Every action the audit trail records (`GET /admin/audit` filters by one of them). */
export const AuditAction = Schema.Literal(
  "2FA_ENABLED",
  "RESPONSIBLE_GAMING_LIMITS",
  "SELF_EXCLUDED",
  "REGISTRY_DELISTED",
  "2FA_DISABLED",
  "2FA_BACKUP_CODE_USED",
  "2FA_LOCKED",
  "SUSPICIOUS_IP_CHANGE",
  "DEVICE_MISMATCH",
  "DEPOSIT_CONFIRMED",
  "ADMIN_CONFIRM_DEPOSIT",
  "USER_BANNED",
  "USER_UNBANNED",
  "ADMIN_ADJUST_BALANCE",
  "WITHDRAWAL_REQUESTED",
  "WITHDRAWAL_CANCELLED",
  "WITHDRAWAL_APPROVED",
  "WITHDRAWAL_REJECTED",
  "WITHDRAWAL_PAYOUT_STARTED",
  "WITHDRAWAL_PAYOUT_FAILED",
  "WITHDRAWAL_PAYOUT_UNCONFIRMED",
  "WITHDRAWAL_PAYOUT_CONFLICT",
  "WITHDRAWAL_FAILED",
  "WITHDRAWAL_EXCLUDED_PAYOUT",
  "DEPOSIT_FAILED",
  "DEPOSIT_EXPIRED",
  "DEPOSIT_PAID_LATE",
  "DEPOSIT_CANCELLED",
  "DEPOSIT_THIRD_PARTY",
  "DEPOSIT_EXCLUDED",
  "DEPOSIT_REFUNDED",
  "BATTLE_SETTLEMENT",
  "RAFFLE_CREATED",
  "RAFFLE_DRAWN",
  "RAFFLE_CANCELLED",
  "CASE_PROMOTIONAL",
  "CASE_OVER_HOUSE_EDGE",
  "ITEM_CREATED",
  "ITEM_UPDATED",
  "SESSION_REVOKED"
)
export type AuditAction = typeof AuditAction.Type
