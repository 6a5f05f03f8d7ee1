/**
 * One player, for the operator's console (docs/rules.md#player-page): the profile with sessions, and the
 * player's ledger, deposits, withdrawals, openings and audit entries, each paged; ending one of their
 * sessions. ADMIN sessions only; an unknown user is 404 `User not found`.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema, Struct } from "effect"
import {
  AuditEntryView,
  PlayerProfile,
  SessionReference,
  TransactionQuery,
  TransactionView,
  UserAuditQuery
} from "../../schema/admin/AdminPlayer"
import { AdminDepositView, DepositStatus } from "../../schema/money/Deposit"
import { AdminWithdrawalView, WithdrawalStatus } from "../../schema/money/Withdrawal"
import { UserId } from "../../schema/platform/Ids"
import { ListPage, PageQuery, StatusPageQuery } from "../../schema/platform/Pagination"
import { OpeningView } from "../games/OpeningsApi"
import { AdminAuthentication } from "../identity/Authentication"
import { SessionView } from "../identity/AuthApi"
import { documented } from "../platform/OpenApiDocs"
import { AUDIT_ENTRIES } from "./AdminAuditApi"
import { STEP_UP, withStepUp } from "./AdminStepUp"

/** A session as the owner's list shows it, named by its reference instead of its id (which signs in). */
const AdminSessionView = Schema.Struct({
  id: SessionReference,
  ...Struct.omit(SessionView.fields, "id", "isCurrent")
})

const Sessions = Schema.Struct({ sessions: Schema.Array(AdminSessionView) })

const UserPath = Schema.Struct({ id: UserId })

const UNKNOWN = " An unknown user: 404 `User not found`."

export class AdminPlayersApi extends HttpApiGroup.make("adminPlayers")
  .annotate(
    OpenApi.Description,
    "One player for the operator's console: profile, sessions, ledger, deposits, withdrawals, openings and audit " +
      "entries, and ending a session. ADMIN sessions only."
  )
  .add(
    HttpApiEndpoint.get("player", "/admin/users/:id").setPath(UserPath)
      .addSuccess(Schema.Struct({ ...PlayerProfile.fields, sessions: Sessions.fields.sessions }))
      .pipe(documented(
        "Show a player (admin)",
        "The player's profile (balance, 2FA, ban with its reason, last activity), identity as GET " +
          "/users/me/compliance shows it (the CPF masked), responsible gaming (exclusion and limits), how many " +
          "ledger rows, deposits, withdrawals, openings and audit entries they have, and their active sessions, " +
          "most recently active first, each named by a reference (not the session id)." + UNKNOWN
      ))
  )
  .add(
    HttpApiEndpoint.get("transactions", "/admin/users/:id/transactions").setPath(UserPath).setUrlParams(TransactionQuery)
      .addSuccess(ListPage("transactions", TransactionView))
      .pipe(documented(
        "List a player's ledger (admin)",
        "The player's ledger rows, newest first, optionally of one `type`: signed amount, balance after, what " +
          "the row refers to, the reason of an adjustment." + UNKNOWN
      ))
  )
  .add(
    HttpApiEndpoint.get("deposits", "/admin/users/:id/deposits").setPath(UserPath).setUrlParams(StatusPageQuery(DepositStatus))
      .addSuccess(ListPage("deposits", AdminDepositView))
      .pipe(documented("List a player's deposits (admin)", "As GET /admin/deposits, of this player." + UNKNOWN))
  )
  .add(
    HttpApiEndpoint.get("withdrawals", "/admin/users/:id/withdrawals").setPath(UserPath)
      .setUrlParams(StatusPageQuery(WithdrawalStatus))
      .addSuccess(ListPage("withdrawals", AdminWithdrawalView))
      .pipe(documented("List a player's withdrawals (admin)", "As GET /admin/withdrawals, of this player." + UNKNOWN))
  )
  .add(
    HttpApiEndpoint.get("openings", "/admin/users/:id/openings").setPath(UserPath).setUrlParams(PageQuery)
      .addSuccess(ListPage("openings", OpeningView))
      .pipe(documented("List a player's openings (admin)", "As GET /cases/openings shows them to the player." + UNKNOWN))
  )
  .add(
    HttpApiEndpoint.get("audit", "/admin/users/:id/audit").setPath(UserPath).setUrlParams(UserAuditQuery)
      .addSuccess(ListPage("entries", AuditEntryView))
      .pipe(documented(
        "List a player's audit entries (admin)",
        "The audit entries stored under this user, narrowed by `action`, `from` and `to`. " + AUDIT_ENTRIES + UNKNOWN
      ))
  )
  .add(
    HttpApiEndpoint.post("revokeSession", "/admin/users/:id/sessions/:sessionId/revoke")
      .setPath(Schema.Struct({ id: UserId, sessionId: SessionReference }))
      .addSuccess(Sessions)
      .pipe(withStepUp)
      .pipe(documented(
        "End a player's session (admin)",
        "Ends the player's session of this reference (their next request with it: 401) and closes its event " +
          "streams; audit SESSION_REVOKED with the administrator. Answers the player's remaining sessions. No " +
          "such session of this player: 404 `Session not found`." + UNKNOWN + " " + STEP_UP
      ))
  )
  .middleware(AdminAuthentication)
{}
