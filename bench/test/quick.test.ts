// Runs the whole harness in quick mode, as `npm run bench -- --quick` does, and checks that the
// results it writes are complete and well-formed. Timings are never asserted: only that every case
// ran at every size, that each figure carries consistent statistics, and that the reports exist.
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { BENCH_DIR, SIZES } from "../src/harness/options.js"
import { canMeasureProcessMemory } from "../src/harness/processTiming.js"
import type { BenchResults } from "../src/harness/report.js"
import type { Stats } from "../src/harness/stats.js"
import { CASES } from "../src/registry.js"

const wellFormed = (s: Stats) => {
  expect(s.n).toBeGreaterThanOrEqual(1)
  for (const v of [s.median, s.p25, s.p75, s.mad, s.min, s.max]) expect(Number.isFinite(v)).toBe(true)
  expect(s.min).toBeLessThanOrEqual(s.p25)
  expect(s.p25).toBeLessThanOrEqual(s.median)
  expect(s.median).toBeLessThanOrEqual(s.p75)
  expect(s.p75).toBeLessThanOrEqual(s.max)
  expect(s.mad).toBeGreaterThanOrEqual(0)
}

describe("npm run bench -- --quick", () => {
  let out: string
  let status: number | null
  let stderr: string
  let results: BenchResults
  let markdown: string

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), "rewind-bench-test-"))
    const env = { ...process.env }
    for (const key of Object.keys(env)) if (key.startsWith("BENCH_")) delete env[key]
    // Asynchronous on purpose: a synchronous spawn would block this worker's event loop for the
    // whole run, and vitest's worker RPC times out on a busy machine.
    const child = spawn(
      process.execPath,
      [
        "--expose-gc",
        "--import",
        "tsx",
        join(BENCH_DIR, "src", "main.ts"),
        "--quick",
        "--out",
        out,
        "--no-docs",
      ],
      { cwd: BENCH_DIR, env, stdio: ["ignore", "ignore", "pipe"] },
    )
    let log = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      log += chunk
    })
    status = await new Promise<number | null>((resolve, reject) => {
      child.on("error", reject)
      child.on("close", resolve)
    })
    stderr = log
    results = JSON.parse(readFileSync(join(out, "quick.json"), "utf8")) as BenchResults
    markdown = readFileSync(join(out, "quick.md"), "utf8")
  })
  afterAll(() => rmSync(out, { recursive: true, force: true }))

  it("exits 0 with every case run at every quick size, none failing", () => {
    expect(status, stderr).toBe(0)
    expect(results.schemaVersion).toBe(1)
    expect(results.mode).toBe("quick")
    const expected = CASES.flatMap((c) =>
      (c.sizes?.(SIZES.quick, "quick") ?? [undefined]).map((size) => `${c.name}@${size ?? ""}`),
    )
    expect(results.runs.map((r) => `${r.case}@${r.size?.value ?? ""}`)).toEqual(expected)
    for (const run of results.runs) {
      expect(run.error, `${run.case} failed`).toBeUndefined()
      expect(run.figureCount).toBeGreaterThan(0)
      expect(run.peakRssBytes).toBeGreaterThan(0)
      expect(run.peakHeapUsedBytes).toBeGreaterThan(0)
    }
    expect(results.figures.length).toBe(results.runs.reduce((n, r) => n + r.figureCount, 0))
  })

  it("records the machine it ran on", () => {
    const m = results.machine
    expect(m.cores).toBeGreaterThan(0)
    expect(m.memoryBytes).toBeGreaterThan(0)
    expect(m.cpuModel.length).toBeGreaterThan(0)
    expect(m.node).toBe(process.version)
    expect(m.git).toMatch(/^git version \d+\.\d+/)
  })

  it("gives every comparison consistent statistics, its baseline or limit, and a ratio", () => {
    const comparisons = results.figures.filter((f) => f.kind === "comparison")
    expect(comparisons.length).toBeGreaterThan(0)
    for (const f of comparisons) {
      wellFormed(f.subject.stats)
      expect(f.baseline !== undefined || f.limit !== undefined, f.series).toBe(true)
      if (f.baseline !== undefined) {
        wellFormed(f.baseline.stats)
        wellFormed(f.baseline.ratio)
        expect(f.baseline.ratio.median).toBeGreaterThan(0)
      }
      if (f.limit !== undefined) {
        wellFormed(f.limit.stats)
        wellFormed(f.limit.ratio)
        expect(f.limit.percentOfLimit).toBeGreaterThan(0)
      }
      if (f.target !== undefined) expect(typeof f.target.met).toBe("boolean")
      expect(f.runPeakRssBytes).toBeGreaterThan(0)
    }
  })

  it("measures the physical limits and the git sizes for every workspace size", () => {
    for (const files of SIZES.quick.files) {
      const at = results.figures.filter((f) => f.case === "shadow-git" && f.size?.value === files)
      const limits = at.filter((f) => f.kind === "limit").map((f) => f.series)
      expect(limits).toEqual(
        expect.arrayContaining(["read every file", "SHA-256 in memory", "read+hash every file"]),
      )
      for (const f of at.filter((x) => x.kind === "size")) {
        expect(f.unit).toBe("bytes")
        expect(f.subject.stats.median).toBeGreaterThan(0)
      }
      // Git's peak RSS is read through /usr/bin/time, when the machine has it.
      expect(at.some((f) => f.subject.processPeakRssBytes !== undefined)).toBe(canMeasureProcessMemory)
    }
  })

  it("draws scale curves with a growth verdict, and carries the foundation targets", () => {
    expect(results.curves.length).toBeGreaterThan(0)
    for (const c of results.curves) {
      expect(c.points.length).toBeGreaterThanOrEqual(2)
      expect(c.measuredGrowth.length).toBeGreaterThan(0)
    }
    const targets = results.figures.filter((f) => f.target !== undefined).map((f) => f.series)
    expect(targets).toEqual(
      expect.arrayContaining([
        "activeBranch after 100 rewinds",
        "evaluateRewindTarget (branch view memoised)",
      ]),
    )
  })

  it("writes a Markdown report with a row for every figure", () => {
    expect(markdown).toMatch(/^# Rewind benchmark results \(quick\)/)
    for (const heading of ["### workspace", "### conversation", "### Physical limits", "### Scale curves"]) {
      expect(markdown).toContain(heading)
    }
    expect(markdown).toContain(results.machine.git)
    for (const f of results.figures) expect(markdown).toContain(f.series)
  })
})
