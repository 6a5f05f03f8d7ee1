/**
 * How `npm start` runs the built service and `npm run cli` the operator commands (package.json's `start` and `cli`
 * scripts: node, its flags, the bundle), so that benchmarks and tests start them exactly the same way and
 * measure what production runs. The bundles are scripts/build.mjs's (the test run builds them once, in
 * test/support/globalSetup.ts).
 */
import { readFileSync } from "node:fs"

const scripts: Record<string, string> = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).scripts

/** node's arguments in `script` after its build step (`npm run -s build && node ...`), checked to run `bundle`. */
const nodeArgsOf = (name: string, bundle: string) => {
  const text = scripts[name]!.split("&& ").at(-1)!
  const [command, ...args] = text.split(" ")
  if (command !== "node" || !args.includes(bundle)) throw new Error(`unexpected ${name} script: ${scripts[name]}`)
  return args
}

/** node's arguments for the service, e.g. `["--enable-source-maps", ..., "dist/main.mjs"]`. */
export const serviceArgs: ReadonlyArray<string> = nodeArgsOf("start", "dist/main.mjs")

/** node's arguments for the operator commands, before the command's own: `["--enable-source-maps", "dist/cli.mjs"]`. */
export const cliArgs: ReadonlyArray<string> = nodeArgsOf("cli", "dist/cli.mjs")
