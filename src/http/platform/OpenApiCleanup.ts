/**
 * Post-processing steps of the generated OpenAPI document. HttpApi documents its own
 * HttpApiDecodeError as a 400 answer of every endpoint, but ErrorEnvelope turns that error into
 * ValidationError (docs/rules.md#validation-errors) before it is sent, so the document lists only what clients
 * really receive; component schemas nothing refers to (left over from that, or emitted by the generator) are dropped.
 */
const DECODE_ERROR = "HttpApiDecodeError"
const DECODE_ERROR_REF = `#/components/schemas/${DECODE_ERROR}`

type Json = unknown

const isRecord = (value: Json): value is Record<string, Json> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isDecodeErrorRef = (value: Json) => isRecord(value) && value.$ref === DECODE_ERROR_REF

const dropDecodeError = (value: Json): Json => {
  if (Array.isArray(value)) return value.map(dropDecodeError)
  if (!isRecord(value)) return value
  const entries = Object.entries(value).map(([key, child]) => [key, dropDecodeError(child)] as const)
  const node: Record<string, Json> = Object.fromEntries(entries)
  if (Array.isArray(node.anyOf) && node.anyOf.some(isDecodeErrorRef)) {
    const rest = node.anyOf.filter((member) => !isDecodeErrorRef(member))
    const { anyOf: _, ...others } = node
    return rest.length === 1 && isRecord(rest[0]) ? { ...others, ...rest[0] } : { ...others, anyOf: rest }
  }
  return node
}

const referencedSchemas = (document: Json): ReadonlySet<string> =>
  new Set(Array.from(JSON.stringify(document).matchAll(/"#\/components\/schemas\/([^"]+)"/g), (match) => match[1]!))

/** The document without HttpApiDecodeError and without component schemas nothing refers to. */
export const withoutDecodeError = (spec: Record<string, any>): Record<string, any> => {
  const cleaned = dropDecodeError(spec) as Record<string, any>
  const { [DECODE_ERROR]: _, ...schemas } = cleaned.components?.schemas ?? {}
  const document = { ...cleaned, components: { ...cleaned.components, schemas } }
  // Dropping one schema can leave another unreferenced (Issue is only used by HttpApiDecodeError).
  for (;;) {
    const referenced = referencedSchemas(document)
    const unused = Object.keys(schemas).filter((name) => !referenced.has(name))
    if (unused.length === 0) return document
    unused.forEach((name) => delete schemas[name])
  }
}
