/**
 * Metrics and traces through `@effect/opentelemetry` and the OpenTelemetry SDK.
 *
 * - Metrics: the Effect metrics (src/layers/AppMetrics.ts) are read by a Prometheus reader only
 *   when GET /metrics is scraped; there is no export loop and no listener of its own.
 * - Traces: with OTEL_EXPORTER_OTLP_ENDPOINT set, the spans the service already makes (the HTTP
 *   server span, `Effect.fn` service spans, the SQL client's statement spans) go in batches to that
 *   OTLP/HTTP collector; the exporter reads the other OTEL_EXPORTER_OTLP_* variables itself (headers,
 *   timeout), and OTEL_RESOURCE_ATTRIBUTES adds resource attributes. Unset: tracing is off, since
 *   nothing would read a span: no HTTP server span (its URL parsing, header copies and attributes on
 *   every request) and no-op spans elsewhere (about a tenth of a request's CPU, docs/decisions.md).
 */
import * as OtelMetrics from "@effect/opentelemetry/Metrics"
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as Resource from "@effect/opentelemetry/Resource"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { HttpMiddleware } from "@effect/platform"
import { Config, Context, Effect, Layer, Option } from "effect"

const RESOURCE = { serviceName: "game-platform", serviceVersion: "0.1.0" }

interface MetricsExportShape {
  /** The current value of every metric, in the Prometheus text format. */
  readonly scrape: Effect.Effect<string>
}

export class MetricsExport extends Context.Tag("app/MetricsExport")<MetricsExport, MetricsExportShape>() {
  /** A Prometheus reader of the Effect metrics, collected on demand. */
  static readonly prometheus: Layer.Layer<MetricsExport> = Layer.unwrapEffect(Effect.sync(() => {
    const reader = new PrometheusExporter({ preventServerStart: true })
    const serializer = new PrometheusSerializer()
    const scrape = Effect.promise(() => reader.collect()).pipe(
      Effect.map(({ resourceMetrics }) => serializer.serialize(resourceMetrics))
    )
    return Layer.merge(Layer.succeed(MetricsExport, { scrape }), OtelMetrics.layer(() => reader)).pipe(
      Layer.provide(Resource.layerFromEnv(Resource.configToAttributes(RESOURCE)))
    )
  }))
}

/** The OTLP trace export when OTEL_EXPORTER_OTLP_ENDPOINT is set; tracing off otherwise. */
export const TracingFromEnv: Layer.Layer<never> = Layer.unwrapEffect(
  Effect.map(
    Config.option(Config.nonEmptyString("OTEL_EXPORTER_OTLP_ENDPOINT")).pipe(Effect.orElseSucceed(() => Option.none())),
    (endpoint) =>
      Option.isNone(endpoint)
        ? Layer.merge(Layer.setTracerEnabled(false), Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, () => true))
        : Layer.discard(NodeSdk.layer(() => ({
          resource: RESOURCE,
          spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter())
        })))
  )
)
