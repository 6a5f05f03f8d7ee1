/**
 * How `npm start` runs the built service (package.json's `start` script: node, its flags, the bundle),
 * so that benchmarks start it exactly the same way and measure what production runs.
 */
import { readFileSync } from "node:fs"

const start: string = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).scripts.start
const [command, ...args] = start.split(" ")
if (command !== "node" || !args.includes("dist/main.mjs")) throw new Error(`unexpected start script: ${start}`)

/** node's arguments for the service, e.g. `["--enable-source-maps", ..., "dist/main.mjs"]`. */
export const serviceArgs: ReadonlyArray<string> = args
