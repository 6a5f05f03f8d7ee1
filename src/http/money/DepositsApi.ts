/** A user's deposits (docs/rules.md#deposits). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DepositId, DepositInitiated, DepositRequest, DepositView, PaymentMethod } from "../../schema/money/Deposit"
import { ListPage, PageQuery } from "../../schema/platform/Pagination"
import { Authentication } from "../identity/Authentication"
import * as HttpError from "../platform/HttpErrors"
import { moneyMoving } from "../platform/Idempotent"
import * as Examples from "../platform/OpenApiExamples"
import { documented } from "../platform/OpenApiDocs"

const DepositList = ListPage("deposits", DepositView)

const initiate = <const Name extends string>(name: Name, path: `/${string}`, summary: string) =>
  HttpApiEndpoint.post(name, path).setPayload(DepositRequest).addSuccess(DepositInitiated, { status: 201 })
    .addError(Schema.Union(HttpError.GatewayUnavailable, HttpError.PaymentMethodNotAllowed, HttpError.SelfExcluded))
    .pipe(moneyMoving)
    .annotateContext(Examples.initiateDeposit)
    .pipe(documented(summary, "Creates a charge at the gateway and a PENDING deposit. amountCents from 500 (`Minimum " +
      "deposit is R$ 5.00`) to 10000000 (`Maximum deposit is R$ 100,000.00`). The method's fee (GET " +
      "/payment/methods) is paid on top, rounded half up to the cent: the charge is totalCents = amountCents + " +
      "feeCents. The balance is credited amountCents when the gateway confirms payment. Under JURISDICTION=BR only " +
      "PIX (another method: 422 `Payment method not allowed in this jurisdiction`), and a payment from anyone but " +
      "the account holder is not credited but returned to the payer (REFUND_PENDING, then REFUNDED). A self-excluded " +
      "player gets 403 SELF_EXCLUDED, and a deposit paid while its owner is excluded is returned the same way."))

const list = <const Name extends string>(name: Name, path: `/${string}`, summary: string) =>
  HttpApiEndpoint.get(name, path).setUrlParams(PageQuery).addSuccess(DepositList)
    .pipe(documented(summary, "The user's deposits, newest first."))

const cancel = <const Name extends string>(name: Name, path: `/${string}/:id/cancel`, summary: string) =>
  HttpApiEndpoint.post(name, path).setPath(Schema.Struct({ id: DepositId })).addSuccess(DepositView)
    .addError(Schema.Union(HttpError.GatewayUnavailable, HttpError.DepositNotPending))
    .pipe(documented(summary, "The owner cancels a PENDING deposit: the gateway cancels the charge, so it can no " +
      "longer be paid, then the deposit is CANCELLED. `Deposit is not pending` (400) otherwise, also when the " +
      "gateway reports it paid."))

export class DepositsApi extends HttpApiGroup.make("deposits")
  .annotate(
    OpenApi.Description,
    "The user's deposits through the payment gateway (PIX, card, crypto) and the methods with their fees."
  )
  .add(initiate("initiate", "/payment/deposit/initiate", "Start a deposit"))
  .add(initiate("initiateAlias", "/deposits/initiate", "Start a deposit (alias)"))
  .add(list("list", "/payment/deposits", "My deposits"))
  .add(list("listAlias", "/deposits", "My deposits (alias)"))
  .add(cancel("cancel", "/payment/deposits/:id/cancel", "Cancel my deposit"))
  .add(cancel("cancelAlias", "/deposits/:id/cancel", "Cancel my deposit (alias)"))
  .add(
    HttpApiEndpoint.get("methods", "/payment/methods")
      .addSuccess(Schema.Struct({
        methods: Schema.Array(Schema.Struct({
          id: PaymentMethod,
          name: Schema.String,
          feePercent: Schema.Number,
          processingTime: Schema.String
        }))
      }))
      .pipe(documented("Deposit methods", "Deposit methods with fee and timing; the fee is a percentage of the " +
        "amount, paid on top."))
  )
  .middleware(Authentication)
{}
