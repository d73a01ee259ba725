// `--merge`: a re-run of some cases replaces their figures in earlier results and keeps the rest.
import { describe, expect, it } from "vitest"
import { mergeResults } from "../src/harness/mergeResults.js"
import { parseOptions, UsageError } from "../src/harness/options.js"
import type { BenchResults, CaseRunSummary } from "../src/harness/report.js"
import type { Figure } from "../src/harness/types.js"

const stats = (median: number) => ({
  n: 1,
  median,
  p25: median,
  p75: median,
  mad: 0,
  min: median,
  max: median,
})

const figure = (caseName: string, size: number, median: number): Figure =>
  ({
    kind: "comparison",
    case: caseName,
    group: "g",
    series: `${caseName} series`,
    size: { value: size, unit: "messages" },
    unit: "ms",
    subject: { label: "s", stats: stats(median) },
  }) as unknown as Figure

const run = (caseName: string, size: number): CaseRunSummary =>
  ({
    case: caseName,
    group: "g",
    description: "",
    size: { value: size, unit: "messages" },
    durationMs: 1,
    peakRssBytes: 1,
    peakHeapUsedBytes: 1,
    figureCount: 1,
  }) as CaseRunSummary

describe("mergeResults", () => {
  it("replaces what was re-run (a case at the sizes it ran), keeps the rest, and records the re-run", () => {
    const previous = {
      schemaVersion: 1,
      mode: "full",
      seed: 7,
      startedAt: "2026-01-01T00:00:00.000Z",
      durationMs: 1000,
      runs: [run("fork", 10), run("fork", 100), run("other", 10)],
      figures: [figure("fork", 10, 5), figure("fork", 100, 50), figure("other", 10, 1)],
      curves: [],
    } as unknown as BenchResults
    const merged = mergeResults(previous, [run("fork", 10)], [figure("fork", 10, 2)], {
      startedAt: "2026-01-02T00:00:00.000Z",
      durationMs: 500,
    })
    // fork@100 was not re-run: its figure and run stay.
    expect(merged.figures.map((f) => [f.case, f.size?.value, f.subject.stats.median])).toEqual([
      ["fork", 100, 50],
      ["other", 10, 1],
      ["fork", 10, 2],
    ])
    expect(merged.runs.map((r) => [r.case, r.size?.value])).toEqual([
      ["fork", 100],
      ["other", 10],
      ["fork", 10],
    ])
    expect(merged.durationMs).toBe(1500)
    expect(merged.startedAt).toBe(previous.startedAt)
    expect(merged.reruns).toEqual([{ cases: ["fork@10"], startedAt: "2026-01-02T00:00:00.000Z" }])
  })

  it("replaces every figure of a case that runs without sizes", () => {
    const unsized = (caseName: string) => ({ ...run(caseName, 0), size: undefined }) as CaseRunSummary
    const previous = {
      schemaVersion: 1,
      mode: "full",
      seed: 7,
      startedAt: "2026-01-01T00:00:00.000Z",
      durationMs: 10,
      runs: [unsized("changes")],
      figures: [figure("changes", 1, 5), figure("changes", 10, 6)],
      curves: [],
    } as unknown as BenchResults
    const merged = mergeResults(previous, [unsized("changes")], [figure("changes", 1, 4)], {
      startedAt: "2026-01-02T00:00:00.000Z",
      durationMs: 1,
    })
    expect(merged.figures.map((f) => [f.case, f.size?.value])).toEqual([["changes", 1]])
    expect(merged.runs).toHaveLength(1)
  })

  it("is asked for with --merge and at least one --case; it then updates the docs", () => {
    expect(parseOptions(["--case", "fork", "--merge"], {}).merge).toBe(true)
    expect(parseOptions(["--case", "fork", "--merge"], {}).updateDocs).toBe(true)
    expect(parseOptions(["--case", "fork"], {}).updateDocs).toBe(false)
    expect(() => parseOptions(["--merge"], {})).toThrow(UsageError)
  })
})
