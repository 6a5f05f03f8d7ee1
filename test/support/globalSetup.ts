/**
 * Once per test run:
 * - the service and the operator commands are built (`npm run build`: dist/main.mjs, dist/cli.mjs and the pages),
 *   which the tests that start them as processes run as `npm start` and `npm run cli` do;
 * - an empty PGlite cluster is initialised (the slow part, ~5 s) and dumped, so each test file starts its own
 *   embedded database from the dump in about a second.
 */
import { PGlite } from "@electric-sql/pglite"
import { spawnSync } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    pgliteDump: string
  }
}

export default async function setup(project: TestProject) {
  const built = spawnSync(process.execPath, ["scripts/build.mjs"], { encoding: "utf8" })
  if (built.status !== 0) throw new Error(`npm run build failed:\n${built.stdout}${built.stderr}`)
  const dir = await mkdtemp(join(tmpdir(), "gp-pglite-"))
  const file = join(dir, "empty-cluster.tar")
  if (!process.env.DATABASE_URL) {
    const db = new PGlite()
    await db.waitReady
    const dump = await db.dumpDataDir("none")
    await writeFile(file, Buffer.from(await dump.arrayBuffer()))
    await db.close()
  }
  project.provide("pgliteDump", file)
  return async () => {
    await rm(dir, { recursive: true, force: true })
  }
}
