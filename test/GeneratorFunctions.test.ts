/**
 * A generator function is made once (at a module's top level, or once when a layer is built), never on every call:
 * per call, an operation is `Effect.fnUntraced(function*(...) {...})` (or `Effect.fn`) made once, not
 * `(...) => Effect.gen(function*() {...})`. V8 gives each generator closure an initial map of its own, in the old
 * generation, and that map keeps the closure and everything it captured (for a request: the request, its fiber, its
 * rows) alive through young-generation collections; measured, nearly all of a request then reached the old
 * generation (docs/decisions.md "What reaches the old generation").
 */
import { describe, expect, it } from "vitest"
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import ts from "typescript"

/** Where `source` makes a generator function on every call of some function: `line: text`. */
const generatorsMadePerCall = (file: string, source: string): Array<string> => {
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true)
  const found: Array<string> = []
  // The body of Effect.fn/Effect.fnUntraced runs on every call, like any function's.
  const isOperationBody = (node: ts.Node) =>
    ts.isFunctionExpression(node) && node.asteriskToken !== undefined && ts.isCallExpression(node.parent) &&
    /^Effect\.fn(Untraced)?\b/.test(node.parent.expression.getText(tree))
  const visit = (node: ts.Node, perCall: boolean) => {
    if (perCall && ts.isFunctionExpression(node) && node.asteriskToken !== undefined) {
      const { line } = tree.getLineAndCharacterOfPosition(node.getStart(tree))
      found.push(`${file}:${line + 1}: ${source.split("\n")[line]!.trim()}`)
    }
    const runsPerCall = ts.isArrowFunction(node) || ts.isMethodDeclaration(node) || ts.isAccessor(node) ||
      ((ts.isFunctionExpression(node) || ts.isFunctionDeclaration(node)) && node.asteriskToken === undefined) ||
      isOperationBody(node)
    ts.forEachChild(node, (child) => visit(child, perCall || runsPerCall))
  }
  visit(tree, false)
  return found
}

describe("generator functions", () => {
  it("are made once: none in src/ is made inside a function that runs per call", () => {
    const files = execFileSync("git", ["ls-files", "src/*.ts", "src/**/*.ts"], { encoding: "utf8" }).trim().split("\n")
    expect(files.length).toBeGreaterThan(50)
    expect(files.flatMap((file) => generatorsMadePerCall(file, readFileSync(file, "utf8")))).toEqual([])
  })

  it("the check finds a generator made per call, also inside an operation's own body", () => {
    const source = [
      "const once = Effect.gen(function*() { return 1 })",
      "const op = Effect.fnUntraced(function*(a: number) { return a })",
      "const perCall = (a: number) => Effect.gen(function*() { return a })",
      "const nested = Effect.fnUntraced(function*(a: number) { return yield* Effect.gen(function*() { return a }) })",
      "const layer = Effect.gen(function*() { const inner = Effect.gen(function*() { return 2 }); return inner })"
    ].join("\n")
    expect(generatorsMadePerCall("example.ts", source).map((hit) => hit.split(": ")[0])).toEqual(["example.ts:3", "example.ts:4"])
  })
})
