/** Choosing the infrastructure from the configuration (docs/rules.md#embedded-defaults). */
import { SqlClient } from "@effect/sql"
import { expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { AppConfig } from "../../src/layers/AppConfig"
import { DatabaseFromConfig } from "../../src/layers/Infrastructure"
import { testConfig } from "../support/TestApp"

it.scoped("the embedded database starts in a DATA_DIR whose parents do not exist yet", () =>
  Effect.gen(function*() {
    const parent = mkdtempSync(join(tmpdir(), "gp-data-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(parent, { recursive: true, force: true })))
    const dataDir = join(parent, "not", "there", "yet")
    const database = DatabaseFromConfig.pipe(
      Layer.provide(Layer.succeed(AppConfig, { ...testConfig, dataDir, databaseUrl: Option.none() }))
    )
    const [row] = yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ one: number }>`SELECT 1 AS one`).pipe(
      Effect.provide(database)
    )
    expect(row).toEqual({ one: 1 })
    expect(statSync(join(dataDir, "pglite")).isDirectory()).toBe(true)
  }), { timeout: 60_000 })
