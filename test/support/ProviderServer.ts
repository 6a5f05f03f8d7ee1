/**
 * An outside provider (KYC, PIX key directory, exclusion registry; docs/providers.md) on a real socket, for testing the
 * real HTTP clients against their sandbox twins and against providers that fail, hang or answer off-contract.
 */
import { Duration, Effect } from "effect"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"

/** A request the provider received. */
export interface Seen {
  readonly method: string
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly body: unknown
}

/**
 * A provider answering each request with `answer(body, seen so far)`, as JSON; `undefined`: never answers. `close`
 * drops its connections (a provider gone mid-test); it is closed with the test's scope anyway.
 */
export const providerServer = (
  answer: (body: unknown, seen: ReadonlyArray<Seen>) => { status: number; body: unknown } | undefined
) =>
  Effect.acquireRelease(
    Effect.async<{ url: string; seen: Array<Seen>; close: () => void }>((resume) => {
      const seen: Array<Seen> = []
      const server = createServer((request, response) => {
        let text = ""
        request.on("data", (chunk) => (text += chunk))
        request.on("end", () => {
          const body = text === "" ? undefined : JSON.parse(text)
          seen.push({ method: request.method!, path: request.url!, headers: request.headers, body })
          const answered = answer(body, seen)
          if (answered === undefined) return
          response.writeHead(answered.status, { "content-type": "application/json" }).end(JSON.stringify(answered.body))
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          seen,
          close: () => {
            server.closeAllConnections()
            server.close()
          }
        })))
    }),
    (server) => Effect.sync(server.close)
  )

/** Short time limits for the clients under test: an attempt, and all of a call's attempts. */
export const FAST_LIMITS = { attempt: Duration.millis(300), total: Duration.seconds(3) }
