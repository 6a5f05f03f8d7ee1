/**
 * Code comments cite the rules by their place in the docs (a docs file and an anchor in it) instead of
 * restating them. Every such citation in src/ and test/ must point at an anchor that exists: a heading
 * (by GitHub's slug rules) or an explicit `<a id="...">`.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const CITATION = /docs\/([a-z0-9_-]+)\.md#([a-z0-9_-]+)/g

/** GitHub's heading slug: lower case, punctuation dropped (letters, digits, `_`, `-` and spaces kept), spaces to `-`. */
export const slug = (heading: string): string =>
  heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replace(/ /g, "-")

/** Every anchor a Markdown document defines; a repeated heading gets `-1`, `-2`, ... as on GitHub. */
export const anchorsOf = (markdown: string): ReadonlySet<string> => {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  let fenced = false
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced
    if (fenced) continue
    const heading = /^#{1,6}\s+(.*)$/.exec(line)
    if (heading !== null) {
      const base = slug(heading[1]!)
      const count = seen.get(base) ?? 0
      seen.set(base, count + 1)
      anchors.add(count === 0 ? base : `${base}-${count}`)
    }
    for (const [, id] of line.matchAll(/<a id="([^"]+)"/g)) anchors.add(id!)
  }
  return anchors
}

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

describe("docs anchors cited in code", () => {
  it("slugs headings as GitHub does", () => {
    expect(slug("Notifications, realtime and live drops")).toBe("notifications-realtime-and-live-drops")
    expect(slug("The house-edge rule (`rtp`)")).toBe("the-house-edge-rule-rtp")
    expect([...anchorsOf("# A\n## A\n<a id=\"b-c\"></a>\n```\n# not a heading\n```")]).toEqual(["a", "a-1", "b-c"])
  })

  it("every docs/<file>.md#<anchor> in src/ and test/ exists", () => {
    const anchors = new Map<string, ReadonlySet<string>>()
    const missing: Array<string> = []
    let cited = 0
    for (const file of [...sourceFiles(join(ROOT, "src")), ...sourceFiles(join(ROOT, "test"))]) {
      const lines = readFileSync(file, "utf8").split("\n")
      lines.forEach((line, index) => {
        for (const [citation, doc, anchor] of line.matchAll(CITATION)) {
          cited++
          if (!anchors.has(doc!)) {
            let markdown = ""
            try {
              markdown = readFileSync(join(ROOT, "docs", `${doc}.md`), "utf8")
            } catch {
              // A missing document has no anchors: every citation of it is reported below.
            }
            anchors.set(doc!, anchorsOf(markdown))
          }
          if (!anchors.get(doc!)!.has(anchor!)) missing.push(`${relative(ROOT, file)}:${index + 1}: ${citation}`)
        }
      })
    }
    expect(cited).toBeGreaterThan(100)
    expect(missing).toEqual([])
  })
})
