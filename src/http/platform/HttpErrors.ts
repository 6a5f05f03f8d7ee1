/**
 * HTTP forms of the domain errors (docs/rules.md#error-body): each encodes to exactly `{statusCode, message}`
 * (plus `errors[]` for validation) with its status, so the OpenAPI document shows the real bodies.
 * Endpoints list the ones they can fail with: `.addError(HttpError.NotFound)`.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import * as Battle from "../../schema/battles/Battle"
import * as Catalog from "../../schema/games/Catalog"
import * as Fairness from "../../schema/games/Fairness"
import * as Compliance from "../../schema/identity/Compliance"
import * as ResponsibleGaming from "../../schema/identity/ResponsibleGaming"
import * as Identity from "../../schema/identity/Identity"
import * as Session from "../../schema/identity/Session"
import * as TwoFactor from "../../schema/identity/TwoFactor"
import * as User from "../../schema/identity/User"
import * as Deposit from "../../schema/money/Deposit"
import * as Withdrawal from "../../schema/money/Withdrawal"
import * as Game from "../../schema/games/Game"
import * as Inventory from "../../schema/games/Inventory"
import * as Upgrade from "../../schema/games/Upgrade"
import * as Money from "../../schema/money/Money"
import * as Errors from "../../schema/platform/Errors"
import * as Raffle from "../../schema/raffles/Raffle"

const FieldErrors = Schema.Array(Schema.Struct({ field: Schema.String, message: Schema.String }))

/** `{statusCode, message}` with the given status, decoding back to the domain error. */
const withStatus = <A extends { readonly message: string }, I>(
  error: Schema.Schema<A, I>,
  make: (message: string) => A,
  status: number
) =>
  Schema.transform(
    Schema.Struct({ statusCode: Schema.Literal(status), message: Schema.String }),
    Schema.typeSchema(error),
    { strict: true, decode: ({ message }) => make(message), encode: (e) => ({ statusCode: status, message: e.message }) }
  ).annotations(HttpApiSchema.annotations({ status }))

/** `{statusCode, message, errors: [{field, message}]}` with the given status. */
const withFieldErrors = <A extends { readonly message: string; readonly errors: ReadonlyArray<Errors.FieldError> }, I>(
  error: Schema.Schema<A, I>,
  make: (message: string, errors: ReadonlyArray<Errors.FieldError>) => A,
  status: number
) =>
  Schema.transform(
    Schema.Struct({ statusCode: Schema.Literal(status), message: Schema.String, errors: FieldErrors }),
    Schema.typeSchema(error),
    {
      strict: true,
      decode: ({ errors, message }) => make(message, errors.map((e) => new Errors.FieldError(e))),
      encode: (e) => ({ statusCode: status, message: e.message, errors: e.errors.map(({ field, message }) => ({ field, message })) })
    }
  ).annotations(HttpApiSchema.annotations({ status }))

export const Unauthenticated = withStatus(Errors.Unauthenticated, (message) => new Errors.Unauthenticated({ message }), 401)
export const Forbidden = withStatus(Errors.Forbidden, (message) => new Errors.Forbidden({ message }), 403)
export const NotFound = withStatus(Errors.NotFound, (message) => new Errors.NotFound({ message }), 404)
export const MalformedBody = withStatus(Errors.MalformedBody, (message) => new Errors.MalformedBody({ message }), 400)
export const InsufficientBalance = withStatus(
  Errors.InsufficientBalance,
  (message) => new Errors.InsufficientBalance({ message }),
  400
)
export const OperationInProgress = withStatus(
  Errors.OperationInProgress,
  (message) => new Errors.OperationInProgress({ message }),
  409
)
export const RateLimited = withStatus(Errors.RateLimited, (message) => new Errors.RateLimited({ message }), 429)
export const PayloadTooLarge = withStatus(Errors.PayloadTooLarge, (message) => new Errors.PayloadTooLarge({ message }), 413)
export const UnsupportedMediaType = withStatus(
  Errors.UnsupportedMediaType,
  (message) => new Errors.UnsupportedMediaType({ message }),
  415
)
export const ServiceUnavailable = withStatus(
  Errors.ServiceUnavailable,
  (message) => new Errors.ServiceUnavailable({ message }),
  503
)
export const PleaseRetry = withStatus(Errors.PleaseRetry, (message) => new Errors.PleaseRetry({ message }), 409)
export const IdempotencyKeyReused = withStatus(
  Errors.IdempotencyKeyReused,
  (message) => new Errors.IdempotencyKeyReused({ message }),
  422
)
export const Internal = withStatus(Errors.InternalError, (message) => new Errors.InternalError({ message }), 500)
export const Validation = withFieldErrors(
  Errors.ValidationError,
  (message, errors) => new Errors.ValidationError({ message, errors }),
  400
)
/**
 * InvalidRoll is 500 `Invalid roll`; validation makes it impossible for a saved case
 * (docs/rules.md#case-validation).
 */
