/**
 * The process's lifecycle as the application sees it (docs/rules.md#shutdown): whether it is shutting down. On SIGTERM
 * or SIGINT, `beginShutdown` runs before the server stops: readiness answers 503 from then on (load
 * balancers stop sending), answers carry `Connection: close`, and event streams end with a final
 * `shutdown` event; then requests in flight finish and the pools close (src/App.ts).
 */
import { Context, Deferred, Effect, Layer } from "effect"

interface LifecycleShape {
  /** True once shutdown has begun. */
  readonly draining: Effect.Effect<boolean>
  /** Completes when shutdown begins. */
  readonly shutdown: Effect.Effect<void>
  readonly beginShutdown: Effect.Effect<void>
}

export class Lifecycle extends Context.Tag("app/Lifecycle")<Lifecycle, LifecycleShape>() {
  static readonly live: Layer.Layer<Lifecycle> = Layer.effect(
    this,
    Effect.map(Deferred.make<void>(), (signal) => ({
      draining: Deferred.isDone(signal),
      shutdown: Deferred.await(signal),
      beginShutdown: Effect.asVoid(Deferred.succeed(signal, undefined))
    }))
  )
}
