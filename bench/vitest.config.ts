import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The quick harness run spawns a process per case; on a loaded 2-core machine that takes a while.
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
})
