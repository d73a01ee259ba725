/**
 * `npm run bench`: runs every registered case (each case at each of its sizes in a child process of
 * its own), then writes the results as JSON and Markdown (bench/results/latest.{json,md}, or
 * quick.{json,md} in quick mode) and, after a full run, the results section of docs/benchmarks.md.
 * Exits non-zero when a case failed; the results of the others are still written.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { bundleCaseRunner } from "./harness/caseBundle.js"
import type { CaseRunResult } from "./harness/caseRun.js"
import type { CaseRunConfig } from "./harness/context.js"
import { machineInfo } from "./harness/machine.js"
import { mergeResults } from "./harness/mergeResults.js"
import {
  BENCH_DIR,
  BUDGETS,
  parseOptions,
  REPO_DIR,
  type RunOptions,
  SIZES,
  UsageError,
} from "./harness/options.js"
import {
  type BenchResults,
  buildCurves,
  formatMs,
  RESULTS_SCHEMA_VERSION,
  renderMarkdown,
} from "./harness/report.js"
import type { BenchCase } from "./harness/types.js"
import { CASES } from "./registry.js"

const DOCS_FILE = join(REPO_DIR, "docs", "benchmarks.md")
const DOCS_START = "<!-- bench:results:start -->"
const DOCS_END = "<!-- bench:results:end -->"
/** A case run that takes longer than this is stopped (its process, by pid) and reported as failed. */
const CHILD_TIMEOUT_MS = 30 * 60 * 1000

const runChild = (
  benchCase: BenchCase,
  size: number | undefined,
  options: RunOptions,
  runRoot: string,
  workspaceRoot: string,
  caseRunner: string,
): Promise<CaseRunResult> =>
  new Promise((resolve) => {
    const id = `${benchCase.name}${size === undefined ? "" : `-${size}`}`
    const resultFile = join(runRoot, `${id}.result.json`)
    const config: CaseRunConfig & { resultFile: string } = {
      caseName: benchCase.name,
      size,
      mode: options.mode,
      seed: options.seed,
      scratchDir: join(runRoot, id),
      workspaceRoot,
      resultFile,
    }
    const started = performance.now()
    const child = spawn(process.execPath, ["--expose-gc", caseRunner], {
      cwd: BENCH_DIR,
      env: { ...process.env, BENCH_CASE_RUN: JSON.stringify(config) },
      stdio: ["ignore", "inherit", "inherit"],
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), CHILD_TIMEOUT_MS)
    const failed = (error: string): CaseRunResult => ({
      case: benchCase.name,
      group: benchCase.group,
      description: benchCase.description,
      ...(size === undefined ? {} : { size: { value: size, unit: benchCase.sizeUnit ?? "items" } }),
      durationMs: performance.now() - started,
      peakRssBytes: 0,
      peakHeapUsedBytes: 0,
      figures: [],
      error,
    })
    child.on("error", (err) => {
      clearTimeout(timer)
      resolve(failed(`could not start the case process: ${err.message}`))
    })
    child.on("exit", (code, signal) => {
      clearTimeout(timer)
      if (!existsSync(resultFile)) {
        resolve(failed(`the case process exited with ${signal ?? code} before writing its result`))
        return
      }
      resolve(JSON.parse(readFileSync(resultFile, "utf8")) as CaseRunResult)
    })
  })

const writeAtomically = (file: string, content: string) => {
  writeFileSync(`${file}.tmp`, content)
  renameSync(`${file}.tmp`, file)
}

const updateDocs = (markdown: string) => {
  if (!existsSync(DOCS_FILE)) return
  const docs = readFileSync(DOCS_FILE, "utf8")
  const start = docs.indexOf(DOCS_START)
  const end = docs.indexOf(DOCS_END)
  if (start < 0 || end < start) {
    console.error(`docs/benchmarks.md has no ${DOCS_START} … ${DOCS_END} section; not updated`)
    return
  }
  writeAtomically(DOCS_FILE, `${docs.slice(0, start + DOCS_START.length)}\n${markdown}${docs.slice(end)}`)
}

