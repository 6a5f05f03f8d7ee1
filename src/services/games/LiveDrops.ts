/**
 * The live-drop feed (docs/rules.md#live-drops): rows in `live_drops` written in the transaction of the win, and a
 * broadcast on channel `live-drops` after the commit, which Redis pub/sub fans out to every instance.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect, Schema, type Scope } from "effect"
import { Broadcast, type Deliver, type Publication } from "../../layers/stores/Broadcast"
import { type DropSource, LiveDrop } from "../../schema/games/Game"
import { NotFound, type ServiceUnavailable } from "../../schema/platform/Errors"
import type { ItemId, UserId } from "../../schema/platform/Ids"
import { afterCommit, inTransaction, rowsOf, singleOf } from "../platform/SqlRows"

const LIVE_DROPS_CHANNEL = "live-drops"

const DropRow = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  username: Schema.String,
  itemId: Schema.String,
  name: Schema.String,
  rarity: Schema.String,
  valueCents: Schema.String,
  imageUrl: Schema.String,
  source: Schema.String,
  caseName: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf
})

const DropIdRow = Schema.Struct({ id: Schema.String })
const ExistsRow = Schema.Struct({ user: Schema.Boolean, item: Schema.Boolean })

/** A committed drop as the message its subscribers get, to publish with others (`Broadcast.publish`). */
const publication = (drop: LiveDrop): Publication => ({
  channel: LIVE_DROPS_CHANNEL,
  message: JSON.stringify(Schema.encodeSync(LiveDrop)(drop))
})

/** Drops as `recorded` returns them: the rows of DropRow as JSON. */
export const RecordedDrops = Schema.Array(Schema.Struct({ ...DropRow.fields, createdAt: Schema.Date }))

const toDrop = (row: typeof DropRow.Type): LiveDrop =>
  Schema.decodeUnknownSync(LiveDrop)({
    id: row.id,
    user: { id: row.userId, username: row.username },
    item: { id: row.itemId, name: row.name, rarity: row.rarity, valueCents: Number(row.valueCents), imageUrl: row.imageUrl },
    source: row.source,
    caseName: row.caseName,
    createdAt: row.createdAt.toISOString()
  })

