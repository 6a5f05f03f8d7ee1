/**
 * Examples in the OpenAPI document for the money and fairness endpoints. Each is a real exchange's
 * shape: the fairness values verify (the roll is HMAC-SHA256 of `clientSeed:nonce` under the server
 * seed, see docs/fairness.md), and the lint test checks every example against its schema.
 */
import { OpenApi } from "@effect/platform"
import { Context } from "effect"

type Operation = Record<string, any>

/** An endpoint annotation that adds a JSON example to its request body and/or one of its responses. */
const examples = (options: { readonly request?: unknown; readonly response?: unknown; readonly status?: number }) =>
  Context.make(OpenApi.Transform, (operation: Operation): Operation => {
    const withExample = (body: Operation | undefined, example: unknown) =>
      body?.content?.["application/json"] === undefined ? body : {
        ...body,
        content: { ...body.content, "application/json": { ...body.content["application/json"], example } }
      }
    const status = String(options.status ?? 200)
    return {
      ...operation,
      ...(options.request === undefined || operation.requestBody === undefined
        ? {}
        : { requestBody: withExample(operation.requestBody, options.request) }),
      ...(options.response === undefined ? {} : {
        responses: { ...operation.responses, [status]: withExample(operation.responses?.[status], options.response) }
      })
    }
  })

const serverSeed = "9f2c4e7a1b3d5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8"
const serverSeedHash = "02b7760a53efab0daa0471a41d1d2de268406db75dedb9010ff5da3360c22d59"
const nextServerSeedHash = "2246c2f07ef4d7eb97bc4206b7a8857a05f115fc9c04e2382b4fb51011df676c"
const clientSeed = "my-lucky-seed"
const item = { id: "17", name: "AWP | Asiimov", rarity: "COVERT", valueCents: 45_900, imageUrl: "/images/items/17.png" }

export const openCase = examples({
  response: {
    openingId: "1042",
    item,
    roll: 8_582_035,
    serverSeedHash,
    nextServerSeedHash,
    isFlip: false
  }
})

export const verifyOpening = examples({
  response: {
    openingId: "1042",
    serverSeed,
    serverSeedHash,
    clientSeed,
    nonce: 42,
    roll: 8_582_035,
    calculatedRoll: 8_582_035,
    rollItemId: "17",
    rangeStart: 8_000_001,
    rangeEnd: 9_000_000,
    flipChance: 0.01,
    isFlip: false,
    isValid: true
  }
})

export const clientSeedState = examples({
  request: { clientSeed },
  response: { clientSeed, nonce: 42, nextServerSeedHash }
})

export const initiateDeposit = examples({
  status: 201,
  request: { amountCents: 5000, method: "PIX" },
  response: {
    depositId: "311",
    qrCode: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
    qrCodeText: "00020126580014br.gov.bcb.pix0136a629532e-7693-4846-852d-1bbff817b5a8520400005303986540550.005802BR5913GamePlatform6009SAO PAULO62070503***6304B14F",
    expiresAt: "2026-11-23T15:30:00.000Z",
    amountCents: "5000",
    feeCents: 0,
    totalCents: 5000,
    externalId: "sbx_ch_8f14e45fceea167a"
  }
})

export const requestWithdrawal = examples({
  status: 201,
  request: {
    amountCents: 2500,
    paymentMethod: "PIX",
    paymentDetails: { pixKeyType: "EMAIL", pixKey: "alice@example.com" }
  },
  response: { id: "88", amountCents: 2500, status: "PENDING", requestedAt: "2026-11-23T15:00:00.000Z" }
})
