/** Handlers of the administration dashboard. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Dashboard } from "../../services/admin/Dashboard"
import { Api } from "../Api"
import { AdminAuthentication } from "../identity/Authentication"
import { buildOnly } from "../platform/RequestContext"

export const AdminDashboardLive = HttpApiBuilder.group(Api, "adminDashboard", Effect.fnUntraced(function*(handlers) {
  const dashboard = yield* Dashboard
  return handlers
    .handle("stats", () => dashboard.stats())
    .handle("revenueChart", ({ urlParams }) => dashboard.revenueChart(urlParams.period))
    .handle("recentActivity", ({ urlParams }) => dashboard.recentActivity(urlParams.limit))
    .handle("alerts", () => dashboard.alerts())
})).pipe(buildOnly([AdminAuthentication, Dashboard]))
