/**
 * Run options: quick or full mode (sizes and time budgets), the seed, which cases to run and where
 * results go. Read from the command line (`npm run bench -- --quick`) and BENCH_* variables.
 */
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import type { Budget, Mode, SizePreset } from "./types.js"

export const BENCH_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..")
export const REPO_DIR = resolve(BENCH_DIR, "..")

export const SIZES: Record<Mode, SizePreset> = {
  full: {
    files: [1_000, 10_000, 100_000],
    messages: [1_000, 10_000, 100_000],
    changes: [1, 10, 100, 1_000],
    changeCurveFiles: 10_000,
    editsPerRound: 10,
    rewinds: 100,
  },
  quick: {
    files: [100, 300],
    messages: [500, 2_000],
    changes: [1, 10, 100],
    changeCurveFiles: 300,
    editsPerRound: 10,
    rewinds: 100,
  },
}

export const BUDGETS: Record<Mode, Budget> = {
  full: {
    rounds: 5,
    minRounds: 2,
    roundTimeMs: 300,
    sampleBudgetMs: 6_000,
    keepCalibrationMs: 1_000,
    singleRunAboveMs: 20_000,
  },
  quick: {
    rounds: 2,
    minRounds: 2,
    roundTimeMs: 10,
    sampleBudgetMs: 50,
    keepCalibrationMs: 0,
    singleRunAboveMs: 20_000,
  },
}

export const DEFAULT_SEED = 20_251_130

/**
 * Workspace sizes of the cases that drive the engine itself on a generated tree (checkpoints,
 * snapshots): quick mode checks the plumbing at the smallest size; a full run takes 1k and 10k
 * files, and 100k with `BENCH_WORKSPACE_100K=1` (its shadow-git baselines alone take the better
 * part of an hour here). `BENCH_SNAPSHOT_100K=1`, the earlier name, still works.
 */
export const engineWorkspaceSizes = (sizes: SizePreset, mode: Mode, env = process.env): Array<number> =>
  mode === "quick"
    ? sizes.files.slice(0, 1)
    : env.BENCH_WORKSPACE_100K === "1" || env.BENCH_SNAPSHOT_100K === "1"
      ? [...sizes.files]
      : sizes.files.filter((n) => n <= 10_000)

/**
 * The slice of a repository shape that quick mode builds: the shape cases' quick run checks their
 * plumbing, and the whole babel tree (27.7k files, a restore of it by git and by Rewind) was most
 * of the test suite's time. The slice keeps the root and two nested `.gitignore` files, so the
 * ignore rules are still exercised; a full run builds the whole shape.
 */
export const QUICK_SHAPE_SLICE: ReadonlyArray<string> = [
  ".gitignore",
  "packages/babel-core/",
  "packages/babel-preset-env/",
  "packages/babel-helper-check-duplicate-nodes/",
]

export interface RunOptions {
  readonly mode: Mode
  readonly seed: number
  /** Only cases whose name contains one of these (all when empty). */
  readonly filters: ReadonlyArray<string>
  readonly outDir: string
  /** Results file name without extension: `latest` for full runs, `quick` for quick ones. */
  readonly outName: string
  /** Rewrite the results section of docs/benchmarks.md (full runs into the default directory). */
  readonly updateDocs: boolean
  /** Keep generated workspaces here across runs instead of in the run's temp folder. */
  readonly cacheDir: string | undefined
  /** Re-render the reports from the JSON results without measuring. */
  readonly reportOnly: boolean
  /**
   * Merge into the existing results: the cases run now replace their earlier figures, the rest are
   * kept (re-running one case after a change without repeating an hour of others).
   */
  readonly merge: boolean
}

export const USAGE = `usage: npm run bench -- [--quick] [--case <name>]... [--merge] [--seed <n>] [--out <dir>] [--no-docs] [--report-only]
  --quick        small sizes and budgets (also BENCH_QUICK=1); results go to <out>/quick.{md,json}
  --case <name>  run only cases whose name contains <name> (repeatable; also BENCH_CASES=a,b)
  --seed <n>     generator seed (also BENCH_SEED; default ${DEFAULT_SEED})
  --out <dir>    results directory (also BENCH_OUT; default bench/results)
  --no-docs      do not rewrite the results section of docs/benchmarks.md
  --report-only  measure nothing: re-render the Markdown (and docs) from the JSON results
  --merge        with --case: replace those cases' figures in the existing results, keep the rest
  BENCH_CACHE_DIR=<dir> keeps generated workspaces between runs`

/** Thrown for a bad command line (exit 2) or --help (exit 0, usage on stdout). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message)
  }
}

export const parseOptions = (argv: ReadonlyArray<string>, env: NodeJS.ProcessEnv): RunOptions => {
  let quick = env.BENCH_QUICK === "1" || env.BENCH_QUICK === "true"
  let seed = env.BENCH_SEED === undefined ? DEFAULT_SEED : Number(env.BENCH_SEED)
  const filters = (env.BENCH_CASES ?? "").split(",").filter((s) => s.length > 0)
  let outDir = env.BENCH_OUT === undefined ? undefined : resolve(env.BENCH_OUT)
  let docs = true
  let reportOnly = false
  let merge = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const value = () => {
      const v = argv[++i]
      if (v === undefined) throw new UsageError(`${arg} needs a value\n${USAGE}`, 2)
      return v
    }
    if (arg === "--quick") quick = true
    else if (arg === "--full") quick = false
    else if (arg === "--case") filters.push(value())
    else if (arg === "--seed") seed = Number(value())
    else if (arg === "--out") outDir = resolve(value())
    else if (arg === "--no-docs") docs = false
    else if (arg === "--report-only") reportOnly = true
    else if (arg === "--merge") merge = true
    else if (arg === "--help" || arg === "-h") throw new UsageError(USAGE, 0)
    else throw new UsageError(`unknown argument ${arg}\n${USAGE}`, 2)
  }
  if (merge && filters.length === 0) throw new UsageError(`--merge needs at least one --case\n${USAGE}`, 2)
  if (!Number.isSafeInteger(seed) || seed < 0)
    throw new UsageError("the seed must be a non-negative integer", 2)
  const defaultOut = join(BENCH_DIR, "results")
  const out = outDir ?? defaultOut
  return {
    mode: quick ? "quick" : "full",
    seed,
    filters,
    outDir: out,
    outName: quick ? "quick" : "latest",
    updateDocs: docs && !quick && (filters.length === 0 || merge) && out === defaultOut,
    cacheDir: env.BENCH_CACHE_DIR === undefined ? undefined : resolve(env.BENCH_CACHE_DIR),
    reportOnly,
    merge,
  }
}
