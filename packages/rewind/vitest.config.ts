import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The built bin writes its code cache under XDG_CACHE_HOME: a temporary one for the run.
    globalSetup: ["test/isolatedCache.ts"],
    // Test files share one module graph per worker: importing Effect and the packages again for
    // every file was about half of the suite's time, and no test relies on a fresh module.
    isolate: false,
    passWithNoTests: true,
    testTimeout: 240_000,
    hookTimeout: 240_000,
  },
})
