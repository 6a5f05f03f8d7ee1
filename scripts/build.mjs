/**
 * Builds the service into dist/main.mjs and the operator commands (src/cli.ts) into dist/cli.mjs, each one ES
 * module (esbuild), which `npm start` and `npm run cli` run with plain node: one file to load instead of thousands of modules resolved and compiled one by one, so a
 * (re)start is ready in a few seconds (docs/decisions.md "Start-up").
 * Packages that load files of their own at run time (PGlite's WebAssembly, the GeoIP data, the
 * development identity provider) stay in node_modules.
 *
 * At the same time, the browser pages (`web/`, Vite) into dist/web, which the service serves at `/`
 * and `/admin` (src/http/platform/WebConsole.ts).
 */
import { build } from "esbuild"
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { build as buildWeb } from "vite"

const newest = (path) =>
  statSync(path).isDirectory()
    ? Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))))
    : statSync(path).mtimeMs

/** The pages are built again only when `web/` or the installed packages changed since the last build. */
const webUpToDate = () =>
  existsSync("dist/web/index.html") &&
  statSync("dist/web/index.html").mtimeMs > Math.max(newest("web"), newest("package-lock.json"))

await Promise.all([
  build({
    entryPoints: { main: "src/main.ts", cli: "src/cli.ts" },
    outdir: "dist",
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node24",
    sourcemap: "linked",
    logLevel: "warning",
    external: ["@electric-sql/pglite", "@electric-sql/pglite-socket", "geoip-country", "oidc-provider", "pg-native"],
    // Bundled CommonJS packages call require(); an ES module has none of its own.
    // The modules load with no stack frames (src/main.ts restores them before the service starts):
    // effect reads `new Error().stack` once while it loads, and under `--enable-source-maps` that made
    // Node parse this bundle's whole source map, ~80 MB kept on the heap for good and marked by every
    // full collection (docs/decisions.md#the-source-map). Now it is parsed when a stack is first printed.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url); Error.stackTraceLimit = 0;"
    }
  }),
  webUpToDate() ? undefined : buildWeb({ configFile: "web/vite.config.mjs" })
])
