/**
 * The contract between the harness and a benchmark module: what a case is (`BenchCase`), what it
 * is given (`BenchContext`), what it measures with (`Sampler`) and what it reports (`Figure`).
 * docs/benchmarks.md ("How to add a benchmark") walks through it.
 */
import type { ShadowGit } from "../baselines/shadowGit.js"
import type { BenchWorkspace } from "../workspace/benchWorkspace.js"
import type { ShapeWorkspace } from "../workspace/shapeWorkspace.js"
import type { Stats } from "./stats.js"

export type Mode = "quick" | "full"

/** Sizes used by the built-in cases; other cases may use them or choose their own. */
export interface SizePreset {
  /** Workspace sizes (number of files) for the workspace-size curves. */
  readonly files: ReadonlyArray<number>
  /** Session lengths (number of messages) for the conversation curves. */
  readonly messages: ReadonlyArray<number>
  /** Numbers of changed files for the change-size curves, measured on `changeCurveFiles`. */
  readonly changes: ReadonlyArray<number>
  readonly changeCurveFiles: number
  /** Files edited before each incremental snapshot or restore. */
  readonly editsPerRound: number
  /** Conversation rewinds in a synthetic session. */
  readonly rewinds: number
}

/** How much time a measurement may take. See `measure.ts` for how rounds are chosen. */
export interface Budget {
  /** Rounds when one iteration is short (each round runs every sampler once, in rotating order). */
  readonly rounds: number
  /** At least this many rounds, whatever an iteration costs. */
  readonly minRounds: number
  /** Measured time per sampler per round (tinybench's `time`); slow iterations run once per round. */
  readonly roundTimeMs: number
  /** Total measured time per sampler that rounds of slow iterations are fitted into. */
  readonly sampleBudgetMs: number
  /**
   * The first (calibration) iteration counts as a sample when it took at least this long; shorter
   * ones are a warm-up. 0 counts it always (quick mode, where only the plumbing matters).
   */
  readonly keepCalibrationMs: number
  /**
   * Work whose calibration iteration took at least this long is run only once (that iteration is its
   * one sample, so no spread is reported): repeating a 100,000-file git snapshot is not affordable.
   */
  readonly singleRunAboveMs: number
}

/** Something to time. `in-process` runs through tinybench; `process` times spawned processes. */
export type Sampler = InProcessSampler | ProcessSampler

interface SamplerHooks {
  /** Untimed, before each timed iteration (e.g. mutate files, copy a state). */
  readonly beforeEach?: () => void | Promise<void>
  /** Untimed, after each timed iteration (e.g. verify a restore, revert a change). */
  readonly afterEach?: () => void | Promise<void>
}

export interface InProcessSampler extends SamplerHooks {
  readonly kind: "in-process"
  readonly label: string
  /** The timed work. Return a promise only if the work is asynchronous. */
  readonly fn: () => unknown
}

export interface ProcessProbe {
  /** True on the first (calibration) iteration: run processes under /usr/bin/time to read their peak RSS. */
  readonly measureMemory: boolean
}

export interface ProcessResult {
  /** Wall time of the spawned processes, spawn to exit, summed (ms). */
  readonly ms: number
  /** Largest peak RSS among the processes (bytes), when measured. */
  readonly peakRssBytes?: number
}

export interface ProcessSampler extends SamplerHooks {
  readonly kind: "process"
  readonly label: string
  /** Spawns the processes to time and reports their wall time; see `timeProcess`. */
  readonly run: (probe: ProcessProbe) => ProcessResult | Promise<ProcessResult>
}

export type Growth = "change" | "whole" | "constant"

export interface FigureSize {
  readonly value: number
  /** e.g. "files", "messages", "changed files". */
  readonly unit: string
  /**
   * What the size measures: the whole (workspace files, session length; the default) or the change
   * (files changed since the last snapshot). It decides how the report words the scale curve.
   */
  readonly axis?: "whole" | "change"
}

export interface MeasuredSide {
  readonly label: string
  readonly stats: Stats
  /** Largest peak RSS of the spawned processes, for process samplers (bytes). */
  readonly processPeakRssBytes?: number
}

