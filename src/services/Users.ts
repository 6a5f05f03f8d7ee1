/** The users table: creation at first sign-in and look-ups. Balances change only through the Ledger. */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import { NotFound } from "../schema/Errors"
import { UserId } from "../schema/Ids"
import { User } from "../schema/User"

const columns = "id, idp_id, username, role, balance_cents, two_factor_enabled, banned_at, ban_reason, created_at"

export class Users extends Effect.Service<Users>()("app/Users", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.single({
      Request: Schema.Struct({ idpId: Schema.String, username: Schema.String, now: Schema.DateFromSelf }),
      Result: User,
      execute: ({ idpId, now, username }) =>
        sql`INSERT INTO users (idp_id, username, created_at, updated_at)
            VALUES (${idpId}, ${username}, ${now}, ${now})
            RETURNING ${sql.literal(columns)}`
    })

    const byId = SqlSchema.findOne({
      Request: UserId,
      Result: User,
      execute: (id) => sql`SELECT ${sql.literal(columns)} FROM users WHERE id = ${id}`
    })

    const create = Effect.fn("Users.create")(function*(input: { readonly idpId: string; readonly username: string }) {
      const now = new Date(yield* Clock.currentTimeMillis)
      return yield* insert({ ...input, now }).pipe(Effect.orDie)
    })

    const findById = Effect.fn("Users.findById")(function*(id: UserId) {
      const user = yield* byId(id).pipe(Effect.orDie)
      if (user._tag === "None") return yield* NotFound.of("User")
      return user.value
    })

    return { create, findById } as const
  })
}) {}
