/**
 * Builds the service into dist/main.mjs, one ES module (esbuild), which `npm start` runs with plain
 * node: one file to load instead of thousands of modules resolved and compiled one by one, so a
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
    entryPoints: { main: "src/main.ts" },
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
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" }
  }),
  webUpToDate() ? undefined : buildWeb({ configFile: "web/vite.config.mjs" })
])
