/** Handlers of the audit log (docs/rules.md#audit-log). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { AuditLog } from "../../services/admin/AuditLog"
import { Api } from "../Api"
import { AdminAuthentication } from "../identity/Authentication"
import { buildOnly } from "../platform/RequestContext"

export const AdminAuditLive = HttpApiBuilder.group(Api, "adminAudit", Effect.fnUntraced(function*(handlers) {
  const auditLog = yield* AuditLog
  return handlers.handle("list", ({ urlParams }) => auditLog.list(urlParams))
})).pipe(buildOnly([AdminAuthentication, AuditLog]))