export const InvalidRoll = withStatus(Game.InvalidRoll, (message) => new Game.InvalidRoll({ message, roll: 0 }), 500)
export const CaseNotFound = withStatus(Catalog.CaseNotFound, (message) => new Catalog.CaseNotFound({ message }), 404)
/** docs/rules.md#two-factor-required-error: exactly `{statusCode: 400, error: "2FA_REQUIRED", message}`. */
export const TwoFactorRequired = Schema.transform(
  Schema.Struct({ statusCode: Schema.Literal(400), error: Schema.Literal("2FA_REQUIRED"), message: Schema.String }),
  Schema.typeSchema(TwoFactor.TwoFactorRequired),
  {
    strict: true,
    decode: ({ message }) => new TwoFactor.TwoFactorRequired({ message }),
    encode: (e) => ({ statusCode: 400 as const, error: "2FA_REQUIRED" as const, message: e.message })
  }
).annotations(HttpApiSchema.annotations({ status: 400 }))
/**
 * docs/rules.md#two-factor-reauthentication: exactly `{statusCode: 403, error: "REAUTHENTICATION_REQUIRED", message}`,
 * a code a client can act on (send the user through sign-in again), like 2FA_REQUIRED.
 */
export const ReauthenticationRequired = Schema.transform(
  Schema.Struct({
    statusCode: Schema.Literal(403),
    error: Schema.Literal("REAUTHENTICATION_REQUIRED"),
    message: Schema.String
  }),
  Schema.typeSchema(TwoFactor.ReauthenticationRequired),
  {
    strict: true,
    decode: ({ message }) => new TwoFactor.ReauthenticationRequired({ message }),
    encode: (e) => ({ statusCode: 403 as const, error: "REAUTHENTICATION_REQUIRED" as const, message: e.message })
  }
).annotations(HttpApiSchema.annotations({ status: 403 }))
/** The gateway failed a payout (502 Bad Gateway): the upstream failed, not the request. */
export const PayoutFailed = withStatus(Withdrawal.PayoutFailed, (message) => new Withdrawal.PayoutFailed({ message }), 502)
/**
 * Upgrade and inventory errors, all 400 (docs/rules.md#domain-errors); ItemNotAvailable keeps its message
 * (`Item not available` for sales).
 */
export const ItemNotAvailable = withStatus(Inventory.ItemNotAvailable, (message) => new Inventory.ItemNotAvailable({ message }), 400)
export const ItemNotUpgradable = withStatus(Upgrade.ItemNotUpgradable, (message) => new Upgrade.ItemNotUpgradable({ message }), 400)
export const InvalidUpgrade = withStatus(Upgrade.InvalidUpgrade, (message) => new Upgrade.InvalidUpgrade({ message }), 400)
export const MultiplierTooHigh = withStatus(Upgrade.MultiplierTooHigh, (message) => new Upgrade.MultiplierTooHigh({ message }), 400)
export const ProbabilityTooLow = withStatus(Upgrade.ProbabilityTooLow, (message) => new Upgrade.ProbabilityTooLow({ message }), 400)
export const GatewayUnavailable = withStatus(Money.GatewayUnavailable, (message) => new Money.GatewayUnavailable({ message }), 502)
export const InvalidWebhookSignature = withStatus(
  Deposit.InvalidWebhookSignature,
  (message) => new Deposit.InvalidWebhookSignature({ message }),
  401
)
export const InvalidWebhookTimestamp = withStatus(
  Deposit.InvalidWebhookTimestamp,
  (message) => new Deposit.InvalidWebhookTimestamp({ message }),
  401
)
export const AddressNotAllowed = withStatus(Deposit.AddressNotAllowed, (message) => new Deposit.AddressNotAllowed({ message }), 403)

/**
 * Sign-in and two-factor (docs/rules.md#sign-in, docs/rules.md#two-factor-authentication), all 400 but the
 * administrators' step-up without 2FA (403, docs/rules.md#admin-step-up).
 */