/** One row of the report. */
export interface Figure {
  /** `comparison`: a subject against its baseline; `limit`: a physical limit; `size`: bytes on disk. */
  readonly kind: "comparison" | "limit" | "size"
  readonly case: string
  readonly group: string
  /** The figure's name without its size; figures of one series at several sizes form a scale curve. */
  readonly series: string
  readonly size?: FigureSize
  /** Unit of the subject's, baseline's and limit's statistics. */
  readonly unit: "ms" | "bytes"
  readonly subject: MeasuredSide
  /** The baseline measured in the same rounds; `ratio` is subject / baseline, one value per round. */
  readonly baseline?: MeasuredSide & { readonly ratio: Stats }
  /** The physical limit measured in the same rounds; `percentOfLimit` = limit median / subject median. */
  readonly limit?: MeasuredSide & { readonly ratio: Stats; readonly percentOfLimit: number }
  /** Bytes the subject processes per iteration, for throughput. */
  readonly bytes?: number
  /** Items (events, say) the subject and the baseline each process per iteration: a throughput column. */
  readonly items?: ItemCount
  readonly target?: { readonly description: string; readonly maxMedianMs: number; readonly met: boolean }
  /** A target on the ratio against the baseline (and on the subject's process peak RSS); see `RatioTarget`. */
  readonly ratioTarget?: RatioTarget & {
    /** Median ratio at most `maxRatio` and, when `maxProcessRssBytes` is set, peak RSS at most it. */
    readonly met: boolean
  }
  /** What the cost is expected to grow with; the report sets it beside the measured curve. */
  readonly expectedGrowth?: Growth
  readonly notes: ReadonlyArray<string>
  /** Peak RSS of the benchmark process that measured it (set by the harness). */
  readonly runPeakRssBytes?: number
}

/**
 * A target stated against the baseline rather than in milliseconds (e.g. "at most 0.05× git"), so it
 * holds on any machine; optionally also a ceiling on the subject's process peak RSS (process
 * samplers only: it is read on their calibration run).
 */
export interface RatioTarget {
  readonly description: string
  readonly maxRatio: number
  readonly maxProcessRssBytes?: number
}

export interface ItemCount {
  readonly count: number
  /** Plural, e.g. "events". */
  readonly unit: string
}

export interface CompareSpec {
  readonly series: string
  /** Defaults to the run's size in the case's unit. */
  readonly size?: FigureSize
  readonly subject: Sampler
  readonly baseline?: Sampler
  readonly limit?: Sampler
  /**
   * Also report the limit's measurement as a row of the physical-limits table, under this name (so a
   * slow limit need not be measured twice); `bytes` is then its volume too.
   */
  readonly limitSeries?: string
  readonly bytes?: number
  /** Items the subject and the baseline each process per iteration; the report shows items per second. */
  readonly items?: ItemCount
  readonly target?: { readonly description: string; readonly maxMedianMs: number }
  /** A target stated as a ratio against the baseline measured in the same rounds (needs a baseline). */
  readonly ratioTarget?: RatioTarget
  readonly expectedGrowth?: Growth
  readonly notes?: ReadonlyArray<string>
  readonly budget?: Partial<Budget>
}

export interface LimitSpec {
  readonly series: string
  readonly size?: FigureSize
  readonly sampler: Sampler
  readonly bytes?: number
  readonly notes?: ReadonlyArray<string>
}

export interface BenchContext {
  readonly mode: Mode
  readonly seed: number
  readonly sizes: SizePreset
  readonly budget: Budget
  /** The size this run is for, when the case declares `sizes`. */
  readonly size: number | undefined
  /** A fresh directory under the run's temp root, removed when the run ends. */
  readonly tempDir: (label: string) => string
  /**
   * The shared generated workspace with `fileCount` files (generated once per benchmark run and
   * reused by every case). Mutate it only through its helpers: whatever a case changes is put back
   * when the case ends.
   */
  readonly workspace: (fileCount: number) => BenchWorkspace
  /**
   * A real repository's shape (`bench/corpora/<shape>.shape.tsv.gz`), `copies` times side by side,
   * materialised once per benchmark run and shared like the generated workspaces (put back when
   * the case ends). Its `files` are the ones git's ignore rules keep.
   */
  readonly shapeWorkspace: (shape: string, copies: number) => BenchWorkspace & ShapeWorkspace
  /** A new shadow git repository (git dir and index in a temp folder) over a work tree. */
  readonly shadowGit: (workTree: string) => ShadowGit
  /** Times subject, baseline and limit in interleaved rounds and returns the figure (also recorded). */
  readonly compare: (spec: CompareSpec) => Promise<Figure>
  /** Times several physical limits in interleaved rounds; returns their figures (also recorded). */
  readonly limits: (specs: ReadonlyArray<LimitSpec>) => Promise<ReadonlyArray<Figure>>
  /** Records a figure built by the case itself (e.g. a size on disk). */
  readonly record: (figure: Omit<Figure, "case" | "group">) => Figure
  /** Samples process memory now (the harness also samples between rounds). */
  readonly sampleMemory: () => void
  readonly log: (message: string) => void
}

export interface BenchCase {
  /** Unique, kebab-case; used by `--case` and in the results. */
  readonly name: string
  /** Report section, e.g. "workspace", "conversation", "store". */
  readonly group: string
  readonly description: string
  /**
   * The sizes to run at; each size runs in its own child process (so its peak memory is its own)
   * with `ctx.size` set. Omit to run once with `ctx.size` undefined.
   */
  readonly sizes?: (sizes: SizePreset, mode: Mode) => ReadonlyArray<number>
  /** The unit of `ctx.size` ("files", "messages"...). */
  readonly sizeUnit?: string
  /** Runs the measurements through `ctx.compare`/`ctx.limits`/`ctx.record`; their figures are reported. */
  readonly run: (ctx: BenchContext) => Promise<void>
}
