/**
 * Responsible gaming (docs/responsible-gaming.md, D23): the limits a player sets on money lost and time played,
 * self-exclusion, and the refusals of a game action they bring.
 */
import { Schema } from "effect"
import { message } from "../platform/Errors"

/** The four limits, as named on the wire. */
export const LimitField = Schema.Literal("dailyLossCents", "weeklyLossCents", "monthlyLossCents", "dailyPlayMinutes")
export type LimitField = typeof LimitField.Type

/** The largest loss limit: R$ 10,000,000.00 (anything above is no limit at all). */
export const MAX_LOSS_LIMIT_CENTS = 1_000_000_000n

const LossLimit = Schema.NullOr(
  Schema.BigIntFromNumber.annotations({ message: () => ({ message: "must be an integer number of cents or null", override: true }) })
    .pipe(Schema.filter((cents) =>
      cents >= 0n && cents <= MAX_LOSS_LIMIT_CENTS ? true : `must be between 0 and ${MAX_LOSS_LIMIT_CENTS} cents, or null`
    ))
)

const PlayLimit = Schema.NullOr(
  Schema.Int.annotations({ message: () => ({ message: "must be a whole number of minutes or null", override: true }) })
    .pipe(Schema.between(1, 1440, { message: () => "must be between 1 and 1440 minutes, or null" }))
)

/** The limits in force; `null`: none. */
export const Limits = Schema.Struct({
  dailyLossCents: Schema.NullOr(Schema.BigIntFromNumber),
  weeklyLossCents: Schema.NullOr(Schema.BigIntFromNumber),
  monthlyLossCents: Schema.NullOr(Schema.BigIntFromNumber),
  dailyPlayMinutes: Schema.NullOr(Schema.Int)
})
export type Limits = typeof Limits.Type

/** `PUT /users/me/limits`: any of the four; a lower or new limit applies at once, a higher one or `null` in 24 h. */
export const LimitsUpdate = Schema.Struct({
  dailyLossCents: Schema.optional(LossLimit),
  weeklyLossCents: Schema.optional(LossLimit),
  monthlyLossCents: Schema.optional(LossLimit),
  dailyPlayMinutes: Schema.optional(PlayLimit)
}).annotations({
  parseOptions: { errors: "all", onExcessProperty: "error" },
  message: () => "must be an object with any of dailyLossCents, weeklyLossCents, monthlyLossCents, dailyPlayMinutes"
})
export type LimitsUpdate = typeof LimitsUpdate.Type

/** What the player has used of each window (loss: game debits less item sales and refunds, from the ledger). */
export const LimitsUsage = Schema.Struct({
  lossTodayCents: Schema.BigIntFromNumber,
  lossWeekCents: Schema.BigIntFromNumber,
  lossMonthCents: Schema.BigIntFromNumber,
  playMinutesToday: Schema.Int
})

/** A raise or removal waiting its 24 hours; `value: null` removes the limit. */
export const PendingLimit = Schema.Struct({
  field: LimitField,
  value: Schema.NullOr(Schema.Number),
  effectiveAt: Schema.Date
})
export type PendingLimit = typeof PendingLimit.Type

/** `GET /users/me/limits`. */
export const LimitsView = Schema.extend(
  Limits,
  Schema.Struct({ usage: LimitsUsage, pending: Schema.Array(PendingLimit) })
)
export type LimitsView = typeof LimitsView.Type

/** `POST /users/me/self-exclusion`: a number of days, or for ever. */
export const SelfExclusionRequest = Schema.Union(
  Schema.Struct({
    days: Schema.Int.annotations({ message: () => ({ message: "must be a whole number of days", override: true }) })
      .pipe(Schema.between(1, 3650, { message: () => "must be between 1 and 3650" }))
  }),
  Schema.Struct({ indefinite: Schema.Literal(true) })
).annotations({
  // Exactly one of the two: `{days, indefinite}` is refused rather than read as either (it cannot be undone).
  parseOptions: { errors: "all", onExcessProperty: "error" },
  message: () => ({ message: "must be {days: 1..3650} or {indefinite: true}", override: true })
})
export type SelfExclusionRequest = typeof SelfExclusionRequest.Type

/** Whether the player is excluded now, since when and until when (`until: null` while excluded: indefinitely). */
export const ExclusionStatus = Schema.Struct({
  excluded: Schema.Boolean,
  since: Schema.NullOr(Schema.Date),
  until: Schema.NullOr(Schema.Date),
  /** Listed in the centralized self-exclusion registry (under JURISDICTION=BR): excluded while listed. */
  registryListed: Schema.Boolean
})
export type ExclusionStatus = typeof ExclusionStatus.Type

/** A game action that would take a window's loss over its limit (403 `LOSS_LIMIT_REACHED`); nothing moved. */
export class LossLimitReached extends Schema.TaggedError<LossLimitReached>()("LossLimitReached", {
  ...message("This would take your losses over the limit you set"),
  resetsAt: Schema.Date
}) {}

/** A game action in a new minute of a day whose play minutes are used up (403 `PLAY_TIME_LIMIT_REACHED`). */
export class PlayTimeLimitReached extends Schema.TaggedError<PlayTimeLimitReached>()("PlayTimeLimitReached", {
  ...message("You have reached the daily play time you set"),
  resetsAt: Schema.Date
}) {}

/** A game action or a deposit by an excluded player (403 `SELF_EXCLUDED`); `until: null` is indefinite. */
export class SelfExcluded extends Schema.TaggedError<SelfExcluded>()("SelfExcluded", {
  ...message("You are self-excluded: playing and deposits are closed"),
  until: Schema.NullOr(Schema.Date)
}) {}

/** Under JURISDICTION=BR, a game action before a loss limit and a daily play limit are set (403 `LIMITS_REQUIRED`). */
export class LimitsRequired extends Schema.TaggedError<LimitsRequired>()(
  "LimitsRequired",
  message("Set a daily, weekly or monthly loss limit and a daily play time limit (PUT /api/users/me/limits) before playing")
) {}

/** A self-exclusion asked to end earlier than the one in force (409). */
export class ExclusionCannotBeShortened extends Schema.TaggedError<ExclusionCannotBeShortened>()(
  "ExclusionCannotBeShortened",
  message("Self-exclusion cannot be shortened")
) {}

/** What stops a game action, when something does. */
export type PlayRefusal = LossLimitReached | PlayTimeLimitReached | SelfExcluded | LimitsRequired

const PLAY_REFUSALS: ReadonlySet<string> = new Set(["LossLimitReached", "PlayTimeLimitReached", "SelfExcluded", "LimitsRequired"])
export const isPlayRefusal = (error: { readonly _tag: string }): error is PlayRefusal => PLAY_REFUSALS.has(error._tag)
