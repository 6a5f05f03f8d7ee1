/**
 * Compiled statement texts kept by the statement's shape. @effect/sql compiles a statement on every execution:
 * it concatenates the text of its few hundred segments (an opening's statement: 7 KB from about 300 pieces) and
 * numbers its parameters, about 40 KB of an opening's allocation, and `preparingClient` (PreparedStatements.ts)
 * then compared that new text with the named one character by character. Yet a statement written once in the code
 * has the same text on every execution; only its parameters' values differ.
 *
 * A statement's shape is its segments' kinds and texts: literal pieces (a template's strings, the same string
 * objects every time, so comparing them is comparing pointers), identifiers, and parameters, whose text is only
 * their number (`$n`) in PostgreSQL's dialect. A statement of a known shape gets the text compiled the first time
 * (the same string object, so the prepared statement's lookup finds it at once) and only its parameters are
 * collected. A statement with any other segment (helpers such as `sql.in`, `sql.insert`, custom types) is compiled
 * as before, and so is every statement once MAX_SHAPES shapes are kept (a text built from a request's data, which
 * the services do not write, could not grow memory without bound).
 */
import type { SqlClient, Statement } from "@effect/sql"

/** How many shapes are kept at most. */
const MAX_SHAPES = 2_000

/** The compiler's method as @effect/sql calls it: a helper's RETURNING part is compiled with its placeholders as a third argument. */
type Compile = (
  statement: Statement.Fragment,
  withoutTransform: boolean,
  placeholders?: unknown
) => readonly [string, ReadonlyArray<unknown>]

/** A kept shape: each segment's kind and text (a parameter's text is its number, so none is kept), and the compiled text. */
interface Shape {
  readonly tags: ReadonlyArray<string>
  readonly texts: ReadonlyArray<string | undefined>
  readonly sql: string
}

/** Only these segments compile to a text that depends on nothing but their kind, their text and their position. */
const shapeOnly = (segment: Statement.Segment) =>
  segment._tag === "Parameter" || segment._tag === "Identifier" || segment._tag === "Literal"

const textOf = (segment: Statement.Segment) =>
  segment._tag === "Literal" || segment._tag === "Identifier" ? segment.value : undefined

/** The parameters of a statement of a kept shape, in the order the compiler would give them. */
const paramsOf = (segments: ReadonlyArray<Statement.Segment>) => {
  const params: Array<unknown> = []
  for (const segment of segments) {
    if (segment._tag === "Parameter") params.push(segment.value)
    else if (segment._tag === "Literal" && segment.params !== undefined) {
      for (const param of segment.params) params.push(param)
    }
  }
  return params
}

const matches = (shape: Shape, segments: ReadonlyArray<Statement.Segment>) => {
  if (shape.tags.length !== segments.length) return false
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!
    if (segment._tag !== shape.tags[i] || textOf(segment) !== shape.texts[i]) return false
  }
  return true
}

/** `compile`, keeping texts by shape; transformed and untransformed texts are kept apart (identifiers differ). */
const cachingCompile = (compile: Compile): Compile => {
  // The shapes by the text of their first segment (usually a template's first string), a few per key.
  const kept = [new Map<string, Array<Shape>>(), new Map<string, Array<Shape>>()] as const
  let count = 0
  return (statement, withoutTransform, placeholders) => {
    if (placeholders !== undefined) return compile(statement, withoutTransform, placeholders)
    const segments = statement.segments
    const byFirst = kept[withoutTransform ? 1 : 0]
    const key = segments.length === 0 ? "" : textOf(segments[0]!) ?? ""
    const candidates = byFirst.get(key)
    if (candidates !== undefined) {
      for (const shape of candidates) {
        if (matches(shape, segments)) return [shape.sql, paramsOf(segments)] as const
      }
    }
    const compiled = compile(statement, withoutTransform)
    if (count < MAX_SHAPES && segments.every(shapeOnly)) {
      const shape = { tags: segments.map((segment) => segment._tag), texts: segments.map(textOf), sql: compiled[0] }
      if (candidates === undefined) byFirst.set(key, [shape])
      else candidates.push(shape)
      count++
    }
    return compiled
  }
}

/**
 * Makes the client's statements compile through `cachingCompile`. @effect/sql has no option for it: its statements
 * call their client's compiler object, which is replaced here on the one instance this client's statements share
 * (the client's `withoutTransforms()` copy makes another compiler, which stays as it is).
 */
export const cacheStatementTexts = (sql: SqlClient.SqlClient) => {
  const compiler = (sql`SELECT 1` as unknown as { readonly compiler: { compile: Compile } }).compiler
  compiler.compile = cachingCompile(compiler.compile.bind(compiler))
}
