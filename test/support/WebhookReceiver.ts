/**
 * A local HTTP receiver of outbound webhooks for tests: listens on 127.0.0.1 (a free port), records
 * every request (path, headers, raw body) and answers 200, or `failStatus` for the first `failFirst`
 * requests. Closed with the scope.
 */
import { Effect, type Scope } from "effect"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export interface ReceivedRequest {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>`; any path is accepted. */
  readonly url: string
  /** What arrived so far, in order. */
  readonly received: () => ReadonlyArray<ReceivedRequest>
  /** From now on the first `count` requests (counted from now) answer `status` instead of 200. */
  readonly failNext: (count: number, status?: number) => void
}

export const startWebhookReceiver: Effect.Effect<WebhookReceiver, never, Scope.Scope> = Effect.acquireRelease(
  Effect.async<{ readonly server: Server; readonly receiver: WebhookReceiver }>((resume) => {
    const received: Array<ReceivedRequest> = []
    let failures = 0
    let failStatus = 500
    const server = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        received.push({ path: request.url ?? "/", headers: request.headers, body: Buffer.concat(chunks).toString("utf8") })
        const failing = failures > 0
        if (failing) failures--
        response.writeHead(failing ? failStatus : 200, { "content-type": "text/plain" }).end(failing ? "no" : "ok")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({
        server,
        receiver: {
          url: `http://127.0.0.1:${port}`,
          received: () => [...received],
          failNext: (count, status = 500) => {
            failures = count
            failStatus = status
          }
        }
      }))
    })
  }),
  ({ server }) => Effect.async<void>((resume) => {
    server.closeAllConnections()
    server.close(() => resume(Effect.void))
  })
).pipe(Effect.map(({ receiver }) => receiver))
