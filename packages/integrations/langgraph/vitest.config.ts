import { defineConfig } from "vitest/config"

// vitest 4 (this package's own devDependency; the rest of the repo is on vitest 3.2): LangGraph's
// validation suite needs it, with `--globals` (it calls describe/it/expect without importing them).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globals: true,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
})
