/** The users table: creation at first sign-in and look-ups. Balances change only through the Ledger. */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import { AppConfig } from "../../layers/AppConfig"
import { hotSpan } from "../../layers/HotSpans"
import { NotFound } from "../../schema/platform/Errors"
import { UserId } from "../../schema/platform/Ids"
import { Role, User, usernameCandidates } from "../../schema/identity/User"
import { ProvablyFair } from "../games/ProvablyFair"
import { execute, firstOf, onUniqueViolation, orUnavailable, pageOf, rowCountOf, rowsOf, singleOf } from "../platform/SqlRows"
import { zonedCalendar } from "../platform/ZonedCalendar"

const AdminUserRow = Schema.Struct({
  id: UserId,
  username: Schema.String,
  idpId: Schema.String,
  role: Role,
  balanceCents: Schema.BigInt,
  bannedAt: Schema.NullOr(Schema.DateFromSelf),
  createdAt: Schema.DateFromSelf,
  lastActiveAt: Schema.NullOr(Schema.DateFromSelf),
  twoFactorEnabled: Schema.Boolean
})

/** A user as the operator commands show them. */
const OperatorUserRow = Schema.Struct({ ...AdminUserRow.fields, banReason: Schema.NullOr(Schema.String) })

const SignInRow = Schema.Struct({ id: UserId, username: Schema.String })

const columns = "id, idp_id, username, role, balance_cents, two_factor_enabled, banned_at, ban_reason, created_at"

