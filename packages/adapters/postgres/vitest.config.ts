import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Closes the raw-SQL pool after each file (test/pgTest.ts).
    setupFiles: ["test/closeAdminPool.ts"],
    // Test files share one module graph per worker: importing Effect and the packages again for
    // every file was about half of the suite's time, and no test relies on a fresh module.
    isolate: false,
    passWithNoTests: true,
    testTimeout: 240_000,
    hookTimeout: 240_000,
  },
})
