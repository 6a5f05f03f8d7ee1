/**
 * The served OpenAPI document passes Redocly CLI's recommended rules with no error and no warning,
 * and it documents this deployment (servers, contact) with fairness examples that really verify.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { caseRoll, hashServerSeed } from "../../src/services/games/ProvablyFair"
import { makeTestClient } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const REDOCLY = join(process.cwd(), "node_modules", "@redocly", "cli", "bin", "cli.js")

/**
 * The sign-in endpoints answer a redirect (302) and nothing else, which the rule that every operation
 * has a 2XX answer cannot know; they are the only exceptions, listed by location.
 */
const REDIRECTS_ONLY = {
  "openapi.json": {
    "operation-2xx-response": [
      "#/paths/~1api~1auth~1idp~1login/get/responses",
      "#/paths/~1api~1auth~1idp~1callback/get/responses"
    ]
  }
}

interface LintProblem {
  readonly ruleId: string
  readonly severity: string
  readonly message: string
  readonly location: ReadonlyArray<{ readonly pointer: string }>
}

const lint = (document: unknown) =>
  Effect.acquireUseRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "gp-openapi-"))),
    (dir) =>
      Effect.promise(async () => {
        await writeFile(join(dir, "openapi.json"), JSON.stringify(document))
        await writeFile(join(dir, ".redocly.lint-ignore.yaml"), JSON.stringify(REDIRECTS_ONLY))
        // Exit status 1 when a problem is an error: the JSON report is read either way.
        const run = promisify(execFile)(
          process.execPath,
          [REDOCLY, "lint", "openapi.json", "--extends=recommended", "--format=json", "--max-problems=1000"],
          {
            cwd: dir,
            env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
            maxBuffer: 16 * 1024 * 1024
          }
        )
        const { stdout } = await run.catch((error: { stdout: string }) => error)
        return (JSON.parse(stdout) as { problems: ReadonlyArray<LintProblem> }).problems
          .filter((problem) => problem.severity !== "ignore")
          .map((problem) => `${problem.severity} ${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`)
      }),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

layer(TestDatabase)("the OpenAPI document", (it) => {
  it.scoped("passes Redocly's recommended rules: 0 errors, 0 warnings", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { publicUrl: "https://api.game-platform.test" } })
      const document = (yield* client.get("/api/docs-json")).body
      expect(yield* lint(document)).toEqual([])
    }), 60_000)

  it.scoped("documents this deployment: its servers and contact are PUBLIC_URL", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient({ config: { publicUrl: "https://api.game-platform.test" } })
      const document = (yield* client.get("/api/docs-json")).body
      expect(document.servers).toEqual([{ url: "https://api.game-platform.test", description: "This deployment" }])
      expect(document.info.contact).toEqual({ name: "API reference", url: "https://api.game-platform.test/api/docs" })
      expect(document.info.license).toEqual({ name: "Proprietary", identifier: "LicenseRef-Proprietary" })
      const operations = Object.values(document.paths).flatMap((methods: any) => Object.values(methods)) as Array<any>
      expect(operations.filter((operation) => !operation.summary || !operation.description)).toEqual([])
      expect(document.tags.filter((tag: any) => !tag.description)).toEqual([])
    }))

  it.scoped("the verification example of an opening verifies", () =>
    Effect.gen(function*() {
      const client = yield* makeTestClient()
      const document = (yield* client.get("/api/docs-json")).body
      const verify = document.paths["/api/cases/openings/{id}/verify"].get.responses["200"].content["application/json"]
        .example
      expect(hashServerSeed(verify.serverSeed)).toBe(verify.serverSeedHash)
      expect(caseRoll(verify.serverSeed, verify.clientSeed, verify.nonce)).toBe(verify.roll)
      expect(verify.roll).toBeGreaterThanOrEqual(verify.rangeStart)
      expect(verify.roll).toBeLessThanOrEqual(verify.rangeEnd)
      const open = document.paths["/api/cases/{id}/open"].post.responses["200"].content["application/json"].example
      expect([open.roll, open.serverSeedHash, open.item.id]).toEqual([verify.roll, verify.serverSeedHash, verify.rollItemId])
    }))
})