export class Users extends Effect.Service<Users>()("app/Users", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const fairness = yield* ProvablyFair
    const config = yield* AppConfig

    const create = Effect.fn("Users.create")(function*(input: { readonly idpId: string; readonly username: string }) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const user = yield* singleOf(User, sql`
        INSERT INTO users (idp_id, username, created_at, updated_at)
        VALUES (${input.idpId}, ${input.username}, ${now}, ${now})
        RETURNING ${sql.literal(columns)}`)
      yield* fairness.ensure(user.id)
      return user
    })

    // A hot route's (`GET /auth/me` reads the user on every request): its span only when tracing is on.
    const findById = (id: UserId) =>
      Effect.flatMap(
        firstOf(User, sql`SELECT ${sql.literal(columns)} FROM users WHERE id = ${id}`),
        (user) => user === undefined ? NotFound.of("User") : Effect.succeed(user)
      ).pipe(hotSpan("Users.findById"))

    /**
     * Gives a new user (username '') the first free of its candidate names (usernameCandidates):
     * each is one conditional UPDATE, and the unique index on lower(username) decides between
     * sign-ins of different identities racing for the same name.
     */
    const assignUsername = Effect.fnUntraced(function*(id: UserId, claim: string | undefined) {
      for (const candidate of usernameCandidates(claim, id)) {
        // No row updated: a parallel sign-in of the same identity named it already.
        const taken = yield* sql`UPDATE users SET username = ${candidate} WHERE id = ${id} AND username = ''`.pipe(
          Effect.as(false),
          onUniqueViolation(() => Effect.succeed(true)),
          orUnavailable
        )
        if (!taken) return
      }
      // `user-<id>` cannot be taken: the rules never give a name of that form to anyone else.
      return yield* Effect.dieMessage(`Users: no username could be given to user ${id}`)
    })

    /**
     * The user of an identity at sign-in, created the first time (docs/rules.md#sign-in). The username is taken
     * from the provider's name at the first sign-in, made valid and unique (usernameCandidates), and kept;
     * `promote` makes the user an ADMIN. A new user gets their fairness state, so a server seed is
     * committed before their first roll.
     */
    const signIn = Effect.fn("Users.signIn")(function*(input: {
      readonly idpId: string
      readonly username: string | undefined
      readonly promote: boolean
    }) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const role = input.promote ? "ADMIN" : "USER"
      const { id, username } = yield* singleOf(SignInRow, sql`
        INSERT INTO users (idp_id, username, role, created_at, updated_at)
        VALUES (${input.idpId}, '', ${role}, ${now}, ${now})
        ON CONFLICT (idp_id) DO UPDATE
          SET role = CASE WHEN ${input.promote} THEN 'ADMIN' ELSE users.role END
        RETURNING id, username`)
      if (username === "") yield* assignUsername(id, input.username)
      yield* fairness.ensure(id)
      return yield* findById(id)
    })

    /**
     * The user the identity provider vouched for (docs/rules.md#sign-in): an identity listed in
     * `ADMIN_IDP_IDS` signs in as an ADMIN.
     */
    const signInWith = (claims: { readonly idpId: string; readonly username: string | undefined }) =>
      signIn({ ...claims, promote: config.adminIdpIds.includes(claims.idpId) })

    /** A user by id, else by idpId, as the operator commands show them (`npm run cli -- users show`). */
    const find = Effect.fn("Users.find")(function*(userIdOrIdpId: string) {
      const asId = /^[1-9][0-9]{0,18}$/.test(userIdOrIdpId) ? userIdOrIdpId : null
      const user = yield* firstOf(OperatorUserRow, sql`
        SELECT id, username, idp_id, role, balance_cents, banned_at, ban_reason, created_at, last_active_at,
               (two_factor_enabled AND two_factor_secret IS NOT NULL) AS two_factor_enabled
        FROM users
        WHERE id = (SELECT id FROM (SELECT id, 0 AS rank FROM users WHERE id = ${asId}::bigint
                                    UNION ALL SELECT id, 1 FROM users WHERE idp_id = ${userIdOrIdpId}) AS found
                    ORDER BY rank LIMIT 1)`)
      if (user === undefined) return yield* NotFound.of("User")
      return user
    })

    /** Gives the user (by id, else idpId) this role; `changed` false when they had it already (CLI `admins grant|revoke`). */
    const setRole = Effect.fn("Users.setRole")(function*(userIdOrIdpId: string, role: Role) {
      const found = yield* find(userIdOrIdpId)
      if (found.role === role) return { user: found, changed: false }
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* execute(sql`UPDATE users SET role = ${role}, updated_at = ${now} WHERE id = ${found.id}`)
      return { user: yield* find(String(found.id)), changed: true }
    })

    /** Makes the user with this id (else this idpId) an administrator (CLI `admins grant`, `grant-admin`). */
    const grantAdmin = Effect.fn("Users.grantAdmin")(function*(userIdOrIdpId: string) {
      const { user } = yield* setRole(userIdOrIdpId, "ADMIN")
      return yield* findById(user.id)
    })

    /** Every administrator, by id (CLI `admins list`). */
    const admins = rowsOf(OperatorUserRow, sql`
      SELECT id, username, idp_id, role, balance_cents, banned_at, ban_reason, created_at, last_active_at,
             (two_factor_enabled AND two_factor_secret IS NOT NULL) AS two_factor_enabled
      FROM users WHERE role = 'ADMIN' ORDER BY id`).pipe(Effect.withSpan("Users.admins"))

    const setBan = Effect.fnUntraced(function*(id: UserId, reason: string | null) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const banned = yield* rowCountOf(sql`
          UPDATE users SET banned_at = ${reason === null ? null : now}, ban_reason = ${reason}, updated_at = ${now}
          WHERE id = ${id} RETURNING id`)
      if (banned === 0) return yield* NotFound.of("User")
      return yield* findById(id)
    })

    const ban = Effect.fn("Users.ban")((id: UserId, reason: string) => setBan(id, reason))
    const unban = Effect.fn("Users.unban")((id: UserId) => setBan(id, null))

    /**
     * Records that the user was active now: the day in BUSINESS_TIMEZONE (dashboard activeToday,
     * docs/rules.md#user-activity) and lastActiveAt. Callers throttle it; both writes are idempotent.
     */
    const recordActivity = Effect.fn("Users.recordActivity")(function*(id: UserId) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const day = zonedCalendar(config.businessTimeZone).dayOf(now.getTime())
      yield* execute(sql`INSERT INTO user_activity_days (day, user_id) VALUES (${day}::date, ${id}) ON CONFLICT DO NOTHING`)
      yield* execute(sql`UPDATE users SET last_active_at = ${now} WHERE id = ${id}`)
    })

    /** Username or idpId containing `search`, case-insensitively; everyone for "". */
    const matches = (search: string) =>
      sql`(position(lower(${search}) in lower(username)) > 0 OR position(lower(${search}) in lower(idp_id)) > 0)`

    /**
     * The administrators' user list (docs/rules.md#user-administration): `search` matches a username or idpId
     * substring.
     */
    const list = Effect.fn("Users.list")(function*(query: {
      readonly page: number
      readonly limit: number
      readonly search?: string | undefined
    }) {
      const search = query.search ?? ""
      const { items, page, total } = yield* pageOf(
        AdminUserRow,
        query,
        ({ limit, offset }) =>
          sql`SELECT id, username, idp_id, role, balance_cents, banned_at, created_at, last_active_at,
                     (two_factor_enabled AND two_factor_secret IS NOT NULL) AS two_factor_enabled
              FROM users WHERE ${matches(search)} ORDER BY id LIMIT ${limit} OFFSET ${offset}`,
        sql`SELECT count(*) AS n FROM users WHERE ${matches(search)}`
      )
      return { users: items, total, page }
    })

    return { create, findById, find, setRole, grantAdmin, admins, signIn, signInWith, ban, unban, recordActivity, list } as const
  }),
  dependencies: [ProvablyFair.Default]
}) {}
