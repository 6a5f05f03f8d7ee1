/**
 * Spans on the hot paths, made only when tracing is on. With tracing off (no exporter, src/layers/Observability.ts)
 * a span is a no-op that nothing reads, yet making one still costs on every request: `Effect.fn` captures its call
 * site (an `Error`), and the span is made, provided to the fiber (a copy of its context and two updates of its
 * references) and ended (docs/decisions.md "Spans on the hot paths", with what it measured). The operations that
 * are a hot route's handler, and the user lock they take, use `hotSpan` instead of `Effect.fn`/`Effect.withSpan`;
 * everything else keeps those. Traced, the spans are the same, without a call site (the span's name tells the
 * operation, and the access log's route the request).
 */
import { Effect, FiberRef, type Tracer } from "effect"

const tracing = FiberRef.get(FiberRef.currentTracerEnabled)

/** `effect` in the span `Effect.withSpan(name, options)` makes when tracing is on; `effect` itself when it is off. */
export const hotSpan = (name: string, options?: Omit<Tracer.SpanOptions, "captureStackTrace">) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(tracing, (on) => on ? Effect.withSpan(effect, name, { ...options, captureStackTrace: false }) : effect)
