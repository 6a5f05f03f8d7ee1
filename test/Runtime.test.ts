/**
 * The suite runs on the Node release the project pins (the `node` devDependency, which npm puts first
 * on the PATH of its scripts), not on whatever Node the machine has.
 */
import { describe, expect, it } from "vitest"
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"

const pinned = JSON.parse(readFileSync("package.json", "utf8")).devDependencies.node as string

describe("runtime", () => {
  it("runs on the pinned Node 24", () => {
    expect(pinned).toMatch(/^24\.\d+\.\d+$/)
    expect(process.version).toBe(`v${pinned}`)
    // What `node` means to the scripts and tools the tests start.
    expect(execFileSync("node", ["--version"], { encoding: "utf8" }).trim()).toBe(`v${pinned}`)
  })
})
