/**
 * The development log format (docs/operations.md "Logs"): one line per entry, readable, with the annotations on
 * the same line as `key=value` (a value with spaces or quotes in JSON quotes), the request's fields first:
 *
 *   [15:51:06.224] INFO (#229): Sent HTTP response http.method=GET http.route=/api/auth/me ... requestId=... userId=7
 *
 * Effect's pretty logger writes each annotation on a line of its own (seven lines per request). A cause, when
 * there is one (an error), follows on indented lines. Production writes JSON lines instead (src/main.ts).
 */
import { Cause, FiberId, Inspectable, Logger } from "effect"

/** Annotations written first, in this order; the others follow by name. */
const FIRST = ["http.method", "http.route", "http.url", "http.status", "http.duration_ms", "requestId", "userId", "traceId"]
const rank = (key: string) => {
  const at = FIRST.indexOf(key)
  return at === -1 ? FIRST.length : at
}

const two = (n: number) => n.toString().padStart(2, "0")
const time = (date: Date) =>
  `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}.${date.getMilliseconds().toString().padStart(3, "0")}`

const text = (value: unknown): string => Inspectable.toStringUnknown(value, 0)
const PLAIN = /^[^\s"=]+$/
const valueOf = (value: unknown): string => {
  const written = text(value)
  return PLAIN.test(written) ? written : JSON.stringify(written)
}

/** An entry as its line (and, with a cause, the cause's indented lines after it). */
export const logLine: Logger.Logger<unknown, string> = Logger.make(
  ({ annotations, cause, date, fiberId, logLevel, message, spans }) => {
    let line = `[${time(date)}] ${logLevel.label} (${FiberId.threadName(fiberId)})`
    for (const span of spans) line += ` ${span.label}=${date.getTime() - span.startTime}ms`
    line += ":"
    for (const part of Array.isArray(message) ? message : [message]) line += ` ${text(part)}`
    const fields = [...annotations].sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))
    for (const [key, value] of fields) line += ` ${key}=${valueOf(value)}`
    if (!Cause.isEmpty(cause)) line += `\n${Cause.pretty(cause, { renderErrorCause: true }).replace(/^/gm, "  ")}`
    return line
  }
)

/** The logger `npm start` uses outside production: `logLine` on stdout. */
export const LogLineLive = Logger.replace(Logger.defaultLogger, Logger.map(logLine, (line) => globalThis.console.log(line)))
