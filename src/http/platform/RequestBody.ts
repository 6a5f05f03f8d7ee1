/**
 * Request bodies (docs/rules.md#request-bodies): at most 64 KiB on the gateway's callback and 1 MiB elsewhere
 * (413), JSON only (415: forms and text would let another site post to us), nested at most 64 levels (400).
 *
 * What the headers tell is checked before a byte of the body is read: a declared length over the
 * limit, or a body of another content type. The body itself is read only when an endpoint asks for
 * it — after authentication, and after the gateway callback has looked at its signature header — and
 * never further than the limit: the request the endpoints see reads through a bounded reader, so a
 * body without a declared length (chunked) stops being read at the limit too. A body cut off that
 * way leaves the connection unusable; it is closed.
 */
import {
  HttpApiBuilder,
  type HttpApp,
  type Headers,
  HttpIncomingMessage,
  HttpServerError,
  HttpServerRequest,
  UrlParams
} from "@effect/platform"
import { Effect, Inspectable, Option, Stream } from "effect"
import { MalformedBody, PayloadTooLarge, UnsupportedMediaType } from "../../schema/platform/Errors"
import { Api } from "../Api"
import { endpoint, makeEndpoints } from "./Routes"

export const BODY_LIMIT_BYTES = 1024 * 1024
export const CALLBACK_BODY_LIMIT_BYTES = 64 * 1024
const MAX_JSON_DEPTH = 64

const CALLBACK = endpoint("paymentCallback.payment")

const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType.trim())

/**
 * Whether JSON text nests arrays and objects deeper than `limit`. A linear scan that skips strings;
 * run before parsing, so nothing recursive ever sees a deeper document.
 */
export const nestedDeeperThan = (text: string, limit: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) {
      inString = true
    } else if (c === 91 || c === 123) {
      if (++depth > limit) return true
    } else if (c === 93 || c === 125) {
      depth--
    }
  }
  return false
}

const tooDeep = () => new MalformedBody({ message: `JSON nested deeper than ${MAX_JSON_DEPTH} levels` })

/** The answer for a body that could not be read or parsed: the limit's own error, else 400. */
export const bodyProblem = (error: HttpServerError.RequestError): PayloadTooLarge | UnsupportedMediaType | MalformedBody =>
  error.cause instanceof PayloadTooLarge || error.cause instanceof UnsupportedMediaType || error.cause instanceof MalformedBody
    ? error.cause
    : new MalformedBody()

const utf8 = new TextDecoder("utf-8", { fatal: true })

const tooLarge = Symbol("tooLarge")
type TooLarge = typeof tooLarge

/**
 * The body's bytes, or `tooLarge` as soon as they pass `limit`: then reading stops, and the source is
 * destroyed (for a socket's request, its connection closes). Read from the source's chunks as they come,
 * with neither an Effect Stream nor a fiber: those cost ~300 KB of allocation per request with a body
 * (a battle's creation: 1.69 MB, without them 1.38 MB; docs/decisions.md "Performance of the hot paths").
 */
const readAtMost = async (source: unknown, limit: number): Promise<Uint8Array | TooLarge> => {
  // A web Request (in-process calls) may have no body at all; a socket's request is a Node Readable.
  const chunks = (source instanceof Request ? source.body ?? [] : source) as AsyncIterable<Uint8Array>
  const parts: Array<Uint8Array> = []
  let size = 0
  for await (const chunk of chunks) {
    size += chunk.length
    if (size > limit) return tooLarge // leaving the loop destroys (cancels) the source
    parts.push(chunk)
  }
  return Buffer.concat(parts, size)
}

/**
 * The request as endpoints see it: everything from the original, but its body read once, at most
 * `limit` bytes, and refused unless it is empty or JSON.
 */
class LimitedBodyRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  /** The body as read, once, when an endpoint first asks for it; shared with the requests modified from this one. */
  private readonly once: { read?: Promise<Uint8Array | TooLarge>; readonly limit: number }

  /** `limit`: read at most this many bytes; `once`: the body of the request this one modifies. */
  constructor(
    private readonly inner: HttpServerRequest.HttpServerRequest,
    from: { readonly limit: number } | { readonly once: LimitedBodyRequest["once"] }
  ) {
    super()
    this.once = "once" in from ? from.once : { limit: from.limit }
  }

  private get body(): Effect.Effect<Uint8Array, HttpServerError.RequestError> {
    return Effect.tryPromise({
      try: () => (this.once.read ??= readAtMost(this.inner.source, this.once.limit)),
      catch: (cause) => this.fail(cause)
    }).pipe(
      Effect.flatMap((bytes) =>
        bytes === tooLarge
          ? Effect.fail(this.fail(new PayloadTooLarge()))
          : bytes.length > 0 && !isJson(this.headers["content-type"])
          ? Effect.fail(this.fail(new UnsupportedMediaType()))
          : Effect.succeed(bytes)
      )
    )
  }

  private fail(cause: unknown): HttpServerError.RequestError {
    return new HttpServerError.RequestError({ request: this, reason: "Decode", cause })
  }

  get text(): Effect.Effect<string, HttpServerError.RequestError> {
    return Effect.flatMap(this.body, (bytes) =>
      Effect.try({ try: () => utf8.decode(bytes), catch: (cause) => this.fail(cause) }))
  }

  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    return Effect.flatMap(this.text, (text) =>
      nestedDeeperThan(text, MAX_JSON_DEPTH)
        ? Effect.fail(this.fail(tooDeep()))
        : Effect.try({ try: () => (text === "" ? null : JSON.parse(text)) as unknown, catch: (cause) => this.fail(cause) }))
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.RequestError> {
    return Effect.map(this.text, (text) => UrlParams.fromInput(new URLSearchParams(text)))
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError.RequestError> {
    // A copy: a small body's bytes share Node's pool of buffers with whatever else was allocated beside them.
    return Effect.map(this.body, (bytes) => new Uint8Array(bytes).buffer)
  }

  get stream(): Stream.Stream<Uint8Array, HttpServerError.RequestError> {
    return Stream.fromEffect(this.body)
  }

  get source() {
    return this.inner.source
  }
  get url() {
    return this.inner.url
  }
  get originalUrl() {
    return this.inner.originalUrl
  }
  get method() {
    return this.inner.method
  }
  get cookies() {
    return this.inner.cookies
  }
  get headers(): Headers.Headers {
    return this.inner.headers
  }
  get remoteAddress(): Option.Option<string> {
    return this.inner.remoteAddress
  }
  // Multipart bodies are not JSON: never read, refused.
  get multipart(): HttpServerRequest.HttpServerRequest["multipart"] {
    return Effect.die(this.fail(new UnsupportedMediaType()))
  }
  get multipartStream(): HttpServerRequest.HttpServerRequest["multipartStream"] {
    return Stream.die(this.fail(new UnsupportedMediaType()))
  }
  get upgrade() {
    return this.inner.upgrade
  }
  modify(options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]): HttpServerRequest.HttpServerRequest {
    return new LimitedBodyRequest(this.inner.modify(options), { once: this.once })
  }
  toJSON() {
    return this.inner.toJSON()
  }
}

export const RequestBodyLive = HttpApiBuilder.middleware(
  Api,
  Effect.gen(function*() {
    const endpoints = yield* makeEndpoints
    return Effect.fnUntraced(function*(app: HttpApp.Default) {
      const request = yield* HttpServerRequest.HttpServerRequest
      const limit = endpoints.of(request)?.name === CALLBACK ? CALLBACK_BODY_LIMIT_BYTES : BODY_LIMIT_BYTES
      const declared = request.headers["content-length"]
      const length = declared === undefined ? 0 : Number(declared)
      if (!Number.isSafeInteger(length) || length < 0) return yield* new MalformedBody({ message: "Invalid Content-Length" })
      if (length > limit) return yield* new PayloadTooLarge()
      // Without either header an HTTP/1.1 request has no body (RFC 9112 6.3): nothing to limit. (A web
      // Request, as the app gets in-process, may carry a body without them.)
      const carriesBody = length > 0 || request.headers["transfer-encoding"] !== undefined ||
        (request.source instanceof Request && request.source.body !== null)
      if (!carriesBody) return yield* app
      if (!isJson(request.headers["content-type"])) return yield* new UnsupportedMediaType()
      return yield* Effect.provideService(app, HttpServerRequest.HttpServerRequest, new LimitedBodyRequest(request, { limit }))
    })
  })
)
