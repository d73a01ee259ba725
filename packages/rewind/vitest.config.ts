import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Run-wide temp directories (the code cache, the hook servers' runtime dir) for the run.
    globalSetup: ["test/isolatedEnv.ts"],
    // Removes each test's temp directories (test/tempDirs.ts), in every file.
    setupFiles: ["test/removeTempDirs.ts"],
    // Test files share one module graph per worker: importing Effect and the packages again for
    // every file was about half of the suite's time, and no test relies on a fresh module.
    isolate: false,
    passWithNoTests: true,
    testTimeout: 240_000,
    hookTimeout: 240_000,
  },
})
