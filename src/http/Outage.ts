/**
 * Whether a defect is an outage of a dependency (PostgreSQL or Redis unreachable, a connection lost)
 * rather than a bug: such requests are answered 503 `Service unavailable`, which clients and load
 * balancers may retry, instead of 500. Errors are looked at down their `cause` chain, since
 * @effect/sql wraps the driver's error.
 */

/** Socket-level failures of Node's net module. */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH", "EAI_AGAIN"])

/** PostgreSQL SQLSTATEs of a server that is going away or not taking connections. */
const UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03", "53300"])

const CONNECTION_MESSAGES = [
  "Connection terminated", // pg: the server closed the connection
  "timeout exceeded when trying to connect", // pg pool
  "Connection is closed", // ioredis
  "Reached the max retries per request limit" // ioredis during an outage (MaxRetriesPerRequestError)
]

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

const isOutageError = (error: Record<string, unknown>): boolean => {
  const code = typeof error.code === "string" ? error.code : ""
  const message = typeof error.message === "string" ? error.message : ""
  return NETWORK_CODES.has(code) ||
    UNAVAILABLE_STATES.has(code) ||
    code.startsWith("08") || // SQLSTATE class 08: connection exception
    error.name === "MaxRetriesPerRequestError" ||
    CONNECTION_MESSAGES.some((text) => message.includes(text))
}

export const isOutage = (defect: unknown): boolean => {
  let current: unknown = defect
  for (let depth = 0; depth < 5 && isRecord(current); depth++) {
    if (isOutageError(current)) return true
    current = current.cause
  }
  return false
}
