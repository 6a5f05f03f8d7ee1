/**
 * The service's periodic jobs, each a fiber for the service's lifetime that runs at start and then
 * every interval. Every instance runs them; each job is safe with several instances (see the service
 * functions they call). A failed run is logged, and the next one runs on schedule. Every run is counted
 * by job and outcome (metric background_job_runs). At shutdown a job
 * stops between runs: a run in progress is finished first.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { jobRun } from "../layers/AppMetrics"
import { Dashboard } from "./admin/Dashboard"
import { Deposits } from "./money/Deposits"
import { ResponsibleGaming } from "./identity/ResponsibleGaming"
import { Idempotency } from "./platform/Idempotency"
import { Raffles } from "./raffles/Raffles"

const every = <R>(interval: Duration.DurationInput, name: string, run: Effect.Effect<unknown, unknown, R>) =>
  Layer.scopedDiscard(
    Effect.forkScoped(
      run.pipe(
        Effect.zipRight(jobRun(name, "ok")),
        Effect.catchAllCause((cause) => Effect.zipRight(jobRun(name, "failed"), Effect.logError(`${name} failed`, cause))),
        Effect.uninterruptible,
        Effect.repeat(Schedule.spaced(interval))
      )
    )
  )

/**
 * Every minute: unpaid deposits past their expiry are expired (docs/rules.md#deposit-expiry), and the refunds of
 * REFUND_PENDING deposits are asked of the gateway again (docs/rules.md#deposit-refund-retry).
 */
export const DepositExpiryJob = every(
  Duration.minutes(1),
  "Deposit expiry",
  Effect.flatMap(Deposits, (deposits) =>
    Effect.zipRight(
      Effect.tap(deposits.expireDue(), (count) => count > 0 ? Effect.logInfo(`Deposit expiry: ${count} expired`) : Effect.void),
      Effect.tap(deposits.retryRefunds(), (count) => count > 0 ? Effect.logInfo(`Deposit refunds: ${count} refunded`) : Effect.void)
    ))
)

/** Raffles are drawn (or cancelled) once they reach endsAt (docs/rules.md#raffle-draw). */
export const RaffleDrawJob = every(
  Duration.seconds(15),
  "Raffle draw",
  Effect.flatMap(Raffles, (raffles) =>
    Effect.tap(raffles.drawDue(), (count) => count > 0 ? Effect.logInfo(`Raffle draw: ${count} closed`) : Effect.void))
)

/** Idempotency keys are answered for 24 hours, then forgotten. */
export const IdempotencyCleanupJob = every(
  Duration.hours(1),
  "Idempotency cleanup",
  Effect.flatMap(Idempotency, (idempotency) => idempotency.forgetExpired())
)

/** The dashboard chart's settled days, computed ahead of requests (see `Dashboard.warmCache`). */
export const DashboardCacheJob = every(
  Duration.hours(1),
  "Dashboard cache",
  Effect.flatMap(Dashboard, (dashboard) => dashboard.warmCache())
)

/**
 * Every hour under JURISDICTION=BR: the verified players not looked up in the self-exclusion registry for 15 days,
 * up to 500 a run (docs/responsible-gaming.md#registry). Instances may look the same player up twice; that is harmless.
 */
export const ExclusionRegistryJob = every(
  Duration.hours(1),
  "Exclusion registry",
  Effect.flatMap(ResponsibleGaming, (responsibleGaming) =>
    Effect.tap(
      responsibleGaming.recheckRegistry(),
      (count) => count > 0 ? Effect.logInfo(`Exclusion registry: ${count} players looked up`) : Effect.void
    ))
)
