/**
 * Builds the service into dist/main.mjs, one ES module (esbuild), which `npm start` runs with plain
 * node: one file to load instead of thousands of modules resolved and compiled one by one, so a
 * (re)start is ready in a few seconds (docs/decisions.md "Start-up").
 * Packages that load files of their own at run time (PGlite's WebAssembly, the GeoIP data, the
 * development identity provider) stay in node_modules.
 */
import { build } from "esbuild"

await build({
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
})
