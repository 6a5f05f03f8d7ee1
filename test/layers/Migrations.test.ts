import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { readdirSync } from "node:fs"
import { migrationsDirectory, runMigrations } from "../../src/layers/Migrations"
import { EmptyTestDatabase } from "../support/TestDatabase"

const files = readdirSync(migrationsDirectory).filter((f) => f.endsWith(".sql")).sort()

layer(Layer.merge(EmptyTestDatabase, NodeContext.layer))("Migrations", (it) => {
  it.effect("two instances starting at once apply every migration exactly once, and a restart applies none", () =>
    Effect.gen(function*() {
      const [first, second] = yield* Effect.all([runMigrations, runMigrations], { concurrency: 2 })
      const applied = [...first, ...second].map(([id, name]) => `${String(id).padStart(4, "0")}_${name}.sql`)
      expect(applied).toEqual(files)

      const sql = yield* SqlClient.SqlClient
      const recorded = yield* sql<{ migrationId: number }>`SELECT migration_id FROM schema_migrations ORDER BY 1`
      expect(recorded.map((r) => r.migrationId)).toEqual(files.map((f) => Number(f.slice(0, 4))))

      expect(yield* runMigrations).toEqual([])
      const tables = yield* sql<{ tablename: string }>`
        SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`
      expect(tables.map((t) => t.tablename)).toEqual(
        expect.arrayContaining(["case_items", "cases", "items", "schema_migrations", "transactions", "users"])
      )
    }))
})
