/** List queries (docs/rules.md#pagination): `page` from 1 (default 1), `limit` 1 to 100 (default 20). */
import { Schema } from "effect"

const integerParam = (min: number, max: number, fallback: number) =>
  Schema.optionalWith(
    Schema.NumberFromString.pipe(
      Schema.int({ message: () => "must be an integer" }),
      Schema.between(min, max, { message: () => `must be between ${min} and ${max}` })
    ),
    { default: () => fallback }
  )

export const PageParams = {
  page: integerParam(1, 1_000_000, 1),
  limit: integerParam(1, 100, 20)
}

export const PageQuery = Schema.Struct(PageParams).annotations({ parseOptions: { errors: "all" } })

/** A page of a list, as the services take it: `page` from 1. */
export type PageRequest = typeof PageQuery.Type

/** The answer of a list (docs/rules.md#pagination): the page's rows under `key`, then `total` and `page`. */
export const ListPage = <const K extends string, S extends Schema.Schema.Any>(key: K, row: S) =>
  Schema.Struct({
    ...({ [key]: Schema.Array(row) } as { readonly [P in K]: Schema.Array$<S> }),
    total: Schema.Int,
    page: Schema.Int
  })

/** The query of a list that may be narrowed to one `status` (every status when it is absent). */
export const StatusPageQuery = <S extends Schema.Schema.All>(status: S) =>
  Schema.Struct({ ...PageParams, status: Schema.optional(status) }).annotations({ parseOptions: { errors: "all" } })

/** A page of a list narrowed to `status` when it is given, as the services take it. */
export interface StatusPageRequest<S extends string = string> extends PageRequest {
  readonly status?: S | undefined
}
