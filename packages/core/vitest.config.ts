import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    passWithNoTests: true,
    testTimeout: 240_000,
    hookTimeout: 240_000,
  },
})