export const InvalidLoginCallback = withStatus(
  Identity.InvalidLoginCallback,
  (message) => new Identity.InvalidLoginCallback({ message }),
  400
)
export const TwoFactorAlreadyEnabled = withStatus(
  TwoFactor.TwoFactorAlreadyEnabled,
  (message) => new TwoFactor.TwoFactorAlreadyEnabled({ message }),
  400
)
export const TwoFactorNotEnabled = withStatus(
  TwoFactor.TwoFactorNotEnabled,
  (message) => new TwoFactor.TwoFactorNotEnabled({ message }),
  400
)
export const TwoFactorSetupExpired = withStatus(
  TwoFactor.TwoFactorSetupExpired,
  (message) => new TwoFactor.TwoFactorSetupExpired({ message }),
  400
)
export const InvalidTwoFactorCode = withStatus(
  TwoFactor.InvalidTwoFactorCode,
  (message) => new TwoFactor.InvalidTwoFactorCode({ message }),
  400
)
export const AdminTwoFactorNotEnabled = withStatus(
  TwoFactor.AdminTwoFactorNotEnabled,
  (message) => new TwoFactor.AdminTwoFactorNotEnabled({ message }),
  403
)
export const CannotBanSelf = withStatus(User.CannotBanSelf, (message) => new User.CannotBanSelf({ message }), 400)

/** Sessions (docs/rules.md#bans, docs/rules.md#session-management, docs/rules.md#device-binding). */
export const AccountBanned = withStatus(User.AccountBanned, (message) => new User.AccountBanned({ message }), 403)
export const NotYourSession = withStatus(Session.NotYourSession, (message) => new Session.NotYourSession({ message }), 403)
export const DeviceMismatch = withStatus(Session.DeviceMismatch, (message) => new Session.DeviceMismatch({ message }), 401)
export const CrossSiteRequest = withStatus(Session.CrossSiteRequest, (message) => new Session.CrossSiteRequest({ message }), 403)

export const InvalidClientSeed = withStatus(Fairness.InvalidClientSeed, (message) => new Fairness.InvalidClientSeed({ message }), 400)
export const SlugTaken = withStatus(Catalog.SlugTaken, (message) => new Catalog.SlugTaken({ message }), 409)
export const InvalidCaseItems = withFieldErrors(
  Catalog.InvalidCaseItems,
  (message, errors) => new Catalog.InvalidCaseItems({ message, errors }),
  422
)
export const OverHouseEdge = withFieldErrors(
  Catalog.OverHouseEdge,
  (message, errors) => new Catalog.OverHouseEdge({ message, errors }),
  422
)

/** Battles (docs/rules.md#battle-joining, docs/rules.md#battle-settlement). */
export const BattleNotOpen = withStatus(Battle.BattleNotOpen, (message) => new Battle.BattleNotOpen({ message }), 409)
export const AlreadyJoined = withStatus(Battle.AlreadyJoined, (message) => new Battle.AlreadyJoined({ message }), 409)
export const NotInBattle = withStatus(Battle.NotInBattle, (message) => new Battle.NotInBattle({ message }), 400)
export const BattleNotFinished = withStatus(Battle.BattleNotFinished, (message) => new Battle.BattleNotFinished({ message }), 409)

/** Raffles (docs/rules.md#raffle-creation, docs/rules.md#raffle-tickets). */
export const RaffleNotOpen = withStatus(Raffle.RaffleNotOpen, (message) => new Raffle.RaffleNotOpen({ message }), 409)
export const RaffleEndNotInFuture = withStatus(
  Raffle.RaffleEndNotInFuture,
  (message) => new Raffle.RaffleEndNotInFuture({ message }),
  400
)
export const NotEnoughTickets = withStatus(Raffle.NotEnoughTickets, (message) => new Raffle.NotEnoughTickets({ message }), 409)

/** Deposits and withdrawals (docs/rules.md#deposits, docs/rules.md#withdrawals). */
export const DepositNotPending = withStatus(Deposit.DepositNotPending, (message) => new Deposit.DepositNotPending({ message }), 400)
export const PaymentMethodNotAllowed = withStatus(
  Deposit.PaymentMethodNotAllowed,
  (message) => new Deposit.PaymentMethodNotAllowed({ message }),
  422
)
export const ChargeCancelled = withStatus(Deposit.ChargeCancelled, (message) => new Deposit.ChargeCancelled({ message }), 400)
export const SandboxNotInUse = withStatus(Deposit.SandboxNotInUse, (message) => new Deposit.SandboxNotInUse({ message }), 404)
export const WithdrawalNotPending = withStatus(
  Withdrawal.WithdrawalNotPending,
  (message) => new Withdrawal.WithdrawalNotPending({ message }),
  400
)
export const WithdrawalPayoutInProgress = withStatus(
  Withdrawal.WithdrawalPayoutInProgress,
  (message) => new Withdrawal.WithdrawalPayoutInProgress({ message }),
  409
)
export const WithdrawalBeingProcessed = withStatus(
  Withdrawal.WithdrawalBeingProcessed,
  (message) => new Withdrawal.WithdrawalBeingProcessed({ message }),
  409
)
export const WithdrawalNotProcessing = withStatus(
  Withdrawal.WithdrawalNotProcessing,
  (message) => new Withdrawal.WithdrawalNotProcessing({ message }),
  400
)