export class LiveDrops extends Effect.Service<LiveDrops>()("app/LiveDrops", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const broadcast = yield* Broadcast

    /** One drop by id, or the newest `limit` when `id` is null. */
    const select = (id: string | null, limit: number) =>
      sql`SELECT d.id, d.user_id, u.username, d.item_id, i.name, i.rarity, i.value_cents, i.image_url, d.source,
                 d.case_name, d.created_at
          FROM live_drops d JOIN users u ON u.id = d.user_id JOIN items i ON i.id = d.item_id
          WHERE ${id}::bigint IS NULL OR d.id = ${id}::bigint ORDER BY d.id DESC LIMIT ${limit}`

    /** A committed drop, which is there to read. */
    const byId = (id: string) => singleOf(DropRow, select(id, 1))

    /** Committed drops, in id order. */
    const byIds = (ids: ReadonlyArray<string>) =>
      rowsOf(DropRow, sql`
        SELECT d.id, d.user_id, u.username, d.item_id, i.name, i.rarity, i.value_cents, i.image_url, d.source,
               d.case_name, d.created_at
        FROM live_drops d JOIN users u ON u.id = d.user_id JOIN items i ON i.id = d.item_id
        WHERE d.id = ANY(${ids}::bigint[]) ORDER BY d.id`)

    interface NewDrop {
      readonly userId: UserId
      readonly itemId: ItemId
      readonly source: DropSource
      readonly caseName: string | null
    }

    /** Records a drop inside the caller's transaction; `announce` it after the commit. Returns its id. */
    const record = Effect.fn("LiveDrops.record")(function*(drop: NewDrop) {
      const now = new Date(yield* Clock.currentTimeMillis)
      return (yield* singleOf(DropIdRow, sql`
        INSERT INTO live_drops (user_id, item_id, source, case_name, created_at)
        VALUES (${drop.userId}, ${drop.itemId}, ${drop.source}, ${drop.caseName}, ${now}) RETURNING id`)).id
    })

    /**
     * A drop as a step (`dropped`) of a caller's one-statement write, taken when `onlyIf` holds;
     * `publication` is its message once the write has committed.
     */
    const recordStep = (drop: NewDrop, at: Date, onlyIf: Statement.Fragment) => sql`
      dropped AS (
        INSERT INTO live_drops (user_id, item_id, source, case_name, created_at)
        SELECT ${drop.userId}, ${drop.itemId}, ${drop.source}, ${drop.caseName}, ${at} WHERE ${onlyIf}
        RETURNING id
      )`

    /**
     * The drops a step of the statement inserted (`inserted`: a relation of `live_drops` rows), as a JSON array
     * (RecordedDrops), for `announceRecorded`: the statement returns what a publication needs, nothing is read back.
     */
    const recorded = (inserted: Statement.Fragment) => sql`
      (SELECT COALESCE(json_agg(json_build_object('id', d.id::text, 'userId', d.user_id::text, 'username', u.username,
                                                  'itemId', d.item_id::text, 'name', i.name, 'rarity', i.rarity,
                                                  'valueCents', i.value_cents::text, 'imageUrl', i.image_url,
                                                  'source', d.source, 'caseName', d.case_name, 'createdAt', d.created_at)
                                ORDER BY d.id), '[]')
       FROM ${inserted} d JOIN users u ON u.id = d.user_id JOIN items i ON i.id = d.item_id)`

    /** Publishes drops a write recorded (`recorded`), in one publication, once it has committed (see `afterCommit`). */
    const announceRecorded = (drops: typeof RecordedDrops.Type) =>
      drops.length === 0 ? Effect.void : afterCommit(broadcast.publish(...drops.map((row) => publication(toDrop(row)))))

    /**
     * Publishes committed drops, read by their ids in one statement, to every instance's subscribers in one
     * publication (see `afterCommit`).
     */
    const announce = Effect.fn("LiveDrops.announce")(function*(...dropIds: ReadonlyArray<string>) {
      if (dropIds.length === 0) return
      yield* afterCommit(Effect.flatMap(byIds(dropIds), (rows) => broadcast.publish(...rows.map((row) => publication(toDrop(row))))))
    })

    const recent = Effect.fn("LiveDrops.recent")(function*(limit: number) {
      const rows = yield* rowsOf(DropRow, select(null, limit))
      return rows.map(toDrop)
    })

    /** Admin `POST /live-drops/emit`: a drop of any item for any user, recorded and announced. */
    const emit = Effect.fn("LiveDrops.emit")(function*(drop: { readonly userId: UserId; readonly itemId: ItemId; readonly source: DropSource }) {
      const id = yield* inTransaction(sql)(emitInTransaction(drop))
      return toDrop(yield* byId(id))
    })

    /** What `emit` runs in its transaction: the user and the item checked, the drop recorded and announced. */
    const emitInTransaction = Effect.fnUntraced(function*(
      drop: { readonly userId: UserId; readonly itemId: ItemId; readonly source: DropSource }
    ) {
      // The item locked as a foreign key's check would, until the drop is written (sql/0029).
      const exists = yield* singleOf(ExistsRow, sql`
        SELECT EXISTS (SELECT 1 FROM users WHERE id = ${drop.userId}) AS user,
               EXISTS (SELECT 1 FROM items WHERE id = ${drop.itemId} FOR KEY SHARE) AS item`)
      if (!exists.user) return yield* NotFound.of("User")
      if (!exists.item) return yield* NotFound.of("Item")
      const id = yield* record({ ...drop, caseName: null })
      yield* announce(id)
      return id
    })

    /** Every drop announced after the subscription, as JSON strings, given to `deliver` until the scope closes. */
    const subscribe = (deliver: Deliver): Effect.Effect<void, ServiceUnavailable, Scope.Scope> =>
      broadcast.subscribe(LIVE_DROPS_CHANNEL, deliver)

    return { record, recordStep, recorded, publication, announceRecorded, announce, recent, emit, subscribe } as const
  })
}) {}
