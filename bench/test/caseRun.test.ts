import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { runCase } from "../src/harness/caseRun.js"
import type { BenchCase } from "../src/harness/types.js"

const root = mkdtempSync(join(tmpdir(), "rewind-bench-caserun-test-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const config = (name: string) => ({
  caseName: name,
  size: 40,
  mode: "quick" as const,
  seed: 1,
  scratchDir: join(root, name),
  workspaceRoot: join(root, "workspaces"),
})

describe("a case run", () => {
  it("keeps the figures measured before a failure, reports the error, and cleans up", async () => {
    let scratch = ""
    let edited: ReadonlyArray<string> = []
    const failing: BenchCase = {
      name: "failing",
      group: "test",
      description: "measures once, changes the workspace, then throws",
      sizeUnit: "files",
      run: async (ctx) => {
        scratch = ctx.tempDir("scratch")
        await ctx.compare({
          series: "sum",
          subject: {
            kind: "in-process",
            label: "sum 1e4",
            fn: () => Array.from({ length: 1e4 }, (_, i) => i).reduce((a, b) => a + b),
          },
          baseline: {
            kind: "in-process",
            label: "sum 1e3",
            fn: () => Array.from({ length: 1e3 }, (_, i) => i).reduce((a, b) => a + b),
          },
        })
        edited = ctx.workspace(ctx.size!).edit(3, 7)
        throw new Error("boom")
      },
    }
    const result = await runCase(failing, config("failing"), () => {})
    expect(result.error).toMatch(/boom/)
    expect(result.figures.map((f) => f.series)).toEqual(["sum"])
    expect(result.figures[0]!.size).toEqual({ value: 40, unit: "files" })
    expect(result.figures[0]!.baseline!.ratio.median).toBeGreaterThan(0)
    expect(result.peakRssBytes).toBeGreaterThan(0)
    expect(existsSync(scratch)).toBe(false)
    // The shared workspace is back to its generated state for the next case.
    const reopened = await runCase(
      {
        name: "check",
        group: "test",
        description: "reads the shared workspace",
        run: async (ctx) => {
          expect(ctx.workspace(40).differing(edited)).toEqual([])
        },
      },
      config("check"),
      () => {},
    )
    expect(reopened.error).toBeUndefined()
  })
})
