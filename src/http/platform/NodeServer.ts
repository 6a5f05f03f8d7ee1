/**
 * Node's HTTP server with timeouts (docs/rules.md#server-timeouts), so that a slow client cannot hold a
 * connection: all headers within 10 s, the whole request (headers and body) within 30 s, an idle kept-alive
 * connection closed after 5 s. Answers take as long as they take, so event streams (long answers to short requests) are
 * not cut. Node checks the deadlines once a second.
 */
import { createServer, type Server } from "node:http"

interface ServerTimeouts {
  readonly headersMs: number
  readonly requestMs: number
  readonly keepAliveMs: number
}

const SERVER_TIMEOUTS: ServerTimeouts = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000 }

export const createHttpServer = (timeouts: ServerTimeouts = SERVER_TIMEOUTS): Server =>
  createServer({
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs)
  })
