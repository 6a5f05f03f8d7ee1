/** The audit log (docs/rules.md#audit-log): every entry of the audit trail, paged and filtered. ADMIN sessions only. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { AuditEntryView, AuditQuery } from "../../schema/admin/AdminPlayer"
import { ListPage } from "../../schema/platform/Pagination"
import { AdminAuthentication } from "../identity/Authentication"
import { documented } from "../platform/OpenApiDocs"

/** How an entry names who acted, for the endpoints that list entries. */
export const AUDIT_ENTRIES = "Entries newest first (by createdAt, then id). `actor` is the administrator the entry " +
  "names (id and username), \"system\" for the service's own jobs, or null when the entry names no actor (the " +
  "user's own action). `action` is one of the audit actions (another value: 400); `from` and `to` are ISO 8601 " +
  "dates (UTC midnight) or date-times with a time zone, both inclusive (`from` after `to`: 400). A session id in " +
  "an entry's metadata is shown as the session's reference."

export class AdminAuditApi extends HttpApiGroup.make("adminAudit")
  .annotate(OpenApi.Description, "The audit log: every audited action, paged and filtered. ADMIN sessions only.")
  .add(
    HttpApiEndpoint.get("list", "/admin/audit").setUrlParams(AuditQuery)
      .addSuccess(ListPage("entries", AuditEntryView))
      .pipe(documented(
        "List the audit log (admin)",
        "Every audit entry, paged; `action`, `actorId` (the acting administrator), `userId` (the user the entry " +
          "is stored under), `from` and `to` narrow it. " + AUDIT_ENTRIES
      ))
  )
  .middleware(AdminAuthentication)
{}
