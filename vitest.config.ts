import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    setupFiles: ["test/support/effectVitestMethods.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: one worker per core; each test file brings its own database.
    pool: "forks",
    // A worker runs its files one after the other in one module cache (not isolated): importing the app for each
    // of ~100 files took a third of each run (collection 330-355 s of 670-960 s on 2026-11-28's machine; 20 s so).
    // It holds because a file shares nothing through modules: each builds its own layers (database, stores,
    // services), no test sets process.env or mocks a module, what is global (metrics) is read as a change, and
    // @effect/vitest's `it`, which its `layer(...)` changes, is reset before each file (the setup file).
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } }
  }
})