/**
 * `{statusCode, error, message}`: an error with a code a client can act on, like 2FA_REQUIRED
 * (docs/rules.md#jurisdiction-br).
 */
const withCode = <A extends { readonly message: string }, I, S extends number, C extends string>(
  error: Schema.Schema<A, I>,
  make: (message: string) => A,
  status: S,
  code: C
) =>
  Schema.transform(
    Schema.Struct({ statusCode: Schema.Literal(status), error: Schema.Literal(code), message: Schema.String }),
    Schema.typeSchema(error),
    {
      strict: true,
      decode: ({ message }) => make(message),
      encode: (e) => ({ statusCode: status, error: code, message: e.message })
    }
  ).annotations(HttpApiSchema.annotations({ status }))

// Identity (docs/rules.md#identity-verification, docs/rules.md#identity-required)
export const Underage = withCode(Compliance.Underage, (message) => new Compliance.Underage({ message }), 403, "UNDERAGE")
export const IdentityRefused = withCode(
  Compliance.IdentityRefused,
  (message) => new Compliance.IdentityRefused({ message }),
  422,
  "IDENTITY_REFUSED"
)
export const IdentityRequired = withCode(
  Compliance.IdentityRequired,
  (message) => new Compliance.IdentityRequired({ message }),
  403,
  "IDENTITY_REQUIRED"
)
/** docs/rules.md#pix-key-owner: a withdrawal under BR to a PIX key the account holder does not own. */
export const KeyNotOwned = withCode(
  Withdrawal.KeyNotOwned,
  (message) => new Withdrawal.KeyNotOwned({ message }),
  422,
  "KEY_NOT_OWNED"
)
export const CpfAlreadyRegistered = withStatus(
  Compliance.CpfAlreadyRegistered,
  (message) => new Compliance.CpfAlreadyRegistered({ message }),
  409
)
export const IdentityAlreadyVerified = withStatus(
  Compliance.IdentityAlreadyVerified,
  (message) => new Compliance.IdentityAlreadyVerified({ message }),
  409
)

// Responsible gaming (docs/responsible-gaming.md#refusals): codes a client can act on, with when playing is possible again.
/** `{statusCode: 403, error, message, resetsAt}`. */
const withReset = <A extends { readonly message: string; readonly resetsAt: Date }, I, C extends string>(
  error: Schema.Schema<A, I>,
  make: (fields: { readonly message: string; readonly resetsAt: Date }) => A,
  code: C
) =>
  Schema.transform(
    Schema.Struct({
      statusCode: Schema.Literal(403),
      error: Schema.Literal(code),
      message: Schema.String,
      resetsAt: Schema.Date.annotations({ description: "When the window that stops the action ends (ISO 8601)" })
    }),
    Schema.typeSchema(error),
    {
      strict: true,
      decode: ({ message, resetsAt }) => make({ message, resetsAt }),
      encode: (e) => ({ statusCode: 403 as const, error: code, message: e.message, resetsAt: e.resetsAt })
    }
  ).annotations(HttpApiSchema.annotations({ status: 403 }))
export const LossLimitReached = withReset(
  ResponsibleGaming.LossLimitReached,
  (fields) => new ResponsibleGaming.LossLimitReached(fields),
  "LOSS_LIMIT_REACHED"
)
export const PlayTimeLimitReached = withReset(
  ResponsibleGaming.PlayTimeLimitReached,
  (fields) => new ResponsibleGaming.PlayTimeLimitReached(fields),
  "PLAY_TIME_LIMIT_REACHED"
)
/** `{statusCode: 403, error: "SELF_EXCLUDED", message, until}`; `until: null` while excluded indefinitely. */
export const SelfExcluded = Schema.transform(
  Schema.Struct({
    statusCode: Schema.Literal(403),
    error: Schema.Literal("SELF_EXCLUDED"),
    message: Schema.String,
    until: Schema.NullOr(Schema.Date).annotations({ description: "When the exclusion ends; null: indefinitely" })
  }),
  Schema.typeSchema(ResponsibleGaming.SelfExcluded),
  {
    strict: true,
    decode: ({ message, until }) => new ResponsibleGaming.SelfExcluded({ message, until }),
    encode: (e) => ({ statusCode: 403 as const, error: "SELF_EXCLUDED" as const, message: e.message, until: e.until })
  }
).annotations(HttpApiSchema.annotations({ status: 403 }))
export const LimitsRequired = withCode(
  ResponsibleGaming.LimitsRequired,
  (message) => new ResponsibleGaming.LimitsRequired({ message }),
  403,
  "LIMITS_REQUIRED"
)
export const ExclusionCannotBeShortened = withStatus(
  ResponsibleGaming.ExclusionCannotBeShortened,
  (message) => new ResponsibleGaming.ExclusionCannotBeShortened({ message }),
  409
)
