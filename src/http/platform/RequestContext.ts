/**
 * What a request carries: the context its fiber runs with is copied at every `provideService`, `withSpan` and
 * merge on its way (about eight times per request, docs/decisions.md "The request's context"). The platform
 * starts that context from the one the server's layer was built in, and merges the one each API group's layer
 * was built in; built in the whole application, both held every service (~60) and each copy cost as much.
 * `buildOnly` builds a layer in a context of just the services it names, so that what it keeps for its
 * requests is those.
 */
import { Context, Effect, Layer, Scope } from "effect"

type Identifiers<Tags extends ReadonlyArray<Context.Tag<any, any>>> = Context.Tag.Identifier<Tags[number]>

/** `buildOnly`'s build of `layer`, in the enclosing build's scope and memo map, with only `tags` of its context. */
const buildWith = Effect.fnUntraced(function*<const Tags extends ReadonlyArray<Context.Tag<any, any>>, A, E>(
  tags: Tags,
  layer: Layer.Layer<A, E, Identifiers<Tags>>
) {
  const context = yield* Effect.context<Identifiers<Tags> | Scope.Scope>()
  const only = Context.pick(...tags)(context)
  const built = Layer.buildWithMemoMap(layer, Context.get(context, Layer.CurrentMemoMap), Context.get(context, Scope.Scope))
  return yield* Effect.mapInputContext(built, (_: Context.Context<never>) => only)
})

/**
 * `layer`, built in a context of `tags` alone (taken from the enclosing one) and sharing the enclosing
 * build's memoized layers. The tags are checked against what the layer requires: one missing is a type
 * error, not a request that fails at run time.
 */
export const buildOnly = <const Tags extends ReadonlyArray<Context.Tag<any, any>>>(tags: Tags) =>
<A, E>(layer: Layer.Layer<A, E, Identifiers<Tags>>): Layer.Layer<A, E, Identifiers<Tags>> =>
  Layer.scopedContext(buildWith(tags, layer))
