/**
 * Prepared statements for the `pg` pool: every statement with parameters is sent as a named statement,
 * so PostgreSQL parses and plans it once per connection and later only binds and executes it. For an
 * opening's one statement (a chain of data-modifying CTEs) planning cost more than executing: pgbench
 * ran it 4 400 times a second unprepared and 27 600 times prepared on 2 clients (docs/decisions.md#prepared-statements).
 *
 * A name stands for one text for the life of the pool. Statements without parameters (BEGIN, COMMIT,
 * the migrations) are sent as they are. Each connection keeps at most PER_CONNECTION statements and
 * the pool names at most NAMED texts; beyond, statements go unnamed as before, so texts that vary
 * (a list of a request's length) cannot grow a backend's memory without bound. The services write no
 * such text: a list is one array parameter (`= ANY($1)`, `unnest($1, $2, ...)`), so a statement keeps
 * one text whatever the list's length and no request fills a connection's PER_CONNECTION.
 *
 * PostgreSQL plans a prepared statement again when a table it reads changes (a migration while another
 * instance runs), but refuses to change its result's columns ("cached plan must not change result
 * type", `SELECT *` after a column was added). Our statements name their columns; should one still fail
 * so, its text gets a new name, prepared afresh on every connection at its next use, inside a failed
 * transaction too, where nothing could be sent to remove the old one. The failure is a transient
 * conflict (src/layers/Failures.ts): `inTransaction` runs the transaction again, a lone statement is a 503.
 */
import pg from "pg"
import pgUtils from "pg/lib/utils.js"

/** How many statements one connection keeps prepared at most. */
export const PER_CONNECTION = 200
/** How many different texts a pool names at most. */
const NAMED = 2_000

/**
 * `values` with each Date as pg would send it (its `prepareValue`), one conversion per instant: a statement names
 * its time once per table it writes (an opening's, a dozen times), and pg turns every occurrence into text anew
 * (~0.5 KB of short strings each). The same array when it holds no Date.
 */
const withDatesAsText = (values: Array<unknown>): Array<unknown> => {
  let converted: Array<unknown> | undefined
  let textOf: Map<number, unknown> | undefined
  for (let i = 0; i < values.length; i++) {
    const value = values[i]
    if (!(value instanceof Date)) continue
    converted ??= values.slice()
    textOf ??= new Map()
    let text = textOf.get(value.getTime())
    if (text === undefined) {
      text = pgUtils.prepareValue(value)
      textOf.set(value.getTime(), text)
    }
    converted[i] = text
  }
  return converted ?? values
}

/** A `pg.Client` class that prepares statements as described above; one name space per call. */
export const preparingClient = (): typeof pg.Client => {
  // The named texts by their length. A statement's text comes from @effect/sql as a string built piece by piece
  // (an opening's: 7 KB of a few hundred pieces); a Map keyed by the text hashes it through those pieces on every
  // lookup, which cost 3 times what comparing it with the one or two texts of its length does.
  const byLength = new Map<number, Array<{ readonly text: string; name: string }>>()
  let named = 0
  let made = 0
  const entryOf = (text: string) => byLength.get(text.length)?.find((entry) => entry.text === text)
  const nameOf = (text: string) => {
    const known = entryOf(text)
    if (known !== undefined || named >= NAMED) return known?.name
    const entry = { text, name: `s${++made}` }
    const sameLength = byLength.get(text.length)
    if (sameLength === undefined) byLength.set(text.length, [entry])
    else sameLength.push(entry)
    named++
    return entry.name
  }

  return class PreparingClient extends pg.Client {
    private readonly prepared = new Set<string>()

    // pg's overloads; `@effect/sql-pg` calls `query(text, values, callback)` for every statement.
    override query(...args: Array<any>): any {
      const [text, values, callback] = args as [unknown, unknown, unknown]
      if (typeof text !== "string" || !Array.isArray(values) || values.length === 0 || typeof callback !== "function") {
        return (super.query as (...args: Array<unknown>) => unknown)(...args)
      }
      const name = nameOf(text)
      const sent = withDatesAsText(values)
      if (name === undefined || (!this.prepared.has(name) && this.prepared.size >= PER_CONNECTION)) {
        return super.query(text, sent, callback as () => void)
      }
      this.prepared.add(name)
      return super.query({ name, text, values: sent }, (error: Error | null, result: unknown) => {
        if ((error as { code?: string } | null)?.code === "0A000" && /cached plan/.test(error!.message)) {
          const entry = entryOf(text)
          if (entry?.name === name) entry.name = `s${++made}`
        }
        ;(callback as (error: Error | null, result: unknown) => void)(error, result)
      })
    }
  }
}
