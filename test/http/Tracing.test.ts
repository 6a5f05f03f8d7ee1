/**
 * Traces: with an exporter configured, one opening is one trace whose HTTP server span holds the
 * service's span, which holds the user lock's, which holds the SQL statements; every log line of the
 * request carries its trace id and request id.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { expect, layer } from "@effect/vitest"
import { HttpMiddleware, HttpServerRequest } from "@effect/platform"
import { ConfigProvider, Effect, FiberRef, Logger } from "effect"
import { TracingFromEnv } from "../../src/layers/Observability"
import { fundedPlayer, makeCase } from "../support/GameFixtures"
import { makeTestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const exporter = new InMemorySpanExporter()
const InMemoryTracing = NodeSdk.layer(() => ({
  resource: { serviceName: "game-platform-test" },
  spanProcessor: new SimpleSpanProcessor(exporter)
}))

/** The span's ancestors, nearest first. */
const ancestors = (spans: ReadonlyArray<ReadableSpan>, span: ReadableSpan): Array<ReadableSpan> => {
  const parentId = span.parentSpanContext?.spanId
  const parent = spans.find((s) => s.spanContext().spanId === parentId)
  return parent === undefined ? [] : [parent, ...ancestors(spans, parent)]
}

layer(TestDatabase)("tracing", (it) => {
  it.scoped("one opening: the HTTP span -> CaseOpenings.open -> its SQL statements, in one trace", () =>
    Effect.gen(function*() {
      const lines: Array<Record<string, unknown>> = []
      const capture = Logger.map(Logger.structuredLogger, (entry) => lines.push(entry as any))
      const client = yield* makeTestClient({
        config: { adminIdpIds: ["root"] },
        accessLog: true,
        logging: Logger.replace(Logger.defaultLogger, capture)
      })
      const { kase } = yield* makeCase({ priceCents: 500n })
      const player = yield* fundedPlayer(client, "traced", 1_000)
      exporter.reset()
      lines.length = 0

      const opened = yield* client.post(`/api/cases/${kase.id}/open`, undefined, player.auth)
      expect(opened.status).toBe(200)

      const spans = exporter.getFinishedSpans()
      const service = spans.find((s) => s.name === "CaseOpenings.open")!
      expect(service).toBeDefined()
      const http = ancestors(spans, service).find((s) => s.name.startsWith("http.server"))!
      expect(http.name).toBe("http.server POST")
      expect(http.attributes["http.response.status_code"]).toBe(200)
      // The user lock's span is the operation's child, and the statements are inside it.
      const lock = spans.find((s) => s.name === "UserLock.withLock")!
      expect(lock.attributes["key"]).toMatch(/^user:\d+$/)
      expect(ancestors(spans, lock)[0]).toBe(service)
      const statements = spans.filter((s) => s.name === "sql.execute" && ancestors(spans, s).includes(lock))
      expect(statements.length).toBeGreaterThan(0)
      expect(new Set([http, service, ...statements].map((s) => s.spanContext().traceId)).size).toBe(1)

      // The access log line of the request names the same trace, and the id answered as X-Request-Id.
      const sent = lines.find((line) => line.message === "Sent HTTP response")!
      expect(sent.annotations).toMatchObject({
        traceId: http.spanContext().traceId,
        requestId: opened.headers.get("x-request-id")
      })
    }).pipe(Effect.provide(InMemoryTracing)))

  it.scoped("the OTLP exporter is installed only when OTEL_EXPORTER_OTLP_ENDPOINT is set; without it tracing is off", () =>
    Effect.gen(function*() {
      const native = yield* Effect.tracer
      const request = HttpServerRequest.fromWeb(new Request("http://localhost/api/health"))
      // Each in a fiber of its own: the layer sets fiber refs for the fiber it is built in.
      const tracingWith = (env: ReadonlyArray<[string, string]>) =>
        Effect.promise(() => Effect.runPromise(Effect.all({
          tracer: Effect.tracer,
          enabled: FiberRef.get(FiberRef.currentTracerEnabled),
          serverSpan: Effect.map(FiberRef.get(HttpMiddleware.currentTracerDisabledWhen), (disabled) => !disabled(request))
        }).pipe(Effect.provide(TracingFromEnv), Effect.withConfigProvider(ConfigProvider.fromMap(new Map(env))))))
      // Nothing would read a span: none is made, not even the HTTP server's.
      expect(yield* tracingWith([])).toEqual({ tracer: native, enabled: false, serverSpan: false })
      // Nothing is sent: no span ends while it is installed.
      const exporting = yield* tracingWith([["OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"]])
      expect(exporting.tracer).not.toBe(native)
      expect(exporting).toMatchObject({ enabled: true, serverSpan: true })
    }))
})
