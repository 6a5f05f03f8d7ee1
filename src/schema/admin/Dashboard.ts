/** The dashboard shapes its service shares with its endpoints (docs/rules.md#administration-and-dashboard). */
import { Schema } from "effect"

/** The span of the revenue chart (docs/rules.md#revenue-chart). */
export const ChartPeriod = Schema.Literal("7d", "30d", "90d").annotations({
  message: () => ({ message: "must be one of 7d, 30d, 90d", override: true })
})
export type ChartPeriod = typeof ChartPeriod.Type

/** The zone whose calendar days the figures are of: BUSINESS_TIMEZONE (docs/rules.md#business-timezone). */
export const BusinessTimeZone = Schema.String.annotations({
  description: "The IANA time zone whose calendar days the figures are of (BUSINESS_TIMEZONE; UTC by default): " +
    "\"today\" and \"yesterday\", and each day of the chart, begin at midnight there",
  examples: ["America/Sao_Paulo", "UTC"]
})

/** One condition an operator should look at (docs/rules.md#dashboard-alerts). */
export const Alert = Schema.Struct({
  id: Schema.String,
  level: Schema.Literal("CRITICAL", "WARNING", "INFO"),
  title: Schema.String,
  message: Schema.String
})
export type Alert = typeof Alert.Type
