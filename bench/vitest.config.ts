import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Test files share one module graph per worker: importing Effect and the packages again for
    // every file was about half of the suite's time, and no test relies on a fresh module.
    isolate: false,
    // The quick harness run spawns a process per case: about 20 s, but minutes on a 2-core machine
    // shared with other builds. These are ceilings, not expectations.
    testTimeout: 600_000,
    hookTimeout: 600_000,
  },
})
