/**
 * The process's lifecycle as the application sees it (docs/rules.md#shutdown): whether it is shutting down. On SIGTERM
 * or SIGINT, `beginShutdown` runs before the server stops: readiness answers 503 from then on (load
 * balancers stop sending), answers carry `Connection: close`, and event streams end with a final
 * `shutdown` event; then requests in flight finish and the pools close (src/App.ts).
 */
import { Context, Deferred, Effect, Layer, type Scope } from "effect"

interface LifecycleShape {
  /** True once shutdown has begun. */
  readonly draining: Effect.Effect<boolean>
  /**
   * Calls `callback` (synchronous, at most once) when shutdown begins, or at once if it has begun, unless the scope
   * has closed first: each open event stream registers one, so that none needs a fiber waiting for it.
   */
  readonly onShutdown: (callback: () => void) => Effect.Effect<void, never, Scope.Scope>
  readonly beginShutdown: Effect.Effect<void>
}

export class Lifecycle extends Context.Tag("app/Lifecycle")<Lifecycle, LifecycleShape>() {
  static readonly live: Layer.Layer<Lifecycle> = Layer.effect(
    this,
    Effect.map(Deferred.make<void>(), (signal) => {
      const callbacks = new Set<() => void>()
      return {
        draining: Deferred.isDone(signal),
        onShutdown: (callback) =>
          Effect.acquireRelease(
            Effect.map(Deferred.isDone(signal), (begun) => {
              if (begun) callback()
              else callbacks.add(callback)
            }),
            () => Effect.sync(() => callbacks.delete(callback))
          ),
        beginShutdown: Effect.flatMap(Deferred.succeed(signal, undefined), (first) =>
          Effect.sync(() => {
            if (!first) return
            for (const callback of callbacks) callback()
            callbacks.clear()
          }))
      }
    })
  )
}