const main = async (): Promise<number> => {
  let options: RunOptions
  try {
    options = parseOptions(process.argv.slice(2), process.env)
  } catch (error) {
    if (error instanceof UsageError && error.exitCode === 0) {
      console.log(error.message)
      return 0
    }
    console.error(error instanceof Error ? error.message : String(error))
    return 2
  }
  if (options.reportOnly) return writeReports(options, readResults(options))
  const cases = CASES.filter(
    (c) => options.filters.length === 0 || options.filters.some((f) => c.name.includes(f)),
  )
  if (cases.length === 0) {
    console.error(
      `no case matches ${options.filters.join(", ")}; cases: ${CASES.map((c) => c.name).join(", ")}`,
    )
    return 2
  }
  const startedAt = new Date()
  const started = performance.now()
  const machine = machineInfo()
  console.error(
    `rewind bench (${options.mode}, seed ${options.seed}) on ${machine.cpuModel}, ${machine.cores} cores, Node ${machine.node}, ${machine.git}`,
  )

  const runRoot = mkdtempSync(join(tmpdir(), "rewind-bench-"))
  const workspaceRoot = options.cacheDir ?? join(runRoot, "workspaces")
  const bundle = await bundleCaseRunner()
  const cleanUp = () => {
    rmSync(runRoot, { recursive: true, force: true })
    bundle.remove()
  }
  const onSignal = () => {
    cleanUp()
    process.exit(130)
  }
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)

  const runs: Array<CaseRunResult> = []
  try {
    for (const benchCase of cases) {
      const sizes = benchCase.sizes?.(SIZES[options.mode], options.mode) ?? [undefined]
      for (const size of sizes) {
        const result = await runChild(benchCase, size, options, runRoot, workspaceRoot, bundle.file)
        runs.push(result)
        const label = `${benchCase.name}${size === undefined ? "" : `@${size}`}`
        if (result.error === undefined)
          console.error(`✓ ${label}: ${result.figures.length} figures in ${formatMs(result.durationMs)}`)
        else console.error(`✗ ${label} failed: ${result.error}`)
      }
    }
  } finally {
    cleanUp()
    process.removeListener("SIGINT", onSignal)
    process.removeListener("SIGTERM", onSignal)
  }

  const figures = runs.flatMap((r) => r.figures.map((f) => ({ ...f, runPeakRssBytes: r.peakRssBytes })))
  const summaries = runs.map(({ figures: f, ...rest }) => ({ ...rest, figureCount: f.length }))
  if (options.merge) {
    const previous = readResults(options)
    if (previous.mode !== options.mode || previous.seed !== options.seed) {
      console.error(`${jsonFile(options)} is a ${previous.mode} run with seed ${previous.seed}: not merged`)
      return 2
    }
    const merged = mergeResults(previous, summaries, figures, {
      startedAt: startedAt.toISOString(),
      durationMs: performance.now() - started,
    })
    writeAtomically(jsonFile(options), `${JSON.stringify(merged, null, 2)}\n`)
    return writeReports(options, merged)
  }
  const results: BenchResults = {
    schemaVersion: RESULTS_SCHEMA_VERSION,
    mode: options.mode,
    seed: options.seed,
    startedAt: startedAt.toISOString(),
    durationMs: performance.now() - started,
    machine,
    sizes: SIZES[options.mode],
    budget: BUDGETS[options.mode],
    runs: summaries,
    figures,
    curves: buildCurves(figures),
  }
  mkdirSync(options.outDir, { recursive: true })
  writeAtomically(jsonFile(options), `${JSON.stringify(results, null, 2)}\n`)
  return writeReports(options, results)
}

const jsonFile = (options: RunOptions) => join(options.outDir, `${options.outName}.json`)

const readResults = (options: RunOptions): BenchResults => {
  const results = JSON.parse(readFileSync(jsonFile(options), "utf8")) as BenchResults
  if (results.schemaVersion !== RESULTS_SCHEMA_VERSION) {
    throw new Error(
      `${jsonFile(options)} has results schema ${results.schemaVersion}, not ${RESULTS_SCHEMA_VERSION}`,
    )
  }
  return results
}

/** Writes the Markdown report (and the docs section) from the results; the exit code of the run. */
const writeReports = (options: RunOptions, results: BenchResults): number => {
  const body = renderMarkdown(results)
  const mdFile = join(options.outDir, `${options.outName}.md`)
  writeAtomically(mdFile, `# Rewind benchmark results (${results.mode})\n\n${body}`)
  if (options.updateDocs && results.mode === "full") updateDocs(body)
  console.error(`wrote ${mdFile} and ${jsonFile(options)} (${formatMs(results.durationMs)})`)
  return results.runs.some((r) => r.error !== undefined) ? 1 : 0
}

process.exitCode = await main()
